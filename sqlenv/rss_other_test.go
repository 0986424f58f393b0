//go:build !linux

package sqlenv

// peakRSS is not measured here: the memory bound is checked on Linux.
func peakRSS() int64 { return 0 }
