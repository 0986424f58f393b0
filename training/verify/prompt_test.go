package verify

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
)

type io2 struct{ in, out string }

func TestExtractTestCases(t *testing.T) {
	cases := []struct {
		name   string
		prompt string
		want   []io2
	}{
		{"one line", "Write a C++ program that reads an integer and prints its square. Input: 5 Output: 25",
			[]io2{{"5\n", "25"}}},
		{"one line, comma and period", "Square a number. For example, Input: 7, Output: 49.",
			[]io2{{"7\n", "49"}}},
		{"multi-line values", "Read two integers and print their sum.\n\nInput:\n1 2\nOutput:\n3\n",
			[]io2{{"1 2\n", "3"}}},
		{"several examples with headers and explanations",
			`Given n followed by n integers, print the maximum.

Example 1:
Input:
3
1 5 2
Output:
5
Explanation: 5 is the largest of 1, 5 and 2.

Example 2:
Input:
1
-7
Expected output:
-7

Constraints: 1 <= n <= 100`,
			[]io2{{"3\n1 5 2\n", "5"}, {"1\n-7\n", "-7"}}},
		{"key=value", "Compute x*x. Example: input=5, output=25", []io2{{"5\n", "25"}}},
		{"key=value quoted", `Add two numbers. Example: input="1 2", output="3". Another: input = "10 -4" , output = '6'`,
			[]io2{{"1 2\n", "3"}, {"10 -4\n", "6"}}},
		{"quoted with escapes", `Example: input="2\n3 4", output="7"`, []io2{{"2\n3 4\n", "7"}}},
		{"markdown and fences", "### Task\nReverse each word.\n\n**Example 1**\n\n**Input:**\n```\nhello world\n```\n**Output:**\n```\nolleh dlrow\n```\n\n**Example 2**\n- Input: `abc`\n- Output: `cba`\n",
			[]io2{{"hello world\n", "olleh dlrow"}, {"abc\n", "cba"}}},
		{"sample input/output numbered, multi-line output", "Print the numbers 1..n, one per line.\n\nSample Input 1:\n3\n\nSample Output 1:\n1\n2\n3\n\nSample Input 2:\n1\nSample Output 2:\n1\n",
			[]io2{{"3\n", "1\n2\n3"}, {"1\n", "1"}}},
		{"inline output followed by prose", "Input: 4 Output: 16\nWrite efficient code please.",
			[]io2{{"4\n", "16"}}},
		{"indented block", "Example:\n    Input:\n        2 3\n    Output:\n        5\n", []io2{{"2 3\n", "5"}}},
		{"arrow", "Input: 3 -> Output: 9", []io2{{"3\n", "9"}}},
		{"empty input", "Print Hello.\nInput: (none)\nOutput: Hello", []io2{{"", "Hello"}}},
		{"duplicates dropped", "Input: 2 Output: 4\n\nAgain: Input: 2 Output: 4", []io2{{"2\n", "4"}}},
		{"CRLF", "Input:\r\n5\r\nOutput:\r\n25\r\n", []io2{{"5\n", "25"}}},
		{"format description only", "Write a program.\nInput: two integers a and b separated by a space.\nOutput: print the sum of a and b.", nil},
		{"format description then example", "Input: a single integer n.\nOutput: print n squared.\n\nExample\nInput: 3\nOutput: 9", []io2{{"3\n", "9"}}},
		{"no tests", "Implement quicksort in C++ and explain its complexity. Use std::vector<int> as input.", nil},
		{"input format words without colon", "Input format\nThe first line contains n.\nOutput format\nPrint n.", nil},
		{"empty output dropped", "Input: 5\nOutput:\n\nThe output must end with a newline.", nil},
		{"code comparison is not a label", "if (input == 5) output = 25;", nil},
		{"empty prompt", "", nil},
		{"JSON-like", `Tests: {"input": "5", "output": "25"}`, []io2{{"5\n", "25"}}},
		{"LeetCode style", "Example 1:\n\nInput: s = \"abc\"\nOutput: \"cba\"\n\nExample 2:\nInput: s = \"a\"\nOutput: \"a\"\n",
			[]io2{{"s = \"abc\"\n", "cba"}, {"s = \"a\"\n", "a"}}},
		{"prose mentioning input", "Given the input: an array of numbers. Output: their sum.", nil},
	}
	for _, c := range cases {
		got := ExtractTestCases(c.prompt)
		var g []io2
		for i, tc := range got {
			if tc.Name != fmt.Sprintf("prompt_%d", i+1) {
				t.Errorf("%s: test %d named %q", c.name, i, tc.Name)
			}
			g = append(g, io2{tc.Input, tc.Expected})
		}
		if !reflect.DeepEqual(g, c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.name, g, c.want)
		}
	}
}

