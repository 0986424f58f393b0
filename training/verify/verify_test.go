package verify

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const squareSrc = `#include <iostream>
int main(){ long long x; std::cin >> x; std::cout << x*x << "\n"; return 0; }`

// wrong for x == 3 only
const partialSrc = `#include <iostream>
int main(){ long long x; std::cin >> x; std::cout << (x==3 ? 0 : x*x) << "\n"; }`

func sqTests(n int) []TestCase {
	var ts []TestCase
	for i := 1; i <= n; i++ {
		ts = append(ts, TestCase{Name: "sq" + strconv.Itoa(i), Input: strconv.Itoa(i) + "\n", Expected: strconv.Itoa(i * i)})
	}
	return ts
}

func needGPP(t testing.TB) {
	if findTool("g++") == "" {
		t.Skip("g++ not installed")
	}
}

func approx(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func TestLadder(t *testing.T) {
	needGPP(t)
	ctx := context.Background()
	cases := []struct {
		name    string
		v       *ExecutionVerifier
		code    string
		reward  float64
		success bool
	}{
		{"compile error", NewGCCExecutionVerifier(sqTests(2)), "int main( { return 0; }", 0, false},
		{"warnings no tests", NewGCCExecutionVerifier(nil), "int main(){ int unused; return 0; }", 0.3, true},
		{"clean no tests", NewGCCExecutionVerifier(nil), "int main(){ return 0; }", 0.5, true},
		{"all pass", NewGCCExecutionVerifier(sqTests(4)), "```cpp\n" + squareSrc + "\n```", 1.0, true},
		{"partial", NewGCCExecutionVerifier(sqTests(4)), partialSrc, 0.5 + 0.5*0.75, true},
		{"none pass partial credit", NewGCCExecutionVerifier(sqTests(3)), "int main(){return 0;}", 0.5, false},
		{"none pass no partial credit", NewGCCExecutionVerifier(sqTests(3), WithPartialCredit(false)), "int main(){return 0;}", 0.5, false},
		{"partial no partial credit", NewGCCExecutionVerifier(sqTests(4), WithPartialCredit(false)), partialSrc, 0.5, true},
		{"all pass no partial credit", NewGCCExecutionVerifier(sqTests(2), WithPartialCredit(false)), squareSrc, 1.0, true},
		{"compile-only", nil, "int main(){ return 0; }", 0.5, true},
	}
	for _, c := range cases {
		var r Result
		if c.v == nil {
			r = CompileVerifier{}.Verify(ctx, c.code)
		} else {
			r = c.v.Verify(ctx, c.code)
		}
		if !approx(r.Reward, c.reward) || r.Success != c.success {
			t.Errorf("%s: reward %v success %v, want %v %v (err %q, md %v)", c.name, r.Reward, r.Success, c.reward, c.success, r.Error, r.Metadata)
		}
	}
	r := NewGCCExecutionVerifier(sqTests(4)).Verify(ctx, partialSrc)
	tests := r.Metadata["tests"].([]TestResult)
	if r.Metadata["passed"] != 3 || r.Metadata["failed"] != 1 || r.Metadata["total"] != 4 || tests[2].Passed || tests[2].Name != "sq3" {
		t.Errorf("metadata: %+v", r.Metadata)
	}
}

func TestClangMissingOrWorks(t *testing.T) {
	r := NewClangExecutionVerifier(sqTests(1)).Verify(context.Background(), squareSrc)
	if findTool("clang++") == "" {
		if r.Error == "" || !strings.Contains(r.Error, "not installed") || r.Reward != 0 {
			t.Errorf("want not-installed error, got %+v", r)
		}
	} else if r.Reward != 1 {
		t.Errorf("clang: %+v", r)
	}
}

func TestCrashWithMatchingOutputFails(t *testing.T) {
	needGPP(t)
	ctx := context.Background()
	v := NewGCCExecutionVerifier([]TestCase{{Input: "", Expected: "42"}})
	r := v.Verify(ctx, `#include <cstdio>
int main(){ printf("42\n"); fflush(stdout); return 3; }`)
	if r.Reward != 0.5 || r.Success {
		t.Errorf("nonzero exit passed: %+v", r)
	}
	r = v.Verify(ctx, `#include <cstdio>
int main(){ printf("42\n"); fflush(stdout); int *p = nullptr; volatile int x = *p; return x; }`)
	tr := r.Metadata["tests"].([]TestResult)[0]
	if tr.Passed || tr.Signal == "" {
		t.Errorf("signal death passed: %+v", tr)
	}
}

func TestMatchModes(t *testing.T) {
	cases := []struct {
		mode   MatchMode
		a, e   string
		expect bool
	}{
		{MatchExact, "hello  \r\nworld\t\r\n\n", "hello\nworld", true},
		{MatchExact, "hello world", "hello  world", false},
		{MatchContains, "the answer is 42\n", "answer is 42", true},
		{MatchContains, "the answer", "42", false},
		{MatchContains, "the answer is 142", "42", false},              // not inside a longer token
		{MatchContains, "x=42;", "42", true},                           // punctuation bounds tokens
		{MatchContains, "the answer: 42 (after 3 steps)", "42", false}, // another number beside it
		{MatchContains, "candidates 41 42 43", "42", false},
		{MatchContains, strings.Repeat("word ", 17) + "42", "42", false}, // too many tokens around it
		{MatchRegex, "abc123", `[a-z]+\d+`, true},
		{MatchRegex, "abc123x", `[a-z]+\d+`, true}, // a prefix match, as Python's re.match (halo-forge)
		{MatchRegex, "xabc123", `abc\d+`, false},
		{MatchRegex, "x", `(`, false},
		{MatchNumeric, "result: 3.0000001, -2", "3 -2", true},
		{MatchNumeric, "1e6 .5 +7", "1000000 0.5 7", true},
		{MatchNumeric, "1.5e-3", "0.0015", true},
		{MatchNumeric, "1e-12", "0", true},
		{MatchNumeric, "1000000.5", "1000000", true},
		{MatchNumeric, "1.01", "1", false},
		{MatchNumeric, "1 2", "1 2 3", false},
		{MatchNumeric, "-5", "5", false},
		{"", "x", "x", true},
	}
	for _, c := range cases {
		if got := Match(c.mode, c.a, c.e); got != c.expect {
			t.Errorf("Match(%q, %q, %q) = %v", c.mode, c.a, c.e, got)
		}
	}
}

func TestMatchModeInVerifier(t *testing.T) {
	needGPP(t)
	v := NewGCCExecutionVerifier([]TestCase{{Input: "2", Expected: "1.4142135"}}, WithMatch(MatchNumeric))
	r := v.Verify(context.Background(), `#include <cstdio>
#include <cmath>
int main(){ double x; scanf("%lf",&x); printf("sqrt = %.9f\n", sqrt(x)); }`)
	if r.Reward != 1 {
		t.Errorf("numeric verify: %+v", r)
	}
}

func TestExtractCode(t *testing.T) {
	cases := map[string]string{
		"Here:\n```cpp\nint main(){}\n```\nand ```\nother\n```": "int main(){}",
		"```\nplain\n```":                "plain",
		"text <code>int x;</code> more":  "int x;",
		"  int main(){return 0;}  \n":    "int main(){return 0;}",
		"```c++\na\n```\n<code>b</code>": "a",
	}
	for in, want := range cases {
		if got := ExtractCode(in); got != want {
			t.Errorf("ExtractCode(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestVerifyBatchOrder(t *testing.T) {
	needGPP(t)
	v := NewGCCExecutionVerifier(sqTests(2))
	codes := []string{squareSrc, "int main( {", partialSrc, "int main(){return 0;}"}
	rs := VerifyBatch(context.Background(), v, codes, 3)
	want := []float64{1, 0, 1, 0.5}
	for i := range rs {
		if rs[i].Reward != want[i] {
			t.Errorf("batch[%d] = %v want %v", i, rs[i].Reward, want[i])
		}
	}
}

func TestCache(t *testing.T) {
	needGPP(t)
	dir := t.TempDir()
	v := NewGCCExecutionVerifier(sqTests(2), WithCacheDir(dir))
	r1 := v.Verify(context.Background(), squareSrc)
	r2 := v.Verify(context.Background(), squareSrc)
	if r1.Reward != 1 || r2.Reward != 1 || r1.Metadata["cached"] != false || r2.Metadata["cached"] != true {
		t.Errorf("cache: %v %v / %v %v", r1.Reward, r1.Metadata["cached"], r2.Reward, r2.Metadata["cached"])
	}
}

// --- hostile programs ---

func hostile(t *testing.T, code string, to time.Duration, expected string) (Result, TestResult) {
	t.Helper()
	needGPP(t)
	v := NewGCCExecutionVerifier([]TestCase{{Name: "h", Input: "", Expected: expected, Timeout: to}})
	start := time.Now()
	r := v.Verify(context.Background(), code)
	if el := time.Since(start); el > to+10*time.Second {
		t.Errorf("took %v", el)
	}
	tests, ok := r.Metadata["tests"].([]TestResult)
	if !ok {
		t.Fatalf("no tests in metadata: %+v", r)
	}
	t.Logf("reward %v notices %v test %+v", r.Reward, r.Metadata["sandbox_notices"], tests[0])
	return r, tests[0]
}

// procsOf counts processes whose real uid is uid, or whose cmdline contains marker.
func countProcs(uid int, exe string) int {
	ents, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		st, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(st), "\n") {
			if strings.HasPrefix(l, "Uid:") {
				f := strings.Fields(l)
				if len(f) > 1 && f[1] == strconv.Itoa(uid) {
					n++
				}
			}
		}
		if exe != "" {
			if cl, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && strings.Contains(string(cl), exe) {
				n++
			}
		}
	}
	return n
}

func waitProcs(uid int, exe string, want int) int {
	var n int
	for i := 0; i < 40; i++ {
		if n = countProcs(uid, exe); n <= want {
			return n
		}
		time.Sleep(50 * time.Millisecond)
	}
	return n
}

func TestHostileInfiniteLoop(t *testing.T) {
	_, tr := hostile(t, "int main(){ volatile unsigned long x=0; for(;;) x++; }", time.Second, "")
	if tr.Passed || !(tr.TimedOut || tr.Signal != "") || tr.Seconds > 3 {
		t.Errorf("loop: %+v", tr)
	}
}

func TestHostileForkBomb(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("sandboxed commands run as pool uids only when the caller is root")
	}
	_, tr := hostile(t, `#include <unistd.h>
int main(){ for(;;) fork(); }`, time.Second, "")
	if tr.Passed {
		t.Errorf("fork bomb passed")
	}
	if left := poolProcs(true); len(left) > 0 {
		t.Errorf("leftover processes of sandbox uids: %v", left)
	}
}

func TestHostileMemoryHog(t *testing.T) {
	r, tr := hostile(t, `#include <vector>
#include <cstdio>
int main(){ std::vector<char*> v; for(;;){ char* p = new char[64<<20]; for(int i=0;i<(64<<20);i+=4096) p[i]=1; v.push_back(p);} printf("ok\n"); }`, 3*time.Second, "ok")
	if tr.Passed || r.Reward != 0.5 {
		t.Errorf("memory hog: %+v", tr)
	}
}

func TestHostileHugeOutput(t *testing.T) {
	_, tr := hostile(t, `#include <cstdio>
int main(){ for(long i=0;i<50000000;i++) fputs("yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\n", stdout); }`, 3*time.Second, "y")
	if tr.Passed || !tr.StdoutTruncated || len(tr.Actual) > actualKeep+100 {
		t.Errorf("huge output: passed=%v truncated=%v len=%d", tr.Passed, tr.StdoutTruncated, len(tr.Actual))
	}
}

func TestHostileWriteOutside(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("privilege drop only happens as root")
	}
	// A root-owned 0755 directory: the sandboxed uid cannot create files in it.
	// (World-writable places such as /tmp are NOT protected: there is no
	// filesystem isolation; see Sandbox docs.)
	guard, err := os.MkdirTemp("", "gosqlenv-verify-guard-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(guard)
	os.Chmod(guard, 0o755)
	target := guard + "/escape"
	_, tr := hostile(t, fmt.Sprintf(`#include <cstdio>
int main(){ FILE* f = fopen(%q, "w"); if(!f){ printf("denied\n"); return 0; } fputs("pwned", f); fclose(f); printf("wrote\n"); }`, target), 3*time.Second, "denied")
	if _, err := os.Stat(target); err == nil {
		t.Errorf("sandboxed program wrote %s", target)
	}
	if !tr.Passed {
		t.Errorf("expected program to see permission denied: %+v", tr)
	}
}

func TestHostileEnvSecret(t *testing.T) {
	t.Setenv("GOSQLENV_SECRET_TOKEN", "hunter2-secret")
	_, tr := hostile(t, `#include <cstdio>
#include <cstdlib>
extern char **environ;
int main(){ const char* s = getenv("GOSQLENV_SECRET_TOKEN"); printf("%s\n", s ? s : "none"); for(char**e=environ;*e;e++) fprintf(stderr, "%s\n", *e); }`, 3*time.Second, "none")
	if !tr.Passed || strings.Contains(tr.Stderr, "hunter2") {
		t.Errorf("secret visible: %+v", tr)
	}
}

func TestHostileOrphanSleeper(t *testing.T) {
	marker := "gosqlenvorphan" + strconv.Itoa(os.Getpid())
	before := countProcs(-1, marker)
	_, tr := hostile(t, fmt.Sprintf(`#include <unistd.h>
#include <cstdio>
int main(){ if(fork()==0){ setsid(); execl("/bin/sleep","%s","30",(char*)0); _exit(1);} printf("bye\n"); return 0; }`, marker), 3*time.Second, "bye")
	if !tr.Passed {
		t.Logf("parent test: %+v", tr)
	}
	if after := waitProcs(-1, marker, before); after > before {
		t.Errorf("orphan sleeper survived: %d processes with %s", after, marker)
	}
}

// Cached binaries are copied into each work dir by this process; under
// concurrent verification another goroutine's fork used to inherit the copy's
// write descriptor and the exec failed with "text file busy".
func TestCacheConcurrentExec(t *testing.T) {
	needGPP(t)
	v := NewGCCExecutionVerifier(sqTests(10), WithCacheDir(t.TempDir()))
	codes := make([]string, 4)
	for i := range codes {
		codes[i] = squareSrc + "\n// variant " + strconv.Itoa(i)
	}
	VerifyBatch(context.Background(), v, codes, 2) // fill the cache
	for round := 0; round < 8; round++ {
		for i, r := range VerifyBatch(context.Background(), v, codes, 2) {
			if r.Reward != 1 {
				for _, tr := range r.Metadata["tests"].([]TestResult) {
					if !tr.Passed {
						t.Fatalf("round %d code %d: %+v", round, i, tr)
					}
				}
				t.Fatalf("round %d code %d: %+v", round, i, r)
			}
		}
	}
}

func TestWithoutSandbox(t *testing.T) {
	needGPP(t)
	v := NewGCCExecutionVerifier([]TestCase{{Input: "4\n", Expected: "16"}, {Name: "loop", Input: "", Expected: "x", Timeout: time.Second}}, WithoutSandbox())
	start := time.Now()
	r := v.Verify(context.Background(), `#include <iostream>
int main(){ long long x; if(!(std::cin >> x)) for(volatile int i=0;;) i++; std::cout << x*x << "\n"; }`)
	tests := r.Metadata["tests"].([]TestResult)
	if r.Metadata["sandbox"] != false || !tests[0].Passed || tests[1].Passed || !tests[1].TimedOut || time.Since(start) > 20*time.Second {
		t.Errorf("unsandboxed: %+v %+v", r, tests)
	}
	// The opt-in says what it means, once, in every result.
	if n, _ := r.Metadata["sandbox_notices"].([]string); len(n) != 1 || !strings.Contains(n[0], "not isolated (WithoutSandbox)") {
		t.Errorf("notices without sandbox: %v", r.Metadata["sandbox_notices"])
	}
}

// poolProcs returns "pid:uid:state" for every process in /proc whose real
// uid is one of the sandbox pool's uids that this test process has used;
// zombies (dead, waiting for their parent to reap them) only if withZombies.
// Tests in this package run one at a time, so there must be none once every
// Verify has returned. (Other processes, such as another package's tests
// run by the same go test, hold other uids of the pool.)
func poolProcs(withZombies bool) []string {
	sandboxUIDs.init()
	sandboxUIDs.mu.Lock()
	ours := append([]bool(nil), sandboxUIDs.owned...)
	sandboxUIDs.mu.Unlock()
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		st, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		state, uid := "", -1
		for _, l := range strings.Split(string(st), "\n") {
			f := strings.Fields(l)
			switch {
			case len(f) > 1 && f[0] == "State:":
				state = f[1]
			case len(f) > 1 && f[0] == "Uid:":
				uid, _ = strconv.Atoi(f[1])
			}
		}
		if uid >= SandboxUIDBase && uid < SandboxUIDBase+SandboxUIDCount && ours[uid-SandboxUIDBase] && (withZombies || state != "Z") {
			out = append(out, e.Name()+":"+strconv.Itoa(uid)+":"+state)
		}
	}
	return out
}

