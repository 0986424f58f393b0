package verify

import "time"

// Functional options of the ExecutionVerifier constructors.

// Option configures an ExecutionVerifier.
type Option func(*ExecutionVerifier)

// WithCompiler sets the compiler: a name looked up in /usr/bin, /bin,
// /usr/sbin, /sbin and then $PATH, or an absolute path.
func WithCompiler(c string) Option { return func(v *ExecutionVerifier) { v.Compiler = c } }

// WithFlags replaces the compiler flags.
func WithFlags(f ...string) Option { return func(v *ExecutionVerifier) { v.Flags = f } }

// WithTestCases sets the verifier's own test cases (the slice is copied).
func WithTestCases(tests []TestCase) Option {
	return func(v *ExecutionVerifier) { v.TestCases = append([]TestCase(nil), tests...) }
}

// WithMatch sets how stdout is compared with the expected output.
func WithMatch(m MatchMode) Option { return func(v *ExecutionVerifier) { v.Match = m } }

// WithNumericTolerance sets MatchNumeric's absolute and relative tolerances.
func WithNumericTolerance(abs, rel float64) Option {
	return func(v *ExecutionVerifier) { v.NumericAbsTol, v.NumericRelTol = abs, rel }
}

// WithPartialCredit selects the reward with tests: 0.5 + 0.5 × pass rate
// (true, the default) or 1.0 only when every test passes, else 0.5 (false).
func WithPartialCredit(b bool) Option { return func(v *ExecutionVerifier) { v.PartialCredit = b } }

// WithRunTimeout sets the wall-clock and CPU limit of one test run (default
// 5 s); a TestCase's own Timeout takes precedence.
func WithRunTimeout(d time.Duration) Option { return func(v *ExecutionVerifier) { v.RunTimeout = d } }

// WithCompileTimeout sets the wall-clock and CPU limit of the compilation
// (default 30 s). A compilation that runs out of time scores 0 like any
// compile failure.
func WithCompileTimeout(d time.Duration) Option {
	return func(v *ExecutionVerifier) { v.CompileTimeout = d }
}

// WithMaxWorkers sets how many test cases of one Verify run concurrently
// (default 1). Parallelism across candidates is VerifyBatch's maxWorkers.
func WithMaxWorkers(n int) Option { return func(v *ExecutionVerifier) { v.MaxWorkers = n } }

// WithCacheDir caches compiled binaries in d, keyed by the hash of compiler,
// flags and code, so that a candidate seen before is not compiled again.
// d is created mode 0700 and its files are the caller's only (0600/0700):
// candidates never see the cache, they get a copy of their own binary.
func WithCacheDir(d string) Option { return func(v *ExecutionVerifier) { v.CacheDir = d } }

// WithRunLimits replaces the sandbox limits of test runs (default RunLimits);
// CPUTime is always set from the run timeout.
func WithRunLimits(l Limits) Option { return func(v *ExecutionVerifier) { v.RunLimits = &l } }

// WithoutSandbox turns the sandbox's isolation off for compilation and test
// runs: no prlimit resource limits, no privilege drop, no namespaces. Runs keep
// the same timeouts, the clean environment, the process-group kill and the
// output caps. It is meant for trusted code and for measuring the sandbox's
// cost only; never use it on model-written code (as root the program would
// run as root). Metadata["sandbox"] records false.
func WithoutSandbox() Option { return func(v *ExecutionVerifier) { v.NoSandbox = true } }
