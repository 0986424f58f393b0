package verify

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The red-team suite: what a hostile candidate tried against the sandbox
// (issue 17), as tests. Each runs where the verifier jails candidates: with
// g++ and bubblewrap installed (CI installs both), as root (pool uids) and as
// an unprivileged user (a user namespace); the link attacks also run against
// the per-command fallback sandbox (root only). redteam_modes_test.go tries
// the attacks of issue 27 in every mode.

// needJail skips unless Verify runs candidates in bubblewrap jails.
func needJail(t *testing.T) {
	t.Helper()
	needGPP(t)
	if findTool("bwrap") == "" {
		t.Skipf("bubblewrap is not installed (Debian package %s)", bwrapPackage)
	}
}

// needRoot skips unless the caller is root (pool uids, the fallback).
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: candidates run as pool uids, and the fallback runs, only as root")
	}
}

// withFallback runs f with the per-command fallback sandbox.
func withFallback(f func()) {
	jailUnavailable = true
	defer func() { jailUnavailable = false }()
	f()
}

// testsOf returns the per-test results of r.
func testsOf(t *testing.T, r Result) []TestResult {
	t.Helper()
	trs, ok := r.Metadata["tests"].([]TestResult)
	if !ok {
		t.Fatalf("no tests ran: %+v", r)
	}
	return trs
}

// A candidate with no logic of its own looks for other candidates' binaries
// (work folders, the binary cache, the private root, /proc/*/exe of running
// programs) and runs what it finds on its input. Verified beside correct
// candidates of the same prompt, as RAFT does, it must pass no test.
func TestRedTeamSiblingBinaries(t *testing.T) {
	needJail(t)
	cache := t.TempDir()
	root, err := privateRoot()
	if err != nil {
		t.Fatal(err)
	}
	thief := fmt.Sprintf(`#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
static std::string self, found;
static void walk(const std::string& d, int depth) {
  if (depth > 5 || !found.empty()) return;
  DIR* dir = opendir(d.c_str()); if (!dir) return;
  while (dirent* e = readdir(dir)) {
    std::string n = e->d_name; if (n == "." || n == "..") continue;
    std::string p = d + "/" + n; struct stat st; if (lstat(p.c_str(), &st)) continue;
    if (S_ISDIR(st.st_mode)) walk(p, depth + 1);
    else if (S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0 && (n == "prog" || n.size() == 64)) {
      char real[4096] = {0}; if (realpath(p.c_str(), real) && self != real) found = p;
    }
  }
  closedir(dir);
}
int main() {
  char buf[4096] = {0}; if (readlink("/proc/self/exe", buf, sizeof buf - 1) > 0) self = buf;
  const char* roots[] = {%q, %q, "/run", "/tmp", "/var/tmp", "/sandbox", "/src", "/out", "/dev/shm"};
  for (const char* r : roots) walk(r, 0);
  DIR* proc = opendir("/proc");
  while (proc && found.empty()) { dirent* e = readdir(proc); if (!e) break;
    std::string p = std::string("/proc/") + e->d_name + "/exe"; char t[4096] = {0};
    if (readlink(p.c_str(), t, sizeof t - 1) > 0 && self != t && access(p.c_str(), X_OK) == 0 && (strstr(t, "/prog") || strstr(t, "gosqlenv"))) found = p; }
  if (found.empty()) { printf("nothing found\n"); return 0; }
  fprintf(stderr, "running %%s\n", found.c_str());
  execl(found.c_str(), found.c_str(), (char*)0);
  return 1;
}`, cache, root)
	// The correct candidates take a moment per test, so that the thieves
	// run while their binaries exist.
	square := `#include <iostream>
#include <unistd.h>
int main(){ long long x; std::cin >> x; usleep(20000); std::cout << x*x << "\n"; }`
	check := func(t *testing.T) {
		v := NewGCCExecutionVerifier(sqTests(12), WithCacheDir(cache), WithMaxWorkers(2))
		var codes []string
		for i := range 4 {
			codes = append(codes, square+"\n// variant "+strconv.Itoa(i), thief+"\n// variant "+strconv.Itoa(i))
		}
		VerifyBatch(context.Background(), v, codes[:1], 1) // one sibling is in the cache before
		for i, r := range VerifyBatch(context.Background(), v, codes, 8) {
			trs := testsOf(t, r)
			if i%2 == 0 && r.Reward != 1 {
				t.Errorf("correct candidate %d: reward %v (%s)", i, r.Reward, r.Error)
			}
			if i%2 == 1 && r.Reward != 0.5 {
				t.Errorf("thief %d: reward %v, want 0.5 (no test passed): %s %q", i, r.Reward, r.Details, trs[0].Stderr)
			}
			if i%2 == 1 {
				t.Logf("thief %d: %s, stdout %q stderr %q", i, r.Details, trs[0].Actual, trs[0].Stderr)
			}
		}
	}
	t.Run("jail", check)
	t.Run("fallback", func(t *testing.T) { needRoot(t); withFallback(func() { check(t) }) })
}

