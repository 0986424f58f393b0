// Command evaltable prints the evaluation summaries of several training
// runs (their output directories' eval_summary.json, as `train ... all`
// writes them) as one Markdown table: each policy's greedy / sampled
// success per run and split, GRPO − SFT with its standard error, and the
// mean gain over the runs (report.RunsTable). BENCHMARKS.md's tables of
// seeds are its output:
//
//	go run ./training/cmd/evaltable /tmp/final-s1 /tmp/final-s2 /tmp/final-s3
//
// Each run is named by its directory's last element.
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gosqlenv/gosqlenv/training"
	"github.com/gosqlenv/gosqlenv/training/report"
)

func main() {
	out, err := table(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "evaltable:", err)
		os.Exit(1)
	}
	fmt.Print(out)
}

// table reads each directory's summary and renders them.
func table(dirs []string) (string, error) {
	if len(dirs) == 0 {
		return "", errors.New("name the output directories of the runs to compare (usage: evaltable DIR...)")
	}
	var runs []report.Run
	for _, dir := range dirs {
		s, err := training.ReadEvalSummary(dir)
		if err != nil {
			return "", err
		}
		if len(s) == 0 {
			return "", fmt.Errorf("%s: no %s (not a training run's output directory, or not evaluated yet)", dir, training.EvalSummaryFile)
		}
		runs = append(runs, report.Run{Name: filepath.Base(filepath.Clean(dir)), Summary: s})
	}
	return report.RunsTable(runs), nil
}
