package verify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// TestCase is one stdin/stdout check. Timeout, when non-zero, overrides the
// verifier's RunTimeout for this test.
type TestCase struct {
	Name     string        // reported in TestResult; "" gives test_<n>
	Input    string        // the program's stdin
	Expected string        // the expected stdout, compared under the verifier's MatchMode
	Timeout  time.Duration // 0: the verifier's RunTimeout
}

// TestResult is the per-test record stored in Result.Metadata["tests"].
type TestResult struct {
	Name            string  `json:"name"`                       // the TestCase's name
	Passed          bool    `json:"passed"`                     // exit 0, no signal or timeout, output not truncated, stdout matched
	Actual          string  `json:"actual"`                     // stdout (first 64 KiB)
	Expected        string  `json:"expected"`                   // the TestCase's Expected
	ExitCode        int     `json:"exit_code"`                  // -1 when killed by a signal
	Signal          string  `json:"signal,omitempty"`           // the killing signal, if any
	Stderr          string  `json:"stderr,omitempty"`           // stderr (first 4 KiB) or the sandbox's error
	TimedOut        bool    `json:"timed_out,omitempty"`        // the run hit its timeout
	StdoutTruncated bool    `json:"stdout_truncated,omitempty"` // stdout exceeded the output cap
	Seconds         float64 `json:"seconds"`                    // wall-clock time of the run
}

const (
	stderrKeep = 4 << 10
	actualKeep = 64 << 10
)

// ExecutionVerifier compiles C/C++ code and runs it against TestCases,
// confined in bubblewrap jails (see Verify and jail.go; README "Code
// sandbox").
//
// Reward ladder: compile failure 0.0; compiled with no tests 0.3 if the
// compiler wrote anything to stderr (warnings) else 0.5, success = compiled;
// with tests 0.5 + 0.5 × pass_rate (PartialCredit) or 1.0 if all pass else
// 0.5, success = pass_rate ≥ 0.5. A test passes only if the program exits 0,
// is not killed by a signal or timeout, its output is not truncated, and its
// stdout matches under Match.
type ExecutionVerifier struct {
	Compiler       string        // name (looked up in system dirs, then $PATH) or absolute path
	Flags          []string      // compiler flags; the source and "-o binary" are appended
	TestCases      []TestCase    // the verifier's own tests; see also VerifyWithPrompt
	CompileTimeout time.Duration // default 30 s
	RunTimeout     time.Duration // default 5 s
	MaxWorkers     int           // concurrent test runs within one Verify; default 1
	Match          MatchMode     // stdout comparison; "" means exact
	// NumericAbsTol and NumericRelTol are MatchNumeric's tolerances (0: the
	// defaults, DefaultNumericAbsTol and DefaultNumericRelTol).
	NumericAbsTol, NumericRelTol float64
	PartialCredit                bool   // reward 0.5 + 0.5 × pass rate (else 1.0 only when all pass)
	CacheDir                     string // if set, compiled binaries are cached by hash of compiler, flags and code
	CompileOnly                  bool   // skip tests (compile-only ladder)
	// CompileOnlyReason, when CompileOnly, is recorded in
	// Metadata["tests_skipped"] (e.g. that the target is Windows).
	CompileOnlyReason string
	RunLimits         *Limits // default RunLimits
	CompileLimits     *Limits // default CompileLimits
	// NoSandbox disables isolation; see WithoutSandbox.
	NoSandbox bool
}

// SetTestCases replaces the verifier's own test cases (the slice is copied).
// It is not safe to call while Verify or VerifyWithPrompt may run on the same
// verifier in another goroutine; for tests that differ per call use
// VerifyWithPrompt or WithTests, which leave the verifier unchanged.
func (v *ExecutionVerifier) SetTestCases(tests []TestCase) {
	v.TestCases = append([]TestCase(nil), tests...)
}

