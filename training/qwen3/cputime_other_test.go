//go:build !unix

package qwen3

import "time"

// cpuTime is not measured on this system: cpu-ms/op reads 0.
func cpuTime() time.Duration { return 0 }
