// Package verify scores model-written programs by compiling and running them
// against test cases inside a resource-limited sandbox (see Sandbox).
package verify

import (
	"context"
	"regexp"
	"strings"
	"sync"
)

// Result is the outcome of verifying one candidate.
type Result struct {
	Success  bool           // the candidate counts as solved (see the verifier's ladder)
	Reward   float64        // 0 to 1
	Details  string         // one-line summary, e.g. "3/4 tests passed"
	Error    string         // what went wrong ("" when nothing did)
	Metadata map[string]any // verifier-specific record (stage, tests, pass_rate, …)
}

// Verifier scores one piece of code.
type Verifier interface {
	Verify(ctx context.Context, code string) Result
}

// VerifyBatch verifies codes with at most maxWorkers concurrent calls
// (maxWorkers <= 0 means 1). Results are in the order of codes. To check each
// sample against the tests of its own prompt use VerifyBatchWithPrompts.
func VerifyBatch(ctx context.Context, v Verifier, codes []string, maxWorkers int) []Result {
	return parallel(len(codes), maxWorkers, func(i int) Result { return v.Verify(ctx, codes[i]) })
}

// parallel runs f(0..n-1) on at most maxWorkers goroutines and returns the
// results in index order.
func parallel(n, maxWorkers int, f func(i int) Result) []Result {
	if maxWorkers <= 0 {
		maxWorkers = 1
	}
	out := make([]Result, n)
	idx := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < maxWorkers && w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range idx {
				out[i] = f(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		idx <- i
	}
	close(idx)
	wg.Wait()
	return out
}

var (
	fenceRe = regexp.MustCompile("(?s)```[^\\n`]*\\n(.*?)```")
	codeRe  = regexp.MustCompile(`(?s)<code>(.*?)</code>`)
)

// ExtractCode returns the first fenced block (``` with or without a language
// tag), else the first <code>…</code> span, else the whole text, trimmed.
func ExtractCode(modelOutput string) string {
	if m := fenceRe.FindStringSubmatch(modelOutput); m != nil {
		return strings.TrimSpace(m[1])
	}
	if m := codeRe.FindStringSubmatch(modelOutput); m != nil {
		return strings.TrimSpace(m[1])
	}
	return strings.TrimSpace(modelOutput)
}
