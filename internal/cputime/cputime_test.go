package cputime

import (
	"runtime"
	"testing"
	"time"
)

// TestProcessCountsWork: spinning adds CPU time (20 ms are reached within
// 10 s even on a busy machine), and never more than the wall time times
// the CPUs.
func TestProcessCountsWork(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("CPU time is not measured here")
	}
	start, wallStart := Process(), time.Now()
	deadline := wallStart.Add(10 * time.Second)
	for Process()-start < 20*time.Millisecond {
		if time.Now().After(deadline) {
			t.Fatalf("CPU time grew by %v in 10 s of spinning", Process()-start)
		}
	}
	used, wall := Process()-start, time.Since(wallStart)
	if limit := wall*time.Duration(runtime.NumCPU()) + 10*time.Millisecond; used > limit {
		t.Errorf("%v of CPU time in %v of wall time on %d CPUs", used, wall, runtime.NumCPU())
	}
}
