package verify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Verifier types of Config.Type.
const (
	TypeExecution = "execution" // compile and run tests; compiler and flags as configured (default g++)
	TypeCompile   = "compile"   // compile only (CompileVerifier)
	TypeGCC       = "gcc"       // NewGCCExecutionVerifier preset
	TypeClang     = "clang"     // NewClangExecutionVerifier preset
	TypeMinGW     = "mingw"     // NewMinGWExecutionVerifier preset (compile-only, Windows target)
)

// Config describes a verifier in a configuration file; see ParseConfig for
// the file format. Zero values mean the defaults of the chosen type. Build
// turns it into a Verifier.
type Config struct {
	// Type is execution (default), compile, gcc, clang or mingw.
	Type string `yaml:"type" json:"type"`
	// Compiler overrides the type's compiler (g++, clang++,
	// x86_64-w64-mingw32-g++), by name or absolute path.
	Compiler string `yaml:"compiler" json:"compiler"`
	// Flags, when given (even empty), replace the type's compiler flags.
	Flags []string `yaml:"flags" json:"flags"`
	// MatchMode is exact (default), contains, regex or numeric.
	MatchMode MatchMode `yaml:"match_mode" json:"match_mode"`
	// NumericAbsTol and NumericRelTol are match_mode numeric's tolerances:
	// two numbers agree within max(abs, rel × the larger magnitude);
	// integers must be equal (defaults 1e-6 and 1e-6; halo-forge: absolute
	// 1e-6 only).
	NumericAbsTol float64 `yaml:"numeric_abs_tol" json:"numeric_abs_tol"`
	NumericRelTol float64 `yaml:"numeric_rel_tol" json:"numeric_rel_tol"`
	// PartialCredit selects 0.5 + 0.5 × pass rate (true, default) or 1.0 only
	// when all tests pass, else 0.5 (false).
	PartialCredit *bool `yaml:"partial_credit" json:"partial_credit"`
	// CompileTimeout limits compilation (default 30 s). A duration such as
	// "30s" or a number of seconds.
	CompileTimeout Duration `yaml:"compile_timeout" json:"compile_timeout"`
	// RunTimeout limits each test run (default 5 s).
	RunTimeout Duration `yaml:"run_timeout" json:"run_timeout"`
	// MaxWorkers is how many tests of one verification run at once (default 1).
	MaxWorkers int `yaml:"max_workers" json:"max_workers"`
	// BinaryCacheDir, when set, caches compiled binaries there.
	BinaryCacheDir string `yaml:"binary_cache_dir" json:"binary_cache_dir"`
	// TestCases are the verifier's own tests (used when a prompt has none).
	TestCases []TestCaseConfig `yaml:"test_cases" json:"test_cases"`
}

// TestCaseConfig is one test case in a Config.
type TestCaseConfig struct {
	Name     string   `yaml:"name" json:"name"`         // "" gives test_<n>
	Input    string   `yaml:"input" json:"input"`       // stdin
	Expected string   `yaml:"expected" json:"expected"` // expected stdout
	Timeout  Duration `yaml:"timeout" json:"timeout"`   // 0: the verifier's run timeout
}

// Duration is a time.Duration read from a string ("30s", "1m30s") or a
// number of seconds (30, 2.5).
type Duration time.Duration

func parseDuration(s string) (Duration, error) {
	s = strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > math.MaxInt64/float64(time.Second) {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
		return Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q: want e.g. \"30s\" or a number of seconds", s)
	}
	return Duration(d), nil
}

// UnmarshalYAML implements yaml.Unmarshaler.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: a duration must be a string or a number", n.Line)
	}
	v, err := parseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*d = v
	return nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if string(b) == "null" {
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
	} else {
		s = string(b)
	}
	v, err := parseDuration(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// MarshalYAML implements yaml.Marshaler ("30s").
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// MarshalJSON implements json.Marshaler ("30s").
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// configFile is the top level of a configuration file.
type configFile struct {
	Verifier *Config `yaml:"verifier" json:"verifier"`
}

// ParseConfig reads a verifier configuration, YAML or JSON (a document
// starting with "{" is read as JSON), and builds the verifier:
//
//	verifier:
//	  type: execution        # execution | compile | gcc | clang | mingw
//	  compiler: g++
//	  flags: [-O2, -Wall]
//	  match_mode: exact      # exact | contains | regex | numeric
//	  numeric_abs_tol: 1e-6  # numeric: max(abs, rel × magnitude); integers exact
//	  numeric_rel_tol: 1e-6
//	  partial_credit: true
//	  compile_timeout: 30s   # or a number of seconds
//	  run_timeout: 5
//	  max_workers: 8
//	  binary_cache_dir: /tmp/x
//	  test_cases:
//	    - {name: square, input: "5\n", expected: "25", timeout: 2}
//
// Every key is optional except verifier; an unknown key is an error naming
// it, and so is an invalid value (see Config.Build).
func ParseConfig(data []byte) (Verifier, error) {
	c, err := decodeConfig(data)
	if err != nil {
		return nil, err
	}
	return c.Build()
}

// LoadConfig reads the file at path with ParseConfig. The format is chosen by
// the extension (.json, .yaml, .yml) or else by the content. Errors name the
// path.
func LoadConfig(path string) (Verifier, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("verify: config: %w", err)
	}
	var c Config
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		c, err = decodeJSON(data)
	case ".yaml", ".yml":
		c, err = decodeYAML(data)
	default:
		c, err = decodeConfig(data)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	v, err := c.Build()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

func decodeConfig(data []byte) (Config, error) {
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		return decodeJSON(data)
	}
	return decodeYAML(data)
}