// WithTests returns a shallow copy of v that uses tests (copied) instead of
// v's own test cases; v itself is not modified, so this is safe while other
// goroutines use v.
func (v *ExecutionVerifier) WithTests(tests []TestCase) *ExecutionVerifier {
	c := *v
	c.TestCases = append([]TestCase(nil), tests...)
	return &c
}

// capStr is b as text, cut to n bytes with a marker when longer.
func capStr(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…[truncated]"
	}
	return string(b)
}

// copyFile copies src to dst. The write descriptor of dst exists only while
// syscall.ForkLock is read-locked, so no process forked concurrently by
// another goroutine inherits it: an inherited write descriptor makes a later
// exec of dst fail with ETXTBSY ("text file busy") until that child execs
// (golang.org/issue/22315). Without this, cached binaries failed to start
// under concurrent verification.
func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Verify implements Verifier.
//
// Everything of one verification lives in a directory of its own under a
// private root that no sandbox uid can enter (privateRoot): the source, the
// binary (compiled there or copied from the cache) and the compiler's
// output. The compiler runs in a jail of its own that sees the source
// read-only and a fresh output directory; the binary is read back from it
// without following links and copied to the root's side. Tests run in one
// jail per worker, kept between verifications (jailpool.go), which gets the
// binary by descriptor; see jail.go. Where bubblewrap is missing or cannot
// work, as root each command runs in the per-command Sandbox instead, and
// the result's sandbox_notices say what is not isolated; without root
// Verify refuses (the error says how to get a jail). WithoutSandbox is the
// explicit opt-in to run without isolation; its results say so
// (Metadata["sandbox"] false, and a notice).
func (v *ExecutionVerifier) Verify(ctx context.Context, code string) Result {
	md := map[string]any{"stage": "setup"}
	res := Result{Metadata: md}
	var notices []string
	if v.NoSandbox {
		md["sandbox"] = false
		notices = append(notices, "not isolated (WithoutSandbox): the program ran with the caller's uid, files and processes in reach")
	}
	defer func() {
		if len(notices) > 0 {
			md["sandbox_notices"] = dedup(notices)
		}
	}()
	comp := resolveCompiler(v.Compiler)
	if comp == "" {
		res.Error = missingCompiler(v.Compiler)
		res.Details = res.Error
		return res
	}
	ws, err := newWorkspace(v.NoSandbox)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	defer ws.remove()
	notices = append(notices, ws.notices...)
	md["stage"] = "compile"
	warnings, nts, err := v.binary(ctx, ws, comp, ExtractCode(code), md)
	notices = append(notices, nts...)
	if err != nil {
		res.Error, res.Details = err.Error(), "compilation failed"
		return res
	}
	md["warnings"] = capStr([]byte(warnings), stderrKeep)
	if v.CompileOnly || len(v.TestCases) == 0 {
		return v.compiledResult(res, warnings)
	}
	md["stage"] = "test"
	results, nts := v.runTests(ctx, ws)
	notices = append(notices, nts...)
	return v.testedResult(res, results)
}