// Concurrent commands run as distinct uids of the pool (as root).
func TestSandboxDistinctUIDs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the sandbox drops to pool uids only when the caller is root")
	}
	const n = 6
	uids := make([]string, n)
	done := make(chan int)
	for i := range n {
		go func() {
			// As the verifier does: under privateRoot, which the command's uid
			// passes through by name (t.TempDir's parent is private to root;
			// in /tmp the sandbox deletes what the uid owns after the run).
			root, err := privateRoot()
			if err != nil {
				t.Error(err)
				done <- i
				return
			}
			dir, err := os.MkdirTemp(root, "uid-test-")
			if err != nil {
				t.Error(err)
				done <- i
				return
			}
			defer os.RemoveAll(dir)
			sb := Sandbox{Limits: RunLimits, Own: dir}
			// Each command holds its uid until all have printed theirs.
			r := sb.Run(context.Background(), dir, 10*time.Second, nil, "/bin/sh", "-c", "id -u; id -g; touch f; sleep 0.5")
			if !r.OK() {
				t.Errorf("run %d: %+v", i, r)
			}
			uids[i] = strings.Join(strings.Fields(string(r.Stdout)), " ")
			if st, err := os.Stat(dir + "/f"); err != nil || strconv.Itoa(int(st.Sys().(*syscall.Stat_t).Uid)) != strings.Fields(uids[i] + " ?")[0] {
				t.Errorf("run %d: the command could not write in its own directory as its uid (%s): %v", i, uids[i], err)
			}
			done <- i
		}()
	}
	for range n {
		<-done
	}
	t.Logf("uid gid of each run: %q", uids)
	seen := map[string]bool{}
	for i, u := range uids {
		f := strings.Fields(u)
		if len(f) != 2 || f[0] != f[1] {
			t.Fatalf("run %d: uid/gid %q", i, u)
		}
		id, _ := strconv.Atoi(f[0])
		if id < SandboxUIDBase || id >= SandboxUIDBase+SandboxUIDCount || seen[f[0]] {
			t.Errorf("run %d: uid %d outside the pool or shared (%v)", i, id, uids)
		}
		seen[f[0]] = true
	}
	if left := poolProcs(true); len(left) > 0 {
		t.Errorf("leftover processes of sandbox uids: %v", left)
	}
}

