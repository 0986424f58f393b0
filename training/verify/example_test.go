package verify_test

import (
	"context"
	"fmt"
	"log"

	"github.com/gosqlenv/gosqlenv/sqlenv/answer"
	"github.com/gosqlenv/gosqlenv/training/verify"
)

// A model's answer, fenced as models write it, checked against two tests.
func ExampleExecutionVerifier() {
	v := verify.NewGCCExecutionVerifier([]verify.TestCase{
		{Name: "small", Input: "3\n", Expected: "9"},
		{Name: "fraction", Input: "2.5\n", Expected: "6.25"},
	})
	output := "Here is my solution:\n```cpp\n#include <iostream>\nint main(){ int x; std::cin >> x; std::cout << x*x << std::endl; }\n```"
	// The program reads an int, so the second test fails: 0.5 + 0.5 × pass rate 0.5.
	r := v.Verify(context.Background(), output)
	fmt.Printf("reward %.2f success %v: %s\n", r.Reward, r.Success, r.Details)
	// Output:
	// reward 0.75 success true: 1/2 tests passed
}

// Each sample is checked against the examples in its own prompt; one
// verifier serves all prompts concurrently.
func ExampleVerifyBatchWithPrompts() {
	v := verify.NewGCCExecutionVerifier(nil)
	prompts := []string{
		"Print the square of n. Example: input=5, output=25",
		"Print the sum of two integers.\n\nExample 1:\nInput:\n1 2\nOutput:\n3\n\nExample 2:\nInput:\n-4 4\nOutput:\n0",
		"Write any program that compiles.",
	}
	codes := []string{
		"#include <iostream>\nint main(){ long long x; std::cin >> x; std::cout << x*x; }",
		"#include <iostream>\nint main(){ int a, b; std::cin >> a >> b; std::cout << a*b; }", // product, not sum
		"int main(){ return 0; }",
	}
	rs, err := verify.VerifyBatchWithPrompts(context.Background(), v, prompts, codes, 2)
	if err != nil {
		log.Fatal(err)
	}
	for i, r := range rs {
		fmt.Printf("%d: reward %.2f, %s (tests from %s)\n", i, r.Reward, r.Details, r.Metadata["test_source"])
	}
	// Output:
	// 0: reward 1.00, 1/1 tests passed (tests from prompt)
	// 1: reward 0.50, 0/2 tests passed (tests from prompt)
	// 2: reward 0.50, compiled cleanly; no tests (tests from config)
}

func ExampleExtractTestCases() {
	for _, tc := range verify.ExtractTestCases("Example 1:\nInput: 5\nOutput: 25\nExample 2:\nInput: -3\nExpected output: 9") {
		fmt.Printf("%s: stdin %q, expected %q\n", tc.Name, tc.Input, tc.Expected)
	}
	// Output:
	// prompt_1: stdin "5\n", expected "25"
	// prompt_2: stdin "-3\n", expected "9"
}

func ExampleParseConfig() {
	v, err := verify.ParseConfig([]byte(`
verifier:
  type: gcc
  match_mode: numeric
  run_timeout: 2s
  test_cases:
    - {name: half, input: "1\n", expected: "0.5"}
`))
	if err != nil {
		log.Fatal(err)
	}
	r := v.Verify(context.Background(), `#include <cstdio>
int main(){ double x; scanf("%lf", &x); printf("%.6f\n", x / 2); }`)
	fmt.Printf("reward %.2f: %s\n", r.Reward, r.Details)

	_, err = verify.ParseConfig([]byte("verifier: {match_mode: fuzzy}"))
	fmt.Println(err)
	// Output:
	// reward 1.00: 1/1 tests passed
	// verify: config: match_mode: unknown match mode "fuzzy" (want exact, contains, regex or numeric)
}

func ExampleAnswerVerifier() {
	v := verify.NewAnswerVerifier("Alice, Bob", answer.List, [][]any{{"Alice"}, {"Bob"}})
	for _, out := range []string{
		"The query returned two names.\nANSWER: Bob, Alice",
		"ANSWER: Alice",
	} {
		r := v.Verify(context.Background(), out)
		fmt.Printf("predicted %q: reward %v\n", r.Metadata["predicted"], r.Reward)
	}
	// Output:
	// predicted "Bob, Alice": reward 1
	// predicted "Alice": reward 0
}