// Hard links and symbolic links to a file outside the work folder, made by
// a candidate where it can write: the sandbox never changes the owner or
// mode of anything by a path a candidate could have written, so the file
// keeps its owner, mode and content. With fs.protected_hardlinks=1 (the
// default) the kernel refuses the hard link anyway; the test turns it off
// for its duration where it can, to test the verifier and not the kernel.
func TestRedTeamLinksAreNeverFollowed(t *testing.T) {
	needJail(t)
	const sysctl = "/proc/sys/fs/protected_hardlinks"
	if was, err := os.ReadFile(sysctl); err == nil && os.WriteFile(sysctl, []byte("0"), 0) == nil {
		defer os.WriteFile(sysctl, was, 0)
	} else {
		t.Logf("cannot turn %s off: the kernel refuses the hard links too", sysctl)
	}
	dir, err := os.MkdirTemp("", "gosqlenv-canary-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	canary := filepath.Join(dir, "canary")
	if err := os.WriteFile(canary, []byte("canary"), 0o644); err != nil {
		t.Fatal(err)
	}
	code := fmt.Sprintf(`#include <cstdio>
#include <unistd.h>
int main() {
  const char* c = %q;
  const char* names[] = {"h", "/tmp/h", "/var/tmp/h", "prog", "out"};
  for (const char* n : names) { link(c, n); }
  const char* snames[] = {"s", "/tmp/s", "/var/tmp/s", "main.cpp"};
  for (const char* n : snames) { symlink(c, n); }
  printf("done\n");
}`, canary)
	check := func(t *testing.T, jailed bool) {
		v := NewGCCExecutionVerifier([]TestCase{{Input: "", Expected: "done"}, {Input: "", Expected: "done"}})
		r := v.Verify(context.Background(), code)
		t.Logf("reward %v notices %v", r.Reward, r.Metadata["sandbox_notices"])
		st, err := os.Stat(canary)
		if err != nil {
			t.Fatal(err)
		}
		sys := st.Sys().(*syscall.Stat_t)
		if b, _ := os.ReadFile(canary); int(sys.Uid) != os.Geteuid() || int(sys.Gid) != os.Getegid() || st.Mode().Perm() != 0o644 || string(b) != "canary" {
			t.Errorf("canary changed: uid %d gid %d mode %v content %q", sys.Uid, sys.Gid, st.Mode(), b)
		}
		// In a jail the canary cannot even be seen; the fallback has no
		// filesystem isolation, so links the candidate left in the host's
		// /tmp and /var/tmp remain (and are removed here).
		if jailed && sys.Nlink != 1 {
			t.Errorf("a jailed candidate linked the canary: %d links", sys.Nlink)
		}
		for _, p := range []string{"/tmp/h", "/var/tmp/h", "/tmp/s", "/var/tmp/s"} {
			if fi, err := os.Lstat(p); err == nil && fi.Sys().(*syscall.Stat_t).Uid >= SandboxUIDBase {
				os.Remove(p)
			}
		}
	}
	t.Run("jail", func(t *testing.T) { check(t, true) })
	t.Run("fallback", func(t *testing.T) { needRoot(t); withFallback(func() { check(t, false) }) })
}

// readBack, which copies the compiler's output out of the directory the
// compiler could write, refuses links, special files and oversized files.
func TestReadBackRefusesLinksAndSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(dir, "outside")
	os.WriteFile(outside, []byte("secret"), 0o600)
	cases := map[string]func(p string) error{
		"symlink":   func(p string) error { return os.Symlink(outside, p) },
		"hard link": func(p string) error { return os.Link(outside, p) },
		"fifo":      func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"directory": func(p string) error { return os.Mkdir(p, 0o755) },
		"too big":   func(p string) error { return os.WriteFile(p, make([]byte, 2000), 0o755) },
	}
	for name, mk := range cases {
		out := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
		os.Mkdir(out, 0o755)
		if err := mk(filepath.Join(out, "prog")); err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, "copy-"+filepath.Base(out))
		if err := readBack(out, "prog", dst, 1000); err == nil {
			t.Errorf("%s: read back", name)
		}
		if _, err := os.Lstat(dst); err == nil {
			t.Errorf("%s: a copy was made", name)
		}
	}
	good := filepath.Join(dir, "good")
	os.Mkdir(good, 0o755)
	os.WriteFile(filepath.Join(good, "prog"), []byte("ELF"), 0o755)
	if err := readBack(good, "prog", filepath.Join(dir, "copy"), 1000); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "copy")); string(b) != "ELF" {
		t.Errorf("copy = %q", b)
	}
}