// forkingSquareSrc prints n² after starting and waiting for 8 child processes,
// as a program using a few helper processes or threads would: it needs room
// under its RLIMIT_NPROC. With one uid shared by all sandboxed commands a
// concurrent fork bomb took that room and such programs failed.
const forkingSquareSrc = `#include <cstdio>
#include <sys/wait.h>
#include <unistd.h>
int main(){
  long long x; if (scanf("%lld", &x) != 1) return 2;
  pid_t kids[8];
  for (int i = 0; i < 8; i++) { kids[i] = fork(); if (kids[i] < 0) { perror("fork"); return 1; } if (kids[i] == 0) { usleep(20000); _exit(0); } }
  for (int i = 0; i < 8; i++) { int st; if (waitpid(kids[i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return 1; }
  printf("%lld\n", x*x);
}`

// bombOrNot verifies the fork bomb (codes[0]) with bomb and the others with
// normal, so that both can have their own tests and timeouts in one
// VerifyBatch.
type bombOrNot struct {
	bombCode     string
	bomb, normal Verifier
}

func (b bombOrNot) Verify(ctx context.Context, code string) Result {
	if code == b.bombCode {
		return b.bomb.Verify(ctx, code)
	}
	return b.normal.Verify(ctx, code)
}

// A fork bomb verified in the same batch as normal candidates must not make
// them fail: every sandboxed command has a uid, and so an RLIMIT_NPROC, of
// its own. (With the single uid 65534 used before, most normal candidates
// here failed with "fork: Resource temporarily unavailable".)
func TestForkBombDoesNotStarveConcurrentVerifications(t *testing.T) {
	needGPP(t)
	if os.Geteuid() != 0 {
		t.Skip("per-command uids (and the RLIMIT_NPROC sharing they fix) exist only when the caller is root: as non-root every command runs as the caller")
	}
	tests := []TestCase{{Name: "a", Input: "3\n", Expected: "9"}, {Name: "b", Input: "12\n", Expected: "144"}, {Name: "c", Input: "7\n", Expected: "49"}}
	// The cache makes rounds 2 and 3 pure test runs, so that the bomb's runs
	// overlap the other candidates' runs rather than their compilations.
	// Normal candidates keep the default 5 s run timeout: the bomb's 32
	// processes still take most of the CPU (the sandbox does not divide CPU
	// time), only the process limit is no longer shared.
	normal := NewGCCExecutionVerifier(tests, WithCacheDir(t.TempDir()), WithMaxWorkers(2))
	var bombTests []TestCase
	for _, tc := range tests {
		tc.Timeout = 1500 * time.Millisecond
		bombTests = append(bombTests, tc)
	}
	v := bombOrNot{
		bombCode: `#include <unistd.h>
int main(){ for(;;) fork(); }`,
		bomb:   normal.WithTests(bombTests),
		normal: normal,
	}
	codes := []string{v.bombCode}
	for i := range 7 {
		codes = append(codes, forkingSquareSrc+"\n// variant "+strconv.Itoa(i))
	}
	for round := range 3 {
		start := time.Now()
		rs := VerifyBatch(context.Background(), v, codes, 4)
		slowest := 0.0
		for _, r := range rs[1:] {
			if trs, ok := r.Metadata["tests"].([]TestResult); ok {
				for _, tr := range trs {
					slowest = max(slowest, tr.Seconds)
				}
			}
		}
		t.Logf("round %d: %v, slowest normal test %.3f s", round, time.Since(start).Round(time.Millisecond), slowest)
		if rs[0].Reward != 0.5 || rs[0].Metadata["passed"] != 0 {
			t.Errorf("round %d: fork bomb scored %v (%s), want 0.5 (compiled, no test passed)", round, rs[0].Reward, rs[0].Details)
		}
		for i, r := range rs[1:] {
			if r.Reward != 1 {
				msg := r.Error
				if trs, ok := r.Metadata["tests"].([]TestResult); ok {
					for _, tr := range trs {
						if !tr.Passed {
							msg += fmt.Sprintf("; %s: exit %d signal %q timed out %v after %.2f s, stderr %q", tr.Name, tr.ExitCode, tr.Signal, tr.TimedOut, tr.Seconds, tr.Stderr)
						}
					}
				}
				t.Errorf("round %d candidate %d: reward %v: %s", round, i+1, r.Reward, msg)
			}
		}
		if left := poolProcs(true); len(left) > 0 {
			t.Errorf("round %d: leftover processes of sandbox uids: %v", round, left)
		}
	}
}