// A verifier shared by concurrent VerifyWithPrompt calls must score each
// sample against its own prompt's tests and stay unchanged.
func TestVerifyBatchWithPromptsOwnTests(t *testing.T) {
	needGPP(t)
	// The verifier's own test would fail every program below: a sample scored
	// against it (instead of its prompt's tests) gets 0.5, not 1.
	config := []TestCase{{Name: "config", Input: "1\n", Expected: "never"}}
	v := NewGCCExecutionVerifier(config, WithCacheDir(t.TempDir()))
	progs := map[string]string{
		"square": `#include <iostream>
int main(){ long long x; std::cin >> x; std::cout << x*x << "\n"; }`,
		"double": `#include <iostream>
int main(){ long long x; std::cin >> x; std::cout << 2*x << "\n"; }`,
		"negate": `#include <iostream>
int main(){ long long x; std::cin >> x; std::cout << -x << "\n"; }`,
	}
	prompts := map[string]string{
		"square": "Print the square of n.\nExample 1:\nInput: 3\nOutput: 9\nExample 2:\nInput: 5\nOutput: 25",
		"double": "Print twice n. Example: input=3, output=6",
		"negate": "Negate n.\n\nInput:\n3\nOutput:\n-3\n",
	}
	kinds := []string{"square", "double", "negate"}
	var ps, cs []string
	var want []float64
	for round := 0; round < 2; round++ {
		for _, pk := range kinds {
			for _, ck := range kinds {
				ps, cs = append(ps, prompts[pk]), append(cs, progs[ck])
				if pk == ck {
					want = append(want, 1)
				} else {
					want = append(want, 0.5)
				}
			}
		}
	}
	// Plus one prompt without examples: the verifier's own test is used.
	ps, cs, want = append(ps, "Write a program."), append(cs, progs["square"]), append(want, 0.5)

	var wg sync.WaitGroup
	var batches [2][]Result
	for b := range batches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rs, err := VerifyBatchWithPrompts(context.Background(), v, ps, cs, 4)
			if err != nil {
				t.Error(err)
			}
			batches[b] = rs
		}()
	}
	wg.Wait()
	for _, rs := range batches {
		if len(rs) != len(ps) {
			t.Fatalf("%d results for %d samples", len(rs), len(ps))
		}
		for i, r := range rs {
			src := "prompt"
			if i == len(ps)-1 {
				src = "config"
			}
			if r.Reward != want[i] || r.Metadata["test_source"] != src {
				t.Errorf("sample %d: reward %v source %v, want %v %s (%s; %s)", i, r.Reward, r.Metadata["test_source"], want[i], src, r.Details, r.Error)
			}
		}
	}
	if !reflect.DeepEqual(v.TestCases, config) {
		t.Errorf("shared verifier was modified: %+v", v.TestCases)
	}
	if r := rsTotal(batches[0][0]); r != 2 {
		t.Errorf("square prompt: %d tests, want 2", r)
	}

	if _, err := VerifyBatchWithPrompts(context.Background(), v, ps[:2], cs, 2); err == nil || !strings.Contains(err.Error(), "2 prompts") {
		t.Errorf("length mismatch: err %v", err)
	}
}

func rsTotal(r Result) int { n, _ := r.Metadata["total"].(int); return n }

// A Verifier that is not a PromptVerifier is called with Verify.
type countVerifier struct {
	mu    sync.Mutex
	codes []string
}

func (c *countVerifier) Verify(_ context.Context, code string) Result {
	c.mu.Lock()
	c.codes = append(c.codes, code)
	c.mu.Unlock()
	return Result{Reward: float64(len(code))}
}

func TestVerifyBatchWithPromptsPlainVerifier(t *testing.T) {
	cv := &countVerifier{}
	rs, err := VerifyBatchWithPrompts(context.Background(), cv, []string{"Input: 1 Output: 2", "x", "y"}, []string{"a", "bb", "ccc"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rs {
		if r.Reward != float64(i+1) {
			t.Errorf("result %d out of order: %v", i, r.Reward)
		}
	}
	if len(cv.codes) != 3 {
		t.Errorf("Verify called %d times", len(cv.codes))
	}
}

func TestSetTestCasesAndWithTests(t *testing.T) {
	tests := sqTests(2)
	v := NewGCCExecutionVerifier(nil)
	v.SetTestCases(tests)
	tests[0].Expected = "changed"
	if v.TestCases[0].Expected != "1" {
		t.Errorf("SetTestCases kept the caller's slice")
	}
	c := v.WithTests(sqTests(3))
	if len(v.TestCases) != 2 || len(c.TestCases) != 3 || c.Compiler != v.Compiler {
		t.Errorf("WithTests: %d %d", len(v.TestCases), len(c.TestCases))
	}
}