// Whatever a candidate writes — to /tmp, /var/tmp, /dev/shm, its working
// directory, 80 MiB at once — stays in its jail's private, size-capped /tmp
// and is gone after the test; the next test of the same jail starts clean.
func TestRedTeamWritesStayInside(t *testing.T) {
	needJail(t)
	marker := fmt.Sprintf("gosqlenv-redteam-%d", os.Getpid())
	code := fmt.Sprintf(`#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include <unistd.h>
int main() {
  std::string m = %q;
  bool clean = access(("/tmp/" + m + ".state").c_str(), F_OK) != 0;
  const char* dirs[] = {"/tmp/", "/var/tmp/", "/dev/shm/", "./", "/run/", "/"};
  for (const char* d : dirs) { FILE* f = fopen((std::string(d) + m).c_str(), "w"); if (f) { fputs("x", f); fclose(f); } }
  FILE* s = fopen(("/tmp/" + m + ".state").c_str(), "w"); if (s) fclose(s);
  FILE* big = fopen(("/tmp/" + m + ".big").c_str(), "w");
  std::vector<char> block(1 << 20, 'y'); size_t wrote = 0;
  for (int i = 0; big && i < 80; i++) wrote += fwrite(block.data(), 1, block.size(), big);
  if (big) fclose(big);
  fprintf(stderr, "wrote %%zu MiB to /tmp\n", wrote >> 20);
  printf(clean ? "clean\n" : "dirty\n");
}`, marker)
	lim := RunLimits
	lim.FileSize = 256 << 20 // past /tmp's 64 MiB: the file size limit is not what stops the writes
	v := NewGCCExecutionVerifier([]TestCase{{Expected: "clean"}, {Expected: "clean"}, {Expected: "clean"}}, WithRunLimits(lim))
	r := v.Verify(context.Background(), code)
	for i, tr := range testsOf(t, r) {
		if !tr.Passed {
			t.Errorf("test %d: %q, stderr %q: the jail's /tmp was not emptied between tests", i, tr.Actual, tr.Stderr)
		}
		if !strings.Contains(tr.Stderr, "wrote 6") { // 60-something MiB: the 64 MiB cap, not 80
			t.Errorf("test %d: %q: /tmp not capped at 64 MiB", i, tr.Stderr)
		}
	}
	for _, d := range []string{"/tmp", "/var/tmp", "/dev/shm", "/run", "/"} {
		for _, suffix := range []string{"", ".state", ".big"} {
			if _, err := os.Lstat(filepath.Join(d, marker+suffix)); err == nil {
				os.Remove(filepath.Join(d, marker+suffix))
				t.Errorf("the candidate wrote %s on the host", filepath.Join(d, marker+suffix))
			}
		}
	}
}

// A world-writable unix socket on the host (by path) and an abstract one
// cannot be reached from a jail.
func TestRedTeamNoUnixSockets(t *testing.T) {
	needJail(t)
	dir, err := os.MkdirTemp("", "gosqlenv-sock-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	path := filepath.Join(dir, "s")
	abstract := fmt.Sprintf("@gosqlenv-redteam-%d", os.Getpid())
	var connected = make(chan string, 4)
	for _, addr := range []string{path, abstract} {
		l, err := net.Listen("unix", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				connected <- addr
				c.Close()
			}
		}()
	}
	os.Chmod(path, 0o777)
	code := fmt.Sprintf(`#include <cstdio>
#include <cstring>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
static bool reach(const char* name, bool abstract) {
  int s = socket(AF_UNIX, SOCK_STREAM, 0); sockaddr_un a{}; a.sun_family = AF_UNIX;
  size_t n = strlen(name); if (abstract) { a.sun_path[0] = 0; memcpy(a.sun_path + 1, name + 1, n - 1); }
  else memcpy(a.sun_path, name, n);
  bool ok = connect(s, (sockaddr*)&a, sizeof(sa_family_t) + n) == 0; close(s); return ok;
}
int main() { bool p = reach(%q, false), a = reach(%q, true); printf("%%s %%s\n", p ? "path-reached" : "path-isolated", a ? "abstract-reached" : "abstract-isolated"); }`, path, abstract)
	v := NewGCCExecutionVerifier([]TestCase{{Expected: "path-isolated abstract-isolated"}})
	r := v.Verify(context.Background(), code)
	if trs := testsOf(t, r); !trs[0].Passed {
		t.Errorf("%q %q", trs[0].Actual, trs[0].Stderr)
	}
	select {
	case addr := <-connected:
		t.Errorf("the candidate connected to %s", addr)
	default:
	}
}

