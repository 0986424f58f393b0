package training

import (
	"os"
	"runtime/debug"
	"testing"
)

// testMemoryLimit is the Go heap's soft limit while the package's tests run
// (unless GOMEMLIMIT sets one): they share one process, and without a
// limit the collector let it grow to 21 GB of RSS on a 24 GB machine (the
// heap the models of one test leave is garbage by the next, but the
// default GOGC doubles the heap before collecting it).
const testMemoryLimit = 6 << 30

func TestMain(m *testing.M) {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(testMemoryLimit)
	}
	os.Exit(m.Run())
}
