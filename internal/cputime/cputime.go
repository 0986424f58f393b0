// Package cputime measures the CPU time a process uses, for benchmarks that
// report it beside wall time.
package cputime

import (
	"testing"
	"time"
)

// Report adds to b the CPU time per iteration since start, a value of
// Process ("cpu-ms/op"), and the cores it kept busy on average ("cores":
// CPU time / wall time).
func Report(b *testing.B, start time.Duration) {
	used := Process() - start
	b.ReportMetric(float64(used.Milliseconds())/float64(b.N), "cpu-ms/op")
	if wall := b.Elapsed(); wall > 0 {
		b.ReportMetric(float64(used)/float64(wall), "cores")
	}
}