// binary puts the program's binary in the workspace: copied from the
// cache, or compiled (and then cached). It returns the compiler's
// warnings, and an error starting "compilation failed" when there is no
// binary.
func (v *ExecutionVerifier) binary(ctx context.Context, ws *workspace, comp, src string, md map[string]any) (warnings string, notices []string, err error) {
	srcPath, bin := filepath.Join(ws.dir, "main.cpp"), filepath.Join(ws.dir, "prog")
	if err := os.WriteFile(srcPath, []byte(src), 0o644); err != nil {
		return "", nil, err
	}
	var key string
	if v.CacheDir != "" {
		h := sha256.New()
		fmt.Fprintf(h, "%s\x00%s\x00%s", comp, strings.Join(v.Flags, "\x00"), src)
		key = filepath.Join(v.CacheDir, hex.EncodeToString(h.Sum(nil)))
	}
	if key != "" {
		if w, err := os.ReadFile(key + ".warn"); err == nil && copyFile(key, bin, 0o755) == nil {
			md["cached"], md["binary"] = true, key
			return string(w), nil, nil
		}
	}
	md["cached"] = false
	ct := v.CompileTimeout
	if ct <= 0 {
		ct = 30 * time.Second
	}
	lim := CompileLimits
	if v.CompileLimits != nil {
		lim = *v.CompileLimits
	}
	lim.CPUTime = ct
	r := ws.compile(ctx, comp, v.Flags, lim, ct)
	r.Stderr = ownDiagnostics(r.Stderr)
	if !r.OK() {
		msg := capStr(r.Stderr, stderrKeep)
		switch {
		case r.Err != nil:
			msg = r.Err.Error()
		case r.TimedOut:
			msg = fmt.Sprintf("compile timed out after %v", ct)
		}
		return "", r.Notices, errors.New("compilation failed: " + msg)
	}
	warnings = strings.TrimSpace(string(r.Stderr))
	if key != "" && os.MkdirAll(v.CacheDir, 0o700) == nil {
		// Both files appear whole (rename), the warnings first: a reader
		// that finds them may copy the binary; one that finds only the
		// warnings fails to copy and compiles. Only the caller reads the
		// cache (and copies a binary into a workspace): its files are no
		// sandbox uid's to read.
		tmp := fmt.Sprintf("%s.tmp%d", key, time.Now().UnixNano())
		if os.WriteFile(tmp+".warn", []byte(warnings), 0o600) == nil && os.Rename(tmp+".warn", key+".warn") == nil &&
			copyFile(bin, tmp, 0o700) == nil {
			_ = os.Rename(tmp, key)
		}
		_ = os.Remove(tmp)
		_ = os.Remove(tmp + ".warn")
		md["binary"] = key // the cached binary; the workspace's copy is deleted on return
	}
	return warnings, r.Notices, nil
}

// compiledResult is the compile-only ladder: 0.5 when the program compiled
// cleanly, 0.3 with warnings.
func (v *ExecutionVerifier) compiledResult(res Result, warnings string) Result {
	md := res.Metadata
	md["stage"] = "compiled"
	tail := "no tests"
	if v.CompileOnly {
		reason := v.CompileOnlyReason
		if reason == "" {
			reason = "compile-only verifier"
		}
		md["tests_skipped"] = reason
		md["tests_configured"] = len(v.TestCases)
		tail = "tests skipped: " + reason
	}
	res.Success = true
	if warnings != "" {
		res.Reward, res.Details = 0.3, "compiled with warnings; "+tail
	} else {
		res.Reward, res.Details = 0.5, "compiled cleanly; "+tail
	}
	return res
}

