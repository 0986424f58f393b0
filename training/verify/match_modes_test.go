package verify

import (
	"strings"
	"testing"
)

// TestNumericMatch: integers must be equal; other numbers agree within
// max(absolute, relative × magnitude), by default 1e-6 each — the cases of
// the red-team report included.
func TestNumericMatch(t *testing.T) {
	for _, c := range []struct {
		actual, expected string
		want             bool
	}{
		{"1000001", "1000000", false},
		{"100000099", "100000000", false},
		{"123456789012345678901", "123456789012345678902", false}, // beyond float64's integers
		{"42", "42", true},
		{"+7", "7", true},
		{"0.0123456789", "0.012346", true},
		{"0.0000004", "0", true},
		{"3.14159265", "3.141593", true},
		{"3.15", "3.14", false},
		{"1e6", "1000000.5", true},
		{"2.5 7", "2.5000001 7", true},
		{"2.5 7", "2.5 8", false},
		{"1 2", "1 2 3", false},
	} {
		if got := Match(MatchNumeric, c.actual, c.expected); got != c.want {
			t.Errorf("numeric %q vs %q: %v, want %v", c.actual, c.expected, got, c.want)
		}
	}
	strict := Matcher{Mode: MatchNumeric, AbsTol: 1e-12, RelTol: 1e-12}
	if strict.Match("0.0000004", "0") {
		t.Error("tolerances from the config are not used")
	}
}

// TestRegexMatch: Python's re.match semantics (anchored at the start only)
// and syntax beyond RE2 (look-ahead, back-references).
func TestRegexMatch(t *testing.T) {
	for _, c := range []struct {
		actual, pattern string
		want            bool
	}{
		{"123 apples", `\d+`, true}, // a prefix match, as re.match
		{"apples 123", `\d+`, false},
		{"abcabc", `(abc)\1`, true},
		{"abcabd", `(abc)\1`, false},
		{"price: 42", `price: (?=\d)`, true},
		{"price: x", `price: (?=\d)`, false},
		{"yes\nno", `yes\nno`, true},
	} {
		if got := Match(MatchRegex, c.actual, c.pattern); got != c.want {
			t.Errorf("regex %q on %q: %v, want %v", c.pattern, c.actual, got, c.want)
		}
	}
}

// TestConfigRefusesInvalidPatterns: a regex test case that does not compile
// is an error when the verifier is built, naming the test case.
func TestConfigRefusesInvalidPatterns(t *testing.T) {
	cfg := Config{MatchMode: MatchRegex, TestCases: []TestCaseConfig{{Input: "", Expected: `\d+`}, {Input: "", Expected: `(unclosed`}}}
	if _, err := cfg.Build(); err == nil || !strings.Contains(err.Error(), "test_cases[1].expected") {
		t.Fatalf("invalid pattern: %v", err)
	}
	cfg.TestCases = cfg.TestCases[:1]
	if _, err := cfg.Build(); err != nil {
		t.Fatalf("valid pattern: %v", err)
	}
	if _, err := (Config{NumericAbsTol: -1}).Build(); err == nil || !strings.Contains(err.Error(), "numeric_abs_tol") {
		t.Fatalf("negative tolerance: %v", err)
	}
}