func decodeJSON(data []byte) (Config, error) {
	if err := preCheck(data, "JSON"); err != nil {
		return Config{}, err
	}
	var f configFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return Config{}, errors.New("verify: JSON config: empty document (want a top-level key \"verifier\")")
		}
		return Config{}, fmt.Errorf("verify: JSON config: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Config{}, errors.New("verify: JSON config: unexpected data after the object")
	}
	if f.Verifier == nil {
		return Config{}, errors.New(`verify: JSON config: missing top-level key "verifier"`)
	}
	return *f.Verifier, nil
}

func decodeYAML(data []byte) (Config, error) {
	if err := preCheck(data, "YAML"); err != nil {
		return Config{}, err
	}
	var f configFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return Config{}, errors.New("verify: YAML config: empty document (want a top-level key \"verifier\")")
		}
		return Config{}, fmt.Errorf("verify: YAML config: %w", err)
	}
	if f.Verifier == nil {
		return Config{}, errors.New(`verify: YAML config: missing top-level key "verifier"`)
	}
	return *f.Verifier, nil
}

// preCheck reports values that the decoders would misreport or accept
// silently, naming the field: durations that do not parse, and a fractional
// max_workers (yaml.v3 truncates 1.5 into an int field). JSON is YAML, so
// one check serves both; a document that does not parse is left to the
// decoder.
func preCheck(data []byte, format string) error {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil {
		return nil
	}
	if n := findKey(&doc, "verifier", "max_workers"); n != nil && n.Kind == yaml.ScalarNode && n.ShortTag() == "!!float" {
		return fmt.Errorf("verify: %s config: line %d: max_workers: %s is not an integer", format, n.Line, n.Value)
	}
	checkDur := func(field string, n *yaml.Node) error {
		if n == nil || n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
			return nil
		}
		if _, err := parseDuration(n.Value); err != nil {
			return fmt.Errorf("verify: %s config: line %d: %s: %w", format, n.Line, field, err)
		}
		return nil
	}
	for _, k := range []string{"compile_timeout", "run_timeout"} {
		if err := checkDur(k, findKey(&doc, "verifier", k)); err != nil {
			return err
		}
	}
	if tcs := findKey(&doc, "verifier", "test_cases"); tcs != nil && tcs.Kind == yaml.SequenceNode {
		for i, tc := range tcs.Content {
			if err := checkDur(fmt.Sprintf("test_cases[%d].timeout", i), findKey(tc, "timeout")); err != nil {
				return err
			}
		}
	}
	return nil
}

// findKey follows mapping keys from a document node.
func findKey(n *yaml.Node, keys ...string) *yaml.Node {
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	for _, k := range keys {
		if n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				next = n.Content[i+1]
			}
		}
		if next == nil {
			return nil
		}
		n = next
	}
	return n
}

// Build validates c and constructs its verifier: an *ExecutionVerifier for
// types execution, gcc, clang and mingw, a CompileVerifier for compile.
// Errors name the offending field and value: an unknown type or match_mode,
// a negative timeout or max_workers, or (for type compile) a field that only
// applies to test runs.
func (c Config) Build() (Verifier, error) {
	typ := c.Type
	if typ == "" {
		typ = TypeExecution
	}
	tests, err := c.check(typ)
	if err != nil {
		return nil, err
	}
	if typ == TypeCompile {
		if unused := c.unusedByCompile(); len(unused) > 0 {
			return nil, fmt.Errorf("verify: config: %s: not used by type compile (it only compiles; use type execution or mingw)", strings.Join(unused, ", "))
		}
		return CompileVerifier{Compiler: c.Compiler, Flags: c.Flags, CompileTimeout: time.Duration(c.CompileTimeout)}, nil
	}
	opts := c.options()
	switch typ {
	case TypeClang:
		return NewClangExecutionVerifier(tests, opts...), nil
	case TypeMinGW:
		return NewMinGWExecutionVerifier(append([]Option{WithTestCases(tests)}, opts...)...), nil
	default: // execution, gcc
		return NewGCCExecutionVerifier(tests, opts...), nil
	}
}

