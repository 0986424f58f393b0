package verify

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

const fullYAML = `# verifier configuration
verifier:
  type: execution
  compiler: g++
  flags: [-O2, -Wall]
  match_mode: numeric
  partial_credit: false
  compile_timeout: 45s
  run_timeout: 2.5
  max_workers: 8
  binary_cache_dir: /tmp/x
  test_cases:
    - {name: square, input: "5\n", expected: "25", timeout: 2}
    - name: big
      input: |
        1000
      expected: "1000000"
      timeout: 1500ms
`

const fullJSON = `{
	"verifier": {
		"type": "execution",
		"compiler": "g++",
		"flags": ["-O2", "-Wall"],
		"match_mode": "numeric",
		"partial_credit": false,
		"compile_timeout": "45s",
		"run_timeout": 2.5,
		"max_workers": 8,
		"binary_cache_dir": "/tmp/x",
		"test_cases": [
			{"name": "square", "input": "5\n", "expected": "25", "timeout": 2},
			{"name": "big", "input": "1000\n", "expected": "1000000", "timeout": "1500ms"}
		]
	}
}`

func checkFull(t *testing.T, v Verifier, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	ev, ok := v.(*ExecutionVerifier)
	if !ok {
		t.Fatalf("got %T", v)
	}
	want := []TestCase{
		{Name: "square", Input: "5\n", Expected: "25", Timeout: 2 * time.Second},
		{Name: "big", Input: "1000\n", Expected: "1000000", Timeout: 1500 * time.Millisecond},
	}
	if ev.Compiler != "g++" || !reflect.DeepEqual(ev.Flags, []string{"-O2", "-Wall"}) || ev.Match != MatchNumeric ||
		ev.PartialCredit || ev.CompileTimeout != 45*time.Second || ev.RunTimeout != 2500*time.Millisecond ||
		ev.MaxWorkers != 8 || ev.CacheDir != "/tmp/x" || !reflect.DeepEqual(ev.TestCases, want) || ev.CompileOnly {
		t.Errorf("config not applied: %+v", ev)
	}
}

func TestParseConfigYAML(t *testing.T) {
	v, err := ParseConfig([]byte(fullYAML))
	checkFull(t, v, err)
}

func TestParseConfigJSON(t *testing.T) {
	v, err := ParseConfig([]byte(fullJSON))
	checkFull(t, v, err)
	// The same JSON through the YAML parser (a .yaml file holding JSON).
	c, err := decodeYAML([]byte(strings.ReplaceAll(fullJSON, "\t", "  ")))
	if err != nil {
		t.Fatal(err)
	}
	v, err = c.Build()
	checkFull(t, v, err)
}

