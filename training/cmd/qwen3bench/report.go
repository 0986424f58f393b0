package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"time"

	"github.com/gosqlenv/gosqlenv/training"
	"github.com/gosqlenv/gosqlenv/training/qwen3"
)

// The JSON report the command prints, and the statistics it holds.

// Report is the JSON the command prints.
type Report struct {
	Mode        string         `json:"mode"`
	Backend     string         `json:"backend"`
	Device      string         `json:"device"`
	Shape       string         `json:"shape"`
	DType       string         `json:"dtype"`
	Config      qwen3.Config   `json:"config"`
	Params      int64          `json:"params"`
	ParamBytes  int64          `json:"param_bytes"`
	SetupSecs   float64        `json:"setup_seconds"`
	GoMaxProcs  int            `json:"gomaxprocs"`
	SIMDBuild   bool           `json:"simd_build"`
	Results     []any          `json:"results"`
	Notes       []string       `json:"notes,omitempty"`
	Error       string         `json:"error,omitempty"`
	Extra       map[string]any `json:"extra,omitempty"`
	TotalSecs   float64        `json:"total_seconds"`
	startedAt   time.Time
	maxDuration time.Duration
	out         string // -out, rewritten after every result (a killed run keeps what it measured)
}

// add appends a result and, with -out, rewrites the file.
func (r *Report) add(res any) {
	r.Results = append(r.Results, res)
	if r.out != "" {
		if err := writeReport(r.out, r); err != nil {
			fmt.Fprintln(os.Stderr, "qwen3bench:", err)
		}
	}
}

// outOfTime says whether -max_seconds has passed.
func (r *Report) outOfTime() bool {
	return r.maxDuration > 0 && time.Since(r.startedAt) > r.maxDuration
}

func writeReport(path string, r *Report) error {
	r.TotalSecs = time.Since(r.startedAt).Seconds()
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if path == "" {
		_, err = os.Stdout.Write(b)
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// finiteMetrics turns metrics into JSON values (NaN and ±Inf become null).
func finiteMetrics(m training.Metrics) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			out[k] = nil
		} else {
			out[k] = v
		}
	}
	return out
}
