package training

import (
	"time"
)

func now() time.Time { return time.Now() }

func since(t time.Time) float64 { return time.Since(t).Seconds() }
