package verify

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The compilers a verifier can use, their constructors and how they are found.

// newExec is a verifier with the defaults (-O2 -Wall -std=c++17, 30 s to
// compile, 5 s per test, one worker, exact match, partial credit), then opts.
func newExec(compiler string, tests []TestCase, opts []Option) *ExecutionVerifier {
	v := &ExecutionVerifier{
		Compiler: compiler, Flags: []string{"-O2", "-Wall", "-std=c++17"}, TestCases: tests,
		CompileTimeout: 30 * time.Second, RunTimeout: 5 * time.Second, MaxWorkers: 1,
		Match: MatchExact, PartialCredit: true,
	}
	for _, o := range opts {
		o(v)
	}
	return v
}

// NewGCCExecutionVerifier uses g++ -O2 -Wall -std=c++17.
func NewGCCExecutionVerifier(tests []TestCase, opts ...Option) *ExecutionVerifier {
	return newExec("g++", tests, opts)
}

// NewClangExecutionVerifier uses clang++ -O2 -Wall -std=c++17. If clang++ is
// not installed, Verify returns an error Result saying so.
func NewClangExecutionVerifier(tests []TestCase, opts ...Option) *ExecutionVerifier {
	return newExec("clang++", tests, opts)
}

// MinGWCompiler is the cross compiler of NewMinGWExecutionVerifier; Debian and
// Ubuntu install it with the package g++-mingw-w64-x86-64.
const MinGWCompiler = "x86_64-w64-mingw32-g++"

// NewMinGWExecutionVerifier cross-compiles for Windows with
// x86_64-w64-mingw32-g++ -O2 -Wall -static. The result cannot run here, so it
// is compile-only: test cases are skipped (Metadata["tests_skipped"] says
// why) and the reward is 0.5 when the code compiles cleanly, 0.3 with
// warnings and 0 when it does not compile. When the cross compiler is not
// installed Verify returns reward 0 with an Error naming the binary and the
// Debian package that provides it.
func NewMinGWExecutionVerifier(opts ...Option) *ExecutionVerifier {
	windows := func(v *ExecutionVerifier) {
		v.Flags = []string{"-O2", "-Wall", "-static"}
		v.CompileOnly = true
		v.CompileOnlyReason = "target is Windows (MinGW cross-compilation): the binary cannot run here, tests are skipped"
	}
	return newExec(MinGWCompiler, nil, append([]Option{windows}, opts...))
}

// compilerPackages names the Debian/Ubuntu package that provides a compiler.
var compilerPackages = map[string]string{
	"g++":                    "g++",
	"gcc":                    "gcc",
	"clang++":                "clang",
	"clang":                  "clang",
	MinGWCompiler:            "g++-mingw-w64-x86-64",
	"x86_64-w64-mingw32-gcc": "gcc-mingw-w64-x86-64",
}

// missingCompiler says that the compiler c is not installed and which
// package provides it.
func missingCompiler(c string) string {
	msg := fmt.Sprintf("compiler %q is not installed", c)
	if pkg := compilerPackages[filepath.Base(c)]; pkg != "" {
		msg += fmt.Sprintf(" (Debian/Ubuntu package: %s; apt-get install %s)", pkg, pkg)
	}
	return msg
}

// CompileVerifier only compiles: 0.0 on failure, 0.3 with warnings, 0.5 clean.
type CompileVerifier struct {
	Compiler       string        // default g++
	Flags          []string      // nil: -O2 -Wall -std=c++17
	CompileTimeout time.Duration // 0: 30 s
}

// Verify implements Verifier.
func (c CompileVerifier) Verify(ctx context.Context, code string) Result {
	v := newExec(c.Compiler, nil, nil)
	if c.Compiler == "" {
		v.Compiler = "g++"
	}
	if c.Flags != nil {
		v.Flags = c.Flags
	}
	if c.CompileTimeout > 0 {
		v.CompileTimeout = c.CompileTimeout
	}
	v.CompileOnly = true
	return v.Verify(ctx, code)
}

// resolveCompiler returns the compiler's absolute path: c itself when
// absolute, else found in the system directories, then $PATH; "" when
// there is none.
func resolveCompiler(c string) string {
	if filepath.IsAbs(c) {
		if st, err := os.Stat(c); err == nil && !st.IsDir() {
			return c
		}
		return ""
	}
	if p := findTool(c); p != "" {
		return p
	}
	if strings.ContainsRune(c, '/') {
		return ""
	}
	if p, err := exec.LookPath(c); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
	}
	return ""
}