func TestParseConfigDefaultsAndTypes(t *testing.T) {
	v, err := ParseConfig([]byte("verifier: {}"))
	if err != nil {
		t.Fatal(err)
	}
	ev := v.(*ExecutionVerifier)
	def := NewGCCExecutionVerifier(nil)
	if ev.Compiler != "g++" || !reflect.DeepEqual(ev.Flags, def.Flags) || !ev.PartialCredit || ev.Match != MatchExact ||
		ev.CompileTimeout != 30*time.Second || ev.RunTimeout != 5*time.Second || ev.MaxWorkers != 1 {
		t.Errorf("defaults: %+v", ev)
	}

	v, err = ParseConfig([]byte("verifier: {type: clang, run_timeout: 1m}"))
	if err != nil || v.(*ExecutionVerifier).Compiler != "clang++" || v.(*ExecutionVerifier).RunTimeout != time.Minute {
		t.Errorf("clang: %+v %v", v, err)
	}
	v, err = ParseConfig([]byte("verifier:\n  type: mingw\n  test_cases: [{input: '1', expected: '1'}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if ev := v.(*ExecutionVerifier); ev.Compiler != MinGWCompiler || !ev.CompileOnly || len(ev.TestCases) != 1 ||
		!reflect.DeepEqual(ev.Flags, []string{"-O2", "-Wall", "-static"}) {
		t.Errorf("mingw: %+v", ev)
	}
	v, err = ParseConfig([]byte("verifier: {type: compile, flags: [-std=c++20], compile_timeout: 10}"))
	if err != nil {
		t.Fatal(err)
	}
	if cv, ok := v.(CompileVerifier); !ok || cv.CompileTimeout != 10*time.Second || cv.Flags[0] != "-std=c++20" {
		t.Errorf("compile: %#v", v)
	}
	// Config built in code.
	pc := true
	v, err = Config{Type: TypeGCC, PartialCredit: &pc, TestCases: []TestCaseConfig{{Input: "1", Expected: "1"}}}.Build()
	if err != nil || len(v.(*ExecutionVerifier).TestCases) != 1 {
		t.Errorf("Build: %v %v", v, err)
	}
}

func TestParseConfigErrors(t *testing.T) {
	cases := []struct {
		name, doc string
		want      []string // substrings of the error
	}{
		{"unknown key", "verifier:\n  compiler: g++\n  match: exact\n", []string{"match"}},
		{"unknown top-level key", "verifier: {}\nverifiers: {}\n", []string{"verifiers"}},
		{"unknown test case key", "verifier:\n  test_cases:\n    - {input: '1', output: '1'}\n", []string{"output"}},
		{"unknown JSON key", `{"verifier": {"compiler": "g++", "flagz": []}}`, []string{"flagz"}},
		{"bad match_mode", "verifier: {match_mode: fuzzy}", []string{"match_mode", "fuzzy"}},
		{"bad type", "verifier: {type: python}", []string{"type", "python"}},
		{"negative compile_timeout", "verifier: {compile_timeout: -5s}", []string{"compile_timeout", "-5s"}},
		{"negative run_timeout", "verifier: {run_timeout: -1}", []string{"run_timeout", "-1s"}},
		{"negative test timeout", "verifier: {test_cases: [{input: '1', expected: '1', timeout: -2}]}", []string{"test_cases[0].timeout", "-2s"}},
		{"negative max_workers", "verifier: {max_workers: -3}", []string{"max_workers", "-3"}},
		{"fractional max_workers", "verifier: {max_workers: 1.5}", []string{"max_workers", "1.5"}},
		{"bad duration", "verifier: {run_timeout: soon}", []string{"run_timeout", "soon"}},
		{"bad test duration", "verifier: {test_cases: [{input: '1', expected: '1', timeout: 2x}]}", []string{"test_cases[0].timeout", "2x"}},
		{"bad JSON duration", `{"verifier": {"run_timeout": "soon"}}`, []string{"run_timeout", "soon"}},
		{"fractional JSON max_workers", `{"verifier": {"max_workers": 2.5}}`, []string{"max_workers", "2.5"}},
		{"compile with tests", "verifier: {type: compile, test_cases: [{input: '1', expected: '1'}]}", []string{"test_cases", "compile"}},
		{"missing verifier", "# nothing\n", []string{"verifier"}},
		{"missing verifier JSON", `{}`, []string{"verifier"}},
		{"trailing JSON", `{"verifier": {}} {}`, []string{"after"}},
		{"not YAML", "verifier: [unclosed", []string{"YAML"}},
	}
	for _, c := range cases {
		_, err := ParseConfig([]byte(c.doc))
		t.Logf("%s: %v", c.name, err)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %q", c.name, err, w)
			}
		}
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	v, err := LoadConfig(write("v.yaml", fullYAML))
	checkFull(t, v, err)
	v, err = LoadConfig(write("v.json", fullJSON))
	checkFull(t, v, err)
	v, err = LoadConfig(write("verifier.conf", fullJSON)) // by content
	checkFull(t, v, err)

	for _, p := range []string{
		filepath.Join(dir, "missing.yaml"),
		write("bad.yml", "verifier: {match_mode: fuzzy}"),
		write("bad.json", `{"verifier": {"typo": 1}}`),
		write("yaml.json", fullYAML), // YAML in a .json file: the extension decides
	} {
		if _, err := LoadConfig(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("LoadConfig(%s): error %v does not name the path", p, err)
		}
	}
}
