//go:build !unix

package main

// processCPUSeconds is not measured on this system: the bench stage reports 0.
func processCPUSeconds() float64 { return 0 }