// runTests runs the test cases, MaxWorkers at a time. Each worker runs its
// share one after another in a runner of its own: a jail set up once (or,
// in the fallback, a fresh directory per test), with a uid of its own as
// root.
func (v *ExecutionVerifier) runTests(ctx context.Context, ws *workspace) ([]TestResult, []string) {
	results := make([]TestResult, len(v.TestCases))
	next := make(chan int, len(v.TestCases))
	for i := range v.TestCases {
		next <- i
	}
	close(next)
	var mu sync.Mutex
	var notices []string
	var wg sync.WaitGroup
	for range min(max(v.MaxWorkers, 1), len(v.TestCases)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr, err := ws.testRunner(ctx, v.runLimits())
			if err != nil {
				for i := range next {
					results[i] = TestResult{Name: testName(i, v.TestCases[i]), Expected: v.TestCases[i].Expected, ExitCode: -1, Stderr: "sandbox error: " + err.Error()}
				}
				return
			}
			defer tr.close()
			for i := range next {
				t, nts := v.runTest(ctx, tr, i, v.TestCases[i])
				results[i] = t
				mu.Lock()
				notices = append(notices, nts...)
				mu.Unlock()
			}
			mu.Lock()
			notices = append(notices, tr.notices()...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return results, notices
}

// testedResult is the ladder with tests: 0.5 + 0.5 × pass rate
// (PartialCredit), else 1.0 when all pass and 0.5 otherwise.
func (v *ExecutionVerifier) testedResult(res Result, results []TestResult) Result {
	md := res.Metadata
	passed := 0
	for _, t := range results {
		if t.Passed {
			passed++
		}
	}
	total := len(results)
	rate := float64(passed) / float64(total)
	md["tests"], md["passed"], md["failed"], md["total"], md["pass_rate"] = results, passed, total-passed, total, rate
	md["stage"] = "done"
	switch {
	case v.PartialCredit:
		res.Reward = 0.5 + 0.5*rate
	case passed == total:
		res.Reward = 1.0
	default:
		res.Reward = 0.5
	}
	res.Success = rate >= 0.5
	res.Details = fmt.Sprintf("%d/%d tests passed", passed, total)
	if passed < total {
		res.Error = fmt.Sprintf("%d test(s) failed", total-passed)
	}
	return res
}

func dedup(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// runLimits are the limits of test runs.
func (v *ExecutionVerifier) runLimits() Limits {
	if v.RunLimits != nil {
		return *v.RunLimits
	}
	return RunLimits
}

func testName(i int, tc TestCase) string {
	if tc.Name != "" {
		return tc.Name
	}
	return fmt.Sprintf("test_%d", i+1)
}

// runTest runs test i with runner tr.
func (v *ExecutionVerifier) runTest(ctx context.Context, tr testRunner, i int, tc TestCase) (TestResult, []string) {
	to := tc.Timeout
	if to <= 0 {
		to = v.RunTimeout
	}
	if to <= 0 {
		to = 5 * time.Second
	}
	lim := v.runLimits()
	lim.CPUTime = to
	r := tr.run(ctx, []byte(tc.Input), to, lim)
	t := TestResult{
		Name: testName(i, tc), Expected: tc.Expected, Actual: capStr(r.Stdout, actualKeep), ExitCode: r.ExitCode,
		Signal: r.Signal, Stderr: capStr(r.Stderr, stderrKeep), TimedOut: r.TimedOut,
		StdoutTruncated: r.StdoutTruncated, Seconds: r.Duration.Seconds(),
	}
	if r.Err != nil {
		t.Stderr = "sandbox error: " + r.Err.Error()
	}
	t.Passed = r.OK() && !r.StdoutTruncated && Matcher{Mode: v.Match, AbsTol: v.NumericAbsTol, RelTol: v.NumericRelTol}.Match(string(r.Stdout), tc.Expected)
	return t, r.Notices
}

// diagnosticAt is the first line of a compiler diagnostic: file:line[:col]:
// error|warning|note|fatal error.
var diagnosticAt = regexp.MustCompile(`^(\S+?):\d+(?::\d+)?: (?:fatal error|error|warning|note)\b`)

// ownDiagnostics keeps the compiler's diagnostics located in the program
// (main.cpp) or in system headers (/usr), and replaces each one located in
// another file with a line that names the file but shows none of it: a
// program that includes a host file ("/etc/passwd") must not read it back
// through the compiler's messages, which quote the offending lines (the
// fallback sandbox lets the compiler read the host's world-readable files).
func ownDiagnostics(out []byte) []byte {
	var b strings.Builder
	hiding := false
	for _, line := range strings.SplitAfter(string(out), "\n") {
		if m := diagnosticAt.FindStringSubmatch(line); m != nil {
			file := m[1]
			hiding = file != "main.cpp" && !strings.HasSuffix(file, "/main.cpp") && !strings.HasPrefix(file, "/usr/")
			if hiding {
				b.WriteString(file + ": a diagnostic in a file other than the program (not shown)\n")
				continue
			}
		} else if strings.HasPrefix(line, "In file included from") || strings.HasPrefix(line, "                 from ") {
			hiding = false
		}
		if !hiding {
			b.WriteString(line)
		}
	}
	return []byte(b.String())
}