// check validates the configuration of a verifier of type typ and returns
// its test cases; an error names the field.
func (c Config) check(typ string) ([]TestCase, error) {
	switch typ {
	case TypeExecution, TypeCompile, TypeGCC, TypeClang, TypeMinGW:
	default:
		return nil, fmt.Errorf("verify: config: type: unknown verifier type %q (want execution, compile, gcc, clang or mingw)", c.Type)
	}
	switch c.MatchMode {
	case "", MatchExact, MatchContains, MatchRegex, MatchNumeric:
	default:
		return nil, fmt.Errorf("verify: config: match_mode: unknown match mode %q (want exact, contains, regex or numeric)", c.MatchMode)
	}
	if c.CompileTimeout < 0 {
		return nil, fmt.Errorf("verify: config: compile_timeout: negative duration %v", time.Duration(c.CompileTimeout))
	}
	if c.RunTimeout < 0 {
		return nil, fmt.Errorf("verify: config: run_timeout: negative duration %v", time.Duration(c.RunTimeout))
	}
	if c.MaxWorkers < 0 {
		return nil, fmt.Errorf("verify: config: max_workers: negative value %d", c.MaxWorkers)
	}
	if c.NumericAbsTol < 0 || c.NumericRelTol < 0 {
		return nil, fmt.Errorf("verify: config: numeric_abs_tol %g, numeric_rel_tol %g: tolerances cannot be negative", c.NumericAbsTol, c.NumericRelTol)
	}
	tests := make([]TestCase, len(c.TestCases))
	for i, t := range c.TestCases {
		if t.Timeout < 0 {
			return nil, fmt.Errorf("verify: config: test_cases[%d].timeout: negative duration %v", i, time.Duration(t.Timeout))
		}
		if c.MatchMode == MatchRegex {
			if err := CheckPattern(t.Expected); err != nil {
				return nil, fmt.Errorf("verify: config: test_cases[%d].expected: invalid pattern for match_mode regex: %v", i, err)
			}
		}
		tests[i] = TestCase{Name: t.Name, Input: t.Input, Expected: t.Expected, Timeout: time.Duration(t.Timeout)}
	}
	return tests, nil
}

// unusedByCompile lists the fields set that a compile-only verifier would
// ignore.
func (c Config) unusedByCompile() []string {
	var unused []string
	if c.MatchMode != "" {
		unused = append(unused, "match_mode")
	}
	if c.NumericAbsTol != 0 || c.NumericRelTol != 0 {
		unused = append(unused, "numeric_abs_tol/numeric_rel_tol")
	}
	if c.PartialCredit != nil {
		unused = append(unused, "partial_credit")
	}
	if c.RunTimeout != 0 {
		unused = append(unused, "run_timeout")
	}
	if c.MaxWorkers != 0 {
		unused = append(unused, "max_workers")
	}
	if c.BinaryCacheDir != "" {
		unused = append(unused, "binary_cache_dir")
	}
	if len(c.TestCases) > 0 {
		unused = append(unused, "test_cases")
	}
	return unused
}

// options are the ExecutionVerifier options of the fields set.
func (c Config) options() []Option {
	var opts []Option
	if c.Compiler != "" {
		opts = append(opts, WithCompiler(c.Compiler))
	}
	if c.Flags != nil {
		opts = append(opts, WithFlags(append([]string(nil), c.Flags...)...))
	}
	if c.MatchMode != "" {
		opts = append(opts, WithMatch(c.MatchMode))
	}
	if c.NumericAbsTol != 0 || c.NumericRelTol != 0 {
		opts = append(opts, WithNumericTolerance(c.NumericAbsTol, c.NumericRelTol))
	}
	if c.PartialCredit != nil {
		opts = append(opts, WithPartialCredit(*c.PartialCredit))
	}
	if c.CompileTimeout > 0 {
		opts = append(opts, WithCompileTimeout(time.Duration(c.CompileTimeout)))
	}
	if c.RunTimeout > 0 {
		opts = append(opts, WithRunTimeout(time.Duration(c.RunTimeout)))
	}
	if c.MaxWorkers > 0 {
		opts = append(opts, WithMaxWorkers(c.MaxWorkers))
	}
	if c.BinaryCacheDir != "" {
		opts = append(opts, WithCacheDir(c.BinaryCacheDir))
	}
	return opts
}