// The host is invisible from a jail: no /etc/passwd, not the project tree,
// no host processes in /proc; and a compile error cannot quote a host file.
func TestRedTeamHostInvisible(t *testing.T) {
	needJail(t)
	_, src, _, _ := runtime.Caller(0)
	wd := filepath.Dir(src) // the project tree (the working directory may be under /tmp, which a jail has)
	code := fmt.Sprintf(`#include <cstdio>
#include <dirent.h>
#include <cstring>
#include <cstdlib>
int main() {
  int procs = 0; DIR* d = opendir("/proc");
  while (dirent* e = d ? readdir(d) : nullptr) if (atoi(e->d_name) > 0) procs++;
  char cmd[256] = {0}; FILE* c = fopen("/proc/1/cmdline", "r"); if (c) { fread(cmd, 1, sizeof cmd - 1, c); fclose(c); }
  bool passwd = fopen("/etc/passwd", "r") != nullptr, project = opendir(%q) != nullptr, home = opendir("/root") != nullptr;
  printf("procs=%%d init=%%s passwd=%%d project=%%d root=%%d\n", procs, cmd, passwd, project, home);
}`, wd)
	v := NewGCCExecutionVerifier([]TestCase{{Expected: "procs=2 init=/.gosqlenv-init passwd=0 project=0 root=0"}})
	r := v.Verify(context.Background(), code)
	if trs := testsOf(t, r); !trs[0].Passed {
		t.Errorf("%q %q", trs[0].Actual, trs[0].Stderr)
	}
	r = v.Verify(context.Background(), `#include "/etc/passwd"
int main(){}`)
	if r.Reward != 0 || strings.Contains(r.Error, "root:") || !strings.Contains(r.Error, "/etc/passwd") {
		t.Errorf("include of a host file: reward %v, error %q", r.Reward, r.Error)
	}
}

// The candidate is not PID 1: signals behave as on a normal system, and the
// real signal is reported. Printing the right answer and then dying fails.
func TestRedTeamSignalsAsOnANormalSystem(t *testing.T) {
	needJail(t)
	cases := []struct{ name, tail, signal string }{
		{"raise SIGSEGV", "raise(SIGSEGV);", "segmentation fault"},
		{"kill self", "kill(getpid(), SIGKILL);", "killed"},
		{"abort", "abort();", "aborted"},
		{"alarm", "alarm(1); pause();", "alarm clock"},
		{"exit 0", "return 0;", ""},
	}
	for _, c := range cases {
		code := `#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
int main(){ printf("42\n"); fflush(stdout); ` + c.tail + ` for(;;) pause(); }`
		v := NewGCCExecutionVerifier([]TestCase{{Expected: "42", Timeout: 5 * time.Second}})
		trs := testsOf(t, v.Verify(context.Background(), code))
		tr := trs[0]
		if tr.Signal != c.signal || tr.Passed != (c.signal == "") || tr.TimedOut || tr.Seconds > 3 {
			t.Errorf("%s: signal %q passed %v timed out %v after %.2f s; want signal %q", c.name, tr.Signal, tr.Passed, tr.TimedOut, tr.Seconds, c.signal)
		}
	}
}

// Memory is limited for the whole run, not per process: eight processes of
// 48 MiB each cannot all be held under a 128 MiB run limit, although each
// is under the 64 MiB per-process limit.
func TestRedTeamMemoryAcrossProcesses(t *testing.T) {
	needJail(t)
	lim := RunLimits
	lim.Memory, lim.TotalMemory = 64<<20, 128<<20
	code := `#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>
int main() {
  for (int i = 0; i < 8; i++) if (fork() == 0) {
    volatile char* p = (volatile char*)malloc(48 << 20); if (!p) _exit(1);
    for (int k = 0; k < (48 << 20); k += 4096) p[k] = 1;
    sleep(1); _exit(p[4096] == 1 ? 0 : 1); }
  int held = 0, st; while (wait(&st) > 0) if (WIFEXITED(st) && WEXITSTATUS(st) == 0) held++;
  printf("%d\n", held);
}`
	v := NewGCCExecutionVerifier([]TestCase{{Expected: "8"}}, WithRunLimits(lim))
	r := v.Verify(context.Background(), code)
	if strings.Contains(fmt.Sprint(r.Metadata["sandbox_notices"]), "limited per process only") {
		t.Skipf("no memory cgroup here: %v", r.Metadata["sandbox_notices"])
	}
	tr := testsOf(t, r)[0]
	t.Logf("processes that held 48 MiB: %q (signal %q)", tr.Actual, tr.Signal)
	if tr.Passed {
		t.Errorf("8 × 48 MiB held under a 128 MiB run limit")
	}
	if n, err := strconv.Atoi(strings.TrimSpace(tr.Actual)); err == nil && n > 2 {
		t.Errorf("%d processes held 48 MiB each under a 128 MiB limit", n)
	}
}