// Without bubblewrap and without namespaces (as when the kernel or container
// refuses them) nothing
// kills a command's escaped descendants but the /proc sweep of its uid, which
// must leave none before the uid is handed out again.
func TestHostileEscapeWithoutNamespaces(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("pool uids and namespaces are used only when the caller is root")
	}
	was := namespacesBroken.Load()
	namespacesBroken.Store(true)
	defer namespacesBroken.Store(was)
	// The per-command sandbox, as without bubblewrap. The child leaves the
	// process group (setsid), so the group kill misses it and its fork bomb.
	var r Result
	var tr TestResult
	withFallback(func() {
		r, tr = hostile(t, `#include <unistd.h>
#include <cstdio>
int main(){ if(fork()==0){ setsid(); for(;;) fork(); } usleep(100000); printf("bye\n"); return 0; }`, 3*time.Second, "bye")
	})
	if !tr.Passed {
		t.Errorf("parent test: %+v", tr)
	}
	found := false
	for _, n := range r.Metadata["sandbox_notices"].([]string) {
		found = found || strings.Contains(n, "no PID/net namespace")
	}
	if !found {
		t.Errorf("no notice about missing namespaces: %v", r.Metadata["sandbox_notices"])
	}
	if left := poolProcs(false); len(left) > 0 {
		t.Errorf("escaped processes of sandbox uids survived: %v", left)
	}
	// The killed ones are reparented to init, which reaps them in its own
	// time (here every second or so); until then the uid stays out of use.
	deadline := time.Now().Add(20 * time.Second)
	for len(poolProcs(true)) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if left := poolProcs(true); len(left) > 0 {
		t.Errorf("zombies of sandbox uids not reaped: %v", left)
	}
}
