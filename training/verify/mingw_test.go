package verify

import (
	"context"
	"strings"
	"testing"
)

func TestMinGWMissingCompiler(t *testing.T) {
	v := NewMinGWExecutionVerifier(WithCompiler("/nonexistent/bin/" + MinGWCompiler))
	r := v.Verify(context.Background(), "int main(){ return 0; }")
	if r.Reward != 0 || r.Success || !strings.Contains(r.Error, MinGWCompiler) || !strings.Contains(r.Error, "g++-mingw-w64-x86-64") {
		t.Errorf("missing compiler: %+v", r)
	}
	if resolveCompiler(MinGWCompiler) == "" { // the preset itself, on a machine without it
		r := NewMinGWExecutionVerifier().Verify(context.Background(), "int main(){}")
		if r.Reward != 0 || !strings.Contains(r.Error, "g++-mingw-w64-x86-64") {
			t.Errorf("preset without compiler: %+v", r)
		}
	}
}

func TestMinGWCompile(t *testing.T) {
	if resolveCompiler(MinGWCompiler) == "" {
		t.Skip(MinGWCompiler + " not installed (Debian package g++-mingw-w64-x86-64)")
	}
	ctx := context.Background()
	// Test cases are configured but must be skipped: the binary is a Windows .exe.
	v := NewMinGWExecutionVerifier(WithTestCases(sqTests(2)))
	win := `#include <windows.h>
#include <iostream>
int main(){ long long x; std::cin >> x; std::cout << x*x << "\n"; return GetCurrentProcessId() == 0; }`
	cases := []struct {
		name    string
		code    string
		reward  float64
		success bool
	}{
		{"clean", win, 0.5, true},
		{"warnings", "int main(){ int unused; return 0; }", 0.3, true},
		{"compile error", "int main( {", 0, false},
	}
	for _, c := range cases {
		r := v.Verify(ctx, c.code)
		if r.Reward != c.reward || r.Success != c.success {
			t.Errorf("%s: reward %v success %v, want %v %v (%s)", c.name, r.Reward, r.Success, c.reward, c.success, r.Error)
		}
		if c.success {
			skipped, _ := r.Metadata["tests_skipped"].(string)
			if !strings.Contains(skipped, "Windows") || r.Metadata["tests"] != nil || !strings.Contains(r.Details, "tests skipped") {
				t.Errorf("%s: tests not reported as skipped: %+v", c.name, r)
			}
		}
	}
}
