package verify

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The red-team suite across the verifier's modes (issue 27). A process runs
// the modes its privileges allow: as root, the bubblewrap jail, the
// per-command fallback (no bubblewrap) and the fallback without namespaces
// (a container without CAP_SYS_ADMIN); as an unprivileged user, the jail in
// a user namespace, and the fallback, which must refuse. CI runs the package
// as root and as an unprivileged user, so that every mode is tried.

// sandboxMode is one way Verify can isolate candidates.
type sandboxMode struct {
	name  string
	jail  bool   // bubblewrap jail (else the per-command fallback)
	setup func() // makes Verify use the mode; restore undoes it
	// restore puts the package's switches back.
	restore func()
}

// sandboxModes are the modes this process can run.
func sandboxModes(t *testing.T) []sandboxMode {
	t.Helper()
	needGPP(t)
	var modes []sandboxMode
	who := "non-root"
	if os.Geteuid() == 0 {
		who = "root"
	}
	if findTool("bwrap") != "" {
		modes = append(modes, sandboxMode{name: who + " jail", jail: true, setup: func() {}, restore: func() {}})
	}
	modes = append(modes, sandboxMode{name: who + " fallback", setup: func() { jailUnavailable = true }, restore: func() { jailUnavailable = false }})
	if os.Geteuid() == 0 {
		modes = append(modes, sandboxMode{name: "root fallback without namespaces",
			setup:   func() { jailUnavailable = true; namespacesBroken.Store(true) },
			restore: func() { jailUnavailable = false; namespacesBroken.Store(false) }})
	}
	return modes
}

// eachMode runs check in every mode of sandboxModes. Where the mode cannot
// isolate, check is not run: Verify must refuse with errNoIsolation, and
// does not run the program.
func eachMode(t *testing.T, check func(t *testing.T, m sandboxMode)) {
	for _, m := range sandboxModes(t) {
		t.Run(m.name, func(t *testing.T) {
			m.setup()
			defer m.restore()
			r := NewGCCExecutionVerifier([]TestCase{{Expected: "ok"}}).Verify(context.Background(), `#include <cstdio>
int main(){ puts("ok"); }`)
			if strings.Contains(r.Error, errNoIsolation.Error()) {
				if m.jail && jailBroken.Load() == nil {
					t.Fatalf("jail refused though bubblewrap works: %s", r.Error)
				}
				if r.Reward != 0 || r.Success || !strings.Contains(r.Error, "WithoutSandbox") {
					t.Fatalf("refusal: reward %v success %v error %q", r.Reward, r.Success, r.Error)
				}
				t.Skipf("refused, as it must be: %s", r.Error)
			}
			if r.Reward != 1 {
				t.Fatalf("a correct program: reward %v (%s %s)", r.Reward, r.Error, r.Details)
			}
			notices := fmt.Sprint(r.Metadata["sandbox_notices"])
			if m.jail != !strings.Contains(notices, fallbackNotice) {
				t.Fatalf("mode %s: notices %s", m.name, notices)
			}
			check(t, m)
		})
	}
}

// Without root and without a jail, Verify refuses: nothing would isolate
// the program from the caller. The error says what is missing and how to
// opt in; WithoutSandbox still runs, and says so.
func TestNonRootFallbackIsRefused(t *testing.T) {
	needGPP(t)
	if os.Geteuid() == 0 {
		t.Skip("as root the fallback isolates by uid; run the package as an unprivileged user (CI does)")
	}
	jailUnavailable = true
	defer func() { jailUnavailable = false }()
	r := NewGCCExecutionVerifier([]TestCase{{Expected: "ok"}}).Verify(context.Background(), `#include <cstdio>
int main(){ puts("ok"); }`)
	if r.Reward != 0 || !strings.Contains(r.Error, "cannot isolate") || !strings.Contains(r.Error, "bubblewrap") || !strings.Contains(r.Error, "WithoutSandbox") {
		t.Fatalf("reward %v, error %q", r.Reward, r.Error)
	}
	r = NewGCCExecutionVerifier([]TestCase{{Expected: "ok"}}, WithoutSandbox()).Verify(context.Background(), `#include <cstdio>
int main(){ puts("ok"); }`)
	if r.Reward != 1 || r.Metadata["sandbox"] != false {
		t.Fatalf("WithoutSandbox: reward %v, metadata %v", r.Reward, r.Metadata)
	}
	var sb Sandbox
	if res := sb.Run(context.Background(), t.TempDir(), time.Second, nil, "/bin/true"); !errors.Is(res.Err, errNoIsolation) {
		t.Fatalf("Sandbox.Run without root: %v", res.Err)
	}
}

// A crashing program tries to forge its own result or reach the verifier's
// processes: init's control socket through pidfd_getfd, ptrace of init, its
// /proc files. None of it works, the program keeps no capability, and the
// crash fails the test.
func TestRedTeamCannotForgeItsResult(t *testing.T) {
	code := `#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>
int main() {
  int got = 0;
  for (int pid = 1; pid <= 3; pid++) {
    if (pid == getpid()) continue;
    int pfd = syscall(SYS_pidfd_open, pid, 0);
    for (int fd = 0; pfd >= 0 && fd < 8; fd++) {
      int stolen = syscall(SYS_pidfd_getfd, pfd, fd, 0);
      if (stolen >= 0) { got++; fprintf(stderr, "took fd %d of pid %d\n", fd, pid); int zero[4] = {0, 0, 0, 0}; write(stolen, zero, sizeof zero); }
    }
    if (ptrace(PTRACE_ATTACH, pid, 0, 0) == 0) { got++; fprintf(stderr, "traced pid %d\n", pid); }
    const char* files[] = {"environ", "maps", "mem", "fd/3"};
    for (const char* f : files) {
      char p[64]; snprintf(p, sizeof p, "/proc/%d/%s", pid, f);
      int fd = open(p, O_RDONLY); char b[16];
      if (fd >= 0 && read(fd, b, sizeof b) > 0) { got++; fprintf(stderr, "read %s\n", p); }
    }
  }
  FILE* st = fopen("/proc/self/status", "r"); char line[256];
  while (st && fgets(line, sizeof line, st))
    if (!strncmp(line, "CapEff:", 7) || !strncmp(line, "CapPrm:", 7) || !strncmp(line, "CapAmb:", 7) || !strncmp(line, "CapBnd:", 7)) fputs(line, stderr);
  printf("ok %d\n", got); fflush(stdout);
  raise(SIGSEGV);
}`
	eachMode(t, func(t *testing.T, m sandboxMode) {
		r := NewGCCExecutionVerifier([]TestCase{{Expected: "ok 0"}, {Expected: "ok 0"}}).Verify(context.Background(), code)
		for i, tr := range testsOf(t, r) {
			t.Logf("test %d: %q signal %q stderr %q", i, tr.Actual, tr.Signal, tr.Stderr)
			if tr.Passed || tr.Signal != "segmentation fault" {
				t.Errorf("test %d: passed %v signal %q: a crashing program's result", i, tr.Passed, tr.Signal)
			}
			if strings.TrimSpace(tr.Actual) != "ok 0" {
				t.Errorf("test %d: the program reached the verifier's processes: %q %q", i, tr.Actual, tr.Stderr)
			}
			for _, l := range strings.Split(tr.Stderr, "\n") {
				k, v, _ := strings.Cut(l, ":")
				v = strings.TrimSpace(v)
				if k == "CapEff" || k == "CapPrm" || k == "CapAmb" || (k == "CapBnd" && m.jail) {
					if strings.Trim(v, "0") != "" {
						t.Errorf("test %d: %s %s: the program holds capabilities", i, k, v)
					}
				}
			}
		}
		if r.Reward != 0.5 {
			t.Errorf("reward %v, want 0.5 (compiled, no test passed)", r.Reward)
		}
	})
}

// A program writes wherever it can — the root, /etc, /dev, /dev/shm, /tmp,
// /var/tmp, /run/lock, its directory — then the next test of the same
// verification looks: it finds nothing (in a jail, only /tmp and /dev/shm
// were writable at all), and nothing is left on the host afterwards.
func TestRedTeamNothingWrittenStays(t *testing.T) {
	marker := fmt.Sprintf("gosqlenv-leftover-%d", os.Getpid())
	places := []string{"/", "/etc/", "/dev/", "/dev/shm/", "/tmp/", "/var/tmp/", "/run/lock/", "/var/lock/", "./"}
	quoted := ""
	for _, p := range places {
		quoted += strconv.Quote(p) + ", "
	}
	code := fmt.Sprintf(`#include <cstdio>
#include <string>
#include <vector>
#include <unistd.h>
int main() {
  const char* places[] = {%s};
  std::string m = %q; int found = 0, wrote = 0;
  for (const char* p : places) if (access((std::string(p) + m).c_str(), F_OK) == 0) { found++; fprintf(stderr, "found %%s%%s\n", p, m.c_str()); }
  std::vector<char> block(1 << 20, 'x');
  for (const char* p : places) {
    FILE* f = fopen((std::string(p) + m).c_str(), "w"); if (!f) continue;
    wrote++; for (int i = 0; i < 4; i++) fwrite(block.data(), 1, block.size(), f); fclose(f);
  }
  fprintf(stderr, "wrote in %%d places\n", wrote);
  printf("found %%d\n", found);
}`, quoted, marker)
	eachMode(t, func(t *testing.T, m sandboxMode) {
		r := NewGCCExecutionVerifier([]TestCase{{Expected: "found 0"}, {Expected: "found 0"}, {Expected: "found 0"}}).Verify(context.Background(), code)
		for i, tr := range testsOf(t, r) {
			if !tr.Passed {
				t.Errorf("test %d: %q %q: a later test saw an earlier one's files", i, tr.Actual, tr.Stderr)
			}
			// In a jail /tmp, /var/tmp (a link to it) and /dev/shm (the same
			// tmpfs) are writable, and the working directory is /tmp.
			if m.jail && !strings.Contains(tr.Stderr, "wrote in 4 places") {
				t.Errorf("test %d: %q: want writes in /tmp, /var/tmp, /dev/shm and . only", i, tr.Stderr)
			}
		}
		for _, p := range places {
			if p == "./" {
				continue
			}
			if _, err := os.Lstat(p + marker); err == nil {
				os.Remove(p + marker)
				t.Errorf("left on the host: %s", p+marker)
			}
		}
	})
}

// A thief reads the other candidates' command lines in /proc, finds their
// binaries and runs them on its own input. Verified beside correct
// candidates, it passes no test in any mode.
func TestRedTeamNoBinaryOfAnotherCandidate(t *testing.T) {
	thief := `#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <string>
#include <unistd.h>
int main() {
  char self[4096] = {0}; readlink("/proc/self/exe", self, sizeof self - 1);
  int seen = 0; auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(150)) {
    DIR* proc = opendir("/proc");
    while (dirent* e = proc ? readdir(proc) : nullptr) {
      int pid = atoi(e->d_name); if (pid <= 0 || pid == getpid()) continue;
      std::string p = std::string("/proc/") + e->d_name + "/cmdline"; FILE* f = fopen(p.c_str(), "r"); if (!f) continue;
      char buf[4096] = {0}; size_t n = fread(buf, 1, sizeof buf - 1, f); fclose(f);
      for (size_t i = 0; i < n; i += strlen(buf + i) + 1) {
        const char* arg = buf + i;
        char real[4096] = {0};
        if (!strstr(arg, "prog") || !strcmp(arg, self) || (realpath(arg, real) && !strcmp(real, self))) continue;
        seen++;
        if (access(arg, X_OK) == 0) { fprintf(stderr, "running %s\n", arg); execl(arg, arg, (char*)0); }
      }
    }
    if (proc) closedir(proc);
  }
  fprintf(stderr, "seen %d\n", seen);
  printf("nothing found\n");
}`
	square := `#include <iostream>
#include <unistd.h>
int main(){ long long x; std::cin >> x; usleep(30000); std::cout << x*x << "\n"; }`
	eachMode(t, func(t *testing.T, m sandboxMode) {
		v := NewGCCExecutionVerifier(sqTests(8), WithMaxWorkers(2))
		var codes []string
		for i := range 3 {
			codes = append(codes, square+"\n// variant "+strconv.Itoa(i), thief+"\n// variant "+strconv.Itoa(i))
		}
		seen := 0
		for i, r := range VerifyBatch(context.Background(), v, codes, 6) {
			switch {
			case i%2 == 0 && r.Reward != 1:
				t.Errorf("correct candidate %d: reward %v (%s)", i, r.Reward, r.Error)
			case i%2 == 1 && r.Reward != 0.5:
				t.Errorf("thief %d: reward %v, want 0.5: %s %q", i, r.Reward, r.Details, testsOf(t, r)[0].Stderr)
			case i%2 == 1:
				for _, tr := range testsOf(t, r) {
					var n int
					if i := strings.LastIndex(tr.Stderr, "seen"); i >= 0 {
						if _, err := fmt.Sscanf(tr.Stderr[i:], "seen %d", &n); err == nil {
							seen += n
						}
					}
				}
			}
		}
		// In a jail the thief sees no other candidate's process; in the
		// fallback it sees their command lines (the attack had targets),
		// and the binaries they name are out of its reach.
		t.Logf("the thieves saw %d command lines naming a binary", seen)
		if m.jail && seen > 0 {
			t.Errorf("jailed thieves saw %d other candidates' command lines", seen)
		}
	})
}

// Processes a program leaves behind — a child in a session of its own that
// double-forks and sleeps — do not outlive the verification, and so do not
// hold the process limit of the next one.
func TestRedTeamNoProcessOutlivesItsVerification(t *testing.T) {
	name := fmt.Sprintf("gsrt%d", os.Getpid()%100000) // a process name (at most 15 bytes)
	code := fmt.Sprintf(`#include <cstdio>
#include <sys/prctl.h>
#include <unistd.h>
int main() {
  for (int i = 0; i < 6; i++) if (fork() == 0) { setsid(); if (fork() == 0) { prctl(PR_SET_NAME, %q); sleep(120); } _exit(0); }
  usleep(100000); printf("left\n");
}`, name)
	forker := `#include <cstdio>
#include <sys/wait.h>
#include <unistd.h>
int main() { int ok = 0; for (int i = 0; i < 16; i++) { pid_t p = fork(); if (p == 0) { usleep(50000); _exit(0); } if (p > 0) ok++; }
  while (wait(nullptr) > 0) {} printf("%d\n", ok); }`
	eachMode(t, func(t *testing.T, m sandboxMode) {
		r := NewGCCExecutionVerifier([]TestCase{{Expected: "left"}, {Expected: "left"}}).Verify(context.Background(), code)
		if r.Reward != 1 {
			t.Fatalf("reward %v (%s)", r.Reward, r.Error)
		}
		if left := processesNamed(name); len(left) > 0 {
			for _, pid := range left {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Errorf("%d processes outlived the verification", len(left))
		}
		lim := RunLimits
		lim.Processes = 20
		r = NewGCCExecutionVerifier([]TestCase{{Expected: "16"}, {Expected: "16"}}, WithRunLimits(lim)).Verify(context.Background(), forker)
		if r.Reward != 1 {
			t.Errorf("a later verification could not fork: %s %q", r.Details, testsOf(t, r)[0].Actual)
		}
	})
}

// processesNamed lists the host's live processes (not zombies) whose name
// (comm) is name.
func processesNamed(name string) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, err := os.ReadFile("/proc/" + e.Name() + "/comm")
		if err != nil || strings.TrimSpace(string(comm)) != name {
			continue
		}
		if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			if i := strings.LastIndexByte(string(st), ')'); i > 0 && strings.HasPrefix(string(st[i+1:]), " Z") {
				continue
			}
		}
		pids = append(pids, pid)
	}
	return pids
}

// The kernel keyrings are no channel between verifications: a program
// cannot store a key (the user keyring outlives it) nor find one.
func TestRedTeamNoKeyringChannel(t *testing.T) {
	desc := fmt.Sprintf("gosqlenv-redteam-%d", os.Getpid())
	store := fmt.Sprintf(`#include <cstdio>
#include <sys/syscall.h>
#include <unistd.h>
int main() {
  long id = syscall(SYS_add_key, "user", %q, "secret", 6, -4 /* KEY_SPEC_USER_KEYRING */);
  long id2 = syscall(SYS_add_key, "user", %q, "secret", 6, -3 /* KEY_SPEC_SESSION_KEYRING */);
  printf("%%s\n", id < 0 && id2 < 0 ? "denied" : "stored");
}`, desc, desc)
	find := fmt.Sprintf(`#include <cstdio>
#include <sys/syscall.h>
#include <unistd.h>
int main() { long id = syscall(SYS_request_key, "user", %q, 0, 0); printf("%%s\n", id < 0 ? "absent" : "found"); }`, desc)
	eachMode(t, func(t *testing.T, m sandboxMode) {
		v := NewGCCExecutionVerifier([]TestCase{{Expected: "denied"}})
		if r := v.Verify(context.Background(), store); r.Reward != 1 {
			t.Errorf("add_key: %s %q", r.Details, testsOf(t, r)[0].Actual)
		}
		v = NewGCCExecutionVerifier([]TestCase{{Expected: "absent"}})
		if r := v.Verify(context.Background(), find); r.Reward != 1 {
			t.Errorf("request_key: %s %q", r.Details, testsOf(t, r)[0].Actual)
		}
	})
}

// A directory tree deeper than PATH_MAX, with a directory nobody may enter
// on top, is gone before the next test, and from the host. It is built in
// the working directory, the one place every mode lets a program write (a
// jail's /tmp; the fallback's command directory).
func TestRedTeamDeepTreeIsRemoved(t *testing.T) {
	marker := fmt.Sprintf("gosqlenv-deep-%d", os.Getpid())
	code := fmt.Sprintf(`#include <cstdio>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
int main() {
  std::string top = std::string("./") + %q;
  bool was = access(top.c_str(), F_OK) == 0;
  if (mkdir(top.c_str(), 0700) == 0 && chdir(top.c_str()) == 0) {
    std::string name(200, 'd'); int depth = 0;
    while (depth < 400 && mkdir(name.c_str(), 0700) == 0 && chdir(name.c_str()) == 0) depth++;
    FILE* f = fopen("x", "w"); if (f) fclose(f);
    fprintf(stderr, "depth %%d, %%d bytes of path\n", depth, depth * 201);
    chmod(top.c_str(), 0);
  }
  printf("%%s\n", was ? "dirty" : "clean");
}`, marker)
	eachMode(t, func(t *testing.T, m sandboxMode) {
		r := NewGCCExecutionVerifier([]TestCase{{Expected: "clean"}, {Expected: "clean"}}).Verify(context.Background(), code)
		for i, tr := range testsOf(t, r) {
			if !tr.Passed || !strings.Contains(tr.Stderr, "depth 400") {
				t.Errorf("test %d: %q %q", i, tr.Actual, tr.Stderr)
			}
		}
		if _, err := os.Lstat(filepath.Join("/tmp", marker)); err == nil {
			os.RemoveAll(filepath.Join("/tmp", marker))
			t.Errorf("the tree is left on the host")
		}
		root, err := privateRoot()
		if err != nil {
			t.Fatal(err)
		}
		left, _ := filepath.Glob(filepath.Join(root, "*", marker))
		left2, _ := filepath.Glob(filepath.Join(root, "*", "*", marker))
		if len(left)+len(left2) > 0 {
			t.Errorf("the tree is left on the host: %v", append(left, left2...))
		}
	})
}

// No new namespaces: unshare and clone with namespace flags fail, so
// bubblewrap cannot run inside either.
func TestRedTeamNoNewNamespaces(t *testing.T) {
	code := `#include <cstdio>
#include <sched.h>
#include <unistd.h>
int main() {
  int user = unshare(CLONE_NEWUSER), mnt = unshare(CLONE_NEWUSER | CLONE_NEWNS), net = unshare(CLONE_NEWNET);
  printf("%s\n", user < 0 && mnt < 0 && net < 0 ? "denied" : "allowed");
}`
	eachMode(t, func(t *testing.T, m sandboxMode) {
		r := NewGCCExecutionVerifier([]TestCase{{Expected: "denied"}}).Verify(context.Background(), code)
		if r.Reward != 1 {
			t.Errorf("%s %q", r.Details, testsOf(t, r)[0].Actual)
		}
	})
}

// A program holds only its standard streams: no descriptor of the verifier
// or of the launcher is inherited.
func TestRedTeamNoInheritedDescriptors(t *testing.T) {
	code := `#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <unistd.h>
int main() {
  DIR* d = opendir("/proc/self/fd"); int extra = 0;
  while (dirent* e = d ? readdir(d) : nullptr) {
    int fd = atoi(e->d_name); if (e->d_name[0] == '.' || fd <= 2 || fd == dirfd(d)) continue;
    char t[256] = {0}; char p[64]; snprintf(p, sizeof p, "/proc/self/fd/%d", fd); readlink(p, t, sizeof t - 1);
    fprintf(stderr, "fd %d -> %s\n", fd, t); extra++;
  }
  printf("%d\n", extra);
}`
	eachMode(t, func(t *testing.T, m sandboxMode) {
		r := NewGCCExecutionVerifier([]TestCase{{Expected: "0"}}).Verify(context.Background(), code)
		if r.Reward != 1 {
			t.Errorf("inherited descriptors: %q %q", testsOf(t, r)[0].Actual, testsOf(t, r)[0].Stderr)
		}
	})
}

// A compiler installed outside /usr (as in /opt/gcc-14) compiles in every
// mode; one under /tmp, which the jail replaces, is refused with an error
// that names it.
func TestCompilerOutsideUsr(t *testing.T) {
	base := "/opt"
	if os.Geteuid() != 0 {
		home, err := os.UserHomeDir()
		if err != nil {
			t.Skip("no home directory to install a compiler in")
		}
		base = home
	}
	prefix, err := os.MkdirTemp(base, "gosqlenv-cc-")
	if err != nil {
		t.Skipf("cannot install a compiler under %s: %v", base, err)
	}
	defer os.RemoveAll(prefix)
	for _, d := range []string{prefix, filepath.Join(prefix, "bin")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		os.Chmod(d, 0o755)
	}
	comp := filepath.Join(prefix, "bin", "g++")
	if err := os.WriteFile(comp, []byte("#!/bin/sh\nexec /usr/bin/g++ \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	eachMode(t, func(t *testing.T, m sandboxMode) {
		v := NewGCCExecutionVerifier(sqTests(2), WithCompiler(comp))
		if r := v.Verify(context.Background(), `#include <iostream>
int main(){ long long x; std::cin >> x; std::cout << x*x << "\n"; }`); r.Reward != 1 {
			t.Errorf("compiler %s: reward %v (%s)", comp, r.Reward, r.Error)
		}
	})
	if findTool("bwrap") == "" {
		return
	}
	tmpPrefix := t.TempDir()
	tmpComp := filepath.Join(tmpPrefix, "bin", "g++")
	os.MkdirAll(filepath.Dir(tmpComp), 0o755)
	if err := os.WriteFile(tmpComp, []byte("#!/bin/sh\nexec /usr/bin/g++ \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := NewGCCExecutionVerifier(sqTests(1), WithCompiler(tmpComp)).Verify(context.Background(), "int main(){}")
	if jailBroken.Load() == nil && (r.Reward != 0 || !strings.Contains(r.Error, tmpComp) || !strings.Contains(r.Error, "under /tmp")) {
		t.Errorf("compiler under /tmp: reward %v, error %q", r.Reward, r.Error)
	}
}

// System V and POSIX message-queue IPC objects outlive their process: a
// program cannot make one (memory left behind, a channel to the next
// command or verification).
func TestRedTeamNoLastingIPC(t *testing.T) {
	code := `#include <cstdio>
#include <fcntl.h>
#include <mqueue.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
int main() {
  int shm = shmget(IPC_PRIVATE, 1 << 20, IPC_CREAT | 0600), msg = msgget(IPC_PRIVATE, IPC_CREAT | 0600), sem = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
  mqd_t mq = mq_open("/gosqlenv-redteam", O_CREAT | O_RDWR, 0600, nullptr);
  printf("%s\n", shm < 0 && msg < 0 && sem < 0 && mq == (mqd_t)-1 ? "denied" : "made");
}`
	eachMode(t, func(t *testing.T, m sandboxMode) {
		r := NewGCCExecutionVerifier([]TestCase{{Expected: "denied"}}, WithFlags("-std=c++17", "-lrt")).Verify(context.Background(), code)
		if r.Reward != 1 {
			t.Errorf("%s %s %q", r.Error, r.Details, testsOf(t, r)[0].Actual)
		}
	})
}

// Issue 55: a candidate can neither lower another candidate's reward nor
// talk to it. A planter reaches for the jail's init — its limits
// (prlimit64 on pid 1), priority, CPU affinity, OOM score and core-dump
// filter — then correct programs verify after it: each scores 1 and sees
// the same limits and /proc values as one verified before the planter. In
// a user namespace commands share init's uid, so the planter's calls are
// refused (seccomp) or, where they reach /proc/1, the jail is not reused.
func TestRedTeamPlanterCannotHurtLaterVerifications(t *testing.T) {
	planter := `#include <cstdio>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
int main() {
  struct rlimit lim[] = {{4, 4}, {1, 1}, {1, 1}, {262144, 262144}};
  int which[] = {RLIMIT_NOFILE, RLIMIT_NPROC, RLIMIT_CPU, RLIMIT_STACK};
  int hit = 0;
  for (int i = 0; i < 4; i++) hit += syscall(SYS_prlimit64, 1, which[i], &lim[i], nullptr) == 0;
  hit += setpriority(PRIO_PROCESS, 1, 19) == 0;
  cpu_set_t one; CPU_ZERO(&one); CPU_SET(0, &one);
  hit += sched_setaffinity(1, sizeof one, &one) == 0;
  struct rlimit soft = {7, 7}; hit += syscall(SYS_prlimit64, 1, RLIMIT_RTTIME, &soft, nullptr) == 0;
  const char* files[][2] = {{"/proc/1/oom_score_adj", "1000"}, {"/proc/1/coredump_filter", "0x7f"}};
  for (auto& f : files) { FILE* w = fopen(f[0], "w"); if (w) { hit += fputs(f[1], w) >= 0; fclose(w); } }
  fprintf(stderr, "planted %d\n", hit);
  puts("ok");
}`
	victim := `#include <cstdio>
#include <sys/resource.h>
#include <unistd.h>
int main() {
  int which[] = {RLIMIT_NOFILE, RLIMIT_NPROC, RLIMIT_CPU, RLIMIT_STACK, RLIMIT_RTTIME};
  for (int w : which) { struct rlimit l; getrlimit(w, &l); fprintf(stderr, "%d %llu %llu\n", w, (unsigned long long)l.rlim_cur, (unsigned long long)l.rlim_max); }
  const char* files[] = {"/proc/self/oom_score_adj", "/proc/self/coredump_filter"};
  for (const char* f : files) { FILE* r = fopen(f, "r"); char b[32] = {0}; if (r) { fgets(b, sizeof b, r); fclose(r); } fprintf(stderr, "%s %s", f, b); }
  fprintf(stderr, "nice %d\n", getpriority(PRIO_PROCESS, 0));
  FILE* fds = popen("true", "r"); if (fds) pclose(fds);
  puts("ok");
}`
	eachMode(t, func(t *testing.T, m sandboxMode) {
		verify := func(code string) (Result, string) {
			r := NewGCCExecutionVerifier([]TestCase{{Expected: "ok"}, {Expected: "ok"}}).Verify(context.Background(), code)
			return r, testsOf(t, r)[0].Stderr
		}
		before, seen := verify(victim)
		if before.Reward != 1 {
			t.Fatalf("victim before the planter: reward %v (%s)", before.Reward, before.Error)
		}
		for round := range 2 {
			p, planted := verify(planter)
			t.Logf("planter %d: reward %v %s", round, p.Reward, strings.TrimSpace(planted))
			for i := range 3 {
				r, state := verify(victim)
				if r.Reward != 1 {
					t.Errorf("round %d victim %d after a planter: reward %v (%s %s)", round, i, r.Reward, r.Error, r.Details)
				}
				if state != seen {
					t.Errorf("round %d victim %d runs under what the planter left:\n%s\nbefore the planter:\n%s", round, i, state, seen)
				}
			}
		}
	})
}

// Issue 55: no channel through locks on files every candidate can open
// (the read-only system files): flock and fcntl record locks are refused.
func TestRedTeamNoLockChannel(t *testing.T) {
	code := `#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>
int main() {
  int fd = open("/usr/bin/env", O_RDONLY);
  if (fd < 0) fd = open("/bin/sh", O_RDONLY);
  int got = 0;
  if (flock(fd, LOCK_SH | LOCK_NB) == 0) { got++; fprintf(stderr, "flock\n"); }
  struct flock l = {}; l.l_type = F_RDLCK; l.l_whence = SEEK_SET; l.l_start = 0xa5; l.l_len = 1;
  if (fcntl(fd, F_SETLK, &l) == 0) { got++; fprintf(stderr, "F_SETLK\n"); }
  if (fcntl(fd, F_OFD_SETLK, &l) == 0) { got++; fprintf(stderr, "F_OFD_SETLK\n"); }
  struct flock q = {}; q.l_type = F_WRLCK; q.l_whence = SEEK_SET; q.l_len = 0;
  if (fcntl(fd, F_GETLK, &q) == 0) { got++; fprintf(stderr, "F_GETLK\n"); }
  printf("ok %d\n", got);
}`
	eachMode(t, func(t *testing.T, m sandboxMode) {
		r := NewGCCExecutionVerifier([]TestCase{{Expected: "ok 0"}}).Verify(context.Background(), code)
		if r.Reward != 1 {
			tr := testsOf(t, r)[0]
			t.Errorf("locks on a shared file: %q %q (reward %v)", tr.Actual, tr.Stderr, r.Reward)
		}
	})
}

// Issue 55: system calls the filter denies fail with EPERM, unknown numbers
// (syscall(-1), x32's, numbers past the newest) with ENOSYS as on a kernel
// without them — never SIGSYS — and socket() of any family with EACCES (no
// hypervisor, kernel, host unix or network socket; socketpair stays); the
// program runs on and prints what it saw.
func TestRedTeamSeccompAnswersWithErrors(t *testing.T) {
	code := `#include <cerrno>
#include <cstdio>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
int err(long r) { return r < 0 ? errno : 0; }
int main() {
  long unknown[] = {-1, 0x40000000L + 39, 500, 1023};
  for (long n : unknown) printf("%d ", err(syscall(n, 0, 0, 0)));
  long denied[] = {447 /* memfd_secret */, 444 /* landlock_create_ruleset */, 467 /* open_tree_attr */,
                   424 /* pidfd_send_signal */, SYS_sysfs, SYS_modify_ldt, SYS_vmsplice, SYS_personality};
  for (long n : denied) printf("%d ", err(syscall(n, 0, 0, 0, 0)));
  int sv[2];
  printf("%d %d %d %d %d\n", err(socket(40 /* AF_VSOCK */, SOCK_STREAM, 0)), err(socket(16 /* AF_NETLINK */, SOCK_RAW, 0)),
         err(socket(AF_UNIX, SOCK_STREAM, 0)), err(socket(AF_INET, SOCK_DGRAM, 0)), err(socketpair(AF_UNIX, SOCK_STREAM, 0, sv)));
}`
	want := fmt.Sprintf("%d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d 0", syscall.ENOSYS, syscall.ENOSYS, syscall.ENOSYS, syscall.ENOSYS,
		syscall.EPERM, syscall.EPERM, syscall.EPERM, syscall.EPERM, syscall.EPERM, syscall.EPERM, syscall.EPERM, syscall.EPERM,
		syscall.EACCES, syscall.EACCES, syscall.EACCES, syscall.EACCES)
	eachMode(t, func(t *testing.T, m sandboxMode) {
		r := NewGCCExecutionVerifier([]TestCase{{Expected: want}}).Verify(context.Background(), code)
		if r.Reward != 1 {
			tr := testsOf(t, r)[0]
			t.Errorf("got %q (signal %q), want %q", tr.Actual, tr.Signal, want)
		}
	})
}

// Issue 55: with contains matching, printing every candidate answer (0 to
// 99,999) does not pass a numeric task.
func TestRedTeamContainsSpray(t *testing.T) {
	code := `#include <cstdio>
int main() { for (int i = 0; i < 100000; i++) printf("%d\n", i); }`
	eachMode(t, func(t *testing.T, m sandboxMode) {
		r := NewGCCExecutionVerifier([]TestCase{{Expected: "4242"}}, WithMatch(MatchContains)).Verify(context.Background(), code)
		if r.Reward != 0.5 {
			t.Errorf("a spray of every number: reward %v, want 0.5 (compiled, no test passed)", r.Reward)
		}
	})
}

// Issue 55: a program cannot rewrite its own executable (in the
// user-namespace jail it has the file owner's uid; this kernel refuses with
// ETXTBSY, the red team's did not): the jail runs a sealed copy, so the
// write fails whatever the kernel, and the next test runs the binary as
// compiled.
func TestRedTeamCannotRewriteItsBinary(t *testing.T) {
	code := `#include <cstdio>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
int main() {
  struct stat st; stat("/proc/self/exe", &st);
  int fd = open("/proc/self/exe", O_WRONLY | O_APPEND);
  int wrote = fd >= 0 && write(fd, "12345678", 8) == 8;
  fprintf(stderr, "size %ld\n", (long)st.st_size);
  printf("%d\n", wrote);
}`
	eachMode(t, func(t *testing.T, m sandboxMode) {
		r := NewGCCExecutionVerifier([]TestCase{{Expected: "0"}, {Expected: "0"}}).Verify(context.Background(), code)
		trs := testsOf(t, r)
		if r.Reward != 1 || trs[0].Stderr != trs[1].Stderr {
			t.Errorf("the program wrote its binary: %q %q, then %q %q", trs[0].Actual, trs[0].Stderr, trs[1].Actual, trs[1].Stderr)
		}
	})
}

// Issue 55: a program that includes a host file cannot read it back through
// the compiler's messages, which quote the lines they complain about.
func TestRedTeamCompileErrorsShowNoHostFile(t *testing.T) {
	passwd, err := os.ReadFile("/etc/passwd")
	if err != nil || len(passwd) == 0 {
		t.Skip("no /etc/passwd here")
	}
	first := strings.SplitN(string(passwd), "\n", 2)[0]
	eachMode(t, func(t *testing.T, m sandboxMode) {
		r := NewGCCExecutionVerifier([]TestCase{{Expected: "ok"}}).Verify(context.Background(), "#include \"/etc/passwd\"\nint main() {}\n")
		if r.Reward != 0 {
			t.Fatalf("reward %v for a program that does not compile", r.Reward)
		}
		all := r.Error + r.Details + fmt.Sprint(r.Metadata)
		if strings.Contains(all, first) || strings.Contains(all, "root:x:0") {
			t.Errorf("the compiler's messages show /etc/passwd: %s", r.Error)
		}
	})
}

// Issue 55: memory is bounded per verification in every mode — processes
// together, and what a program writes to /dev/shm (the host's, in the
// fallback): eight processes of 48 MiB each and 200 MiB in /dev/shm (200
// files, each under the file-size limit) are not all held under a 128 MiB
// bound.
func TestRedTeamMemoryBoundInEveryMode(t *testing.T) {
	lim := RunLimits
	lim.Memory, lim.TotalMemory = 64<<20, 128<<20
	code := `#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
int main() {
  static char block[1 << 20]; memset(block, 7, sizeof block); long shm = 0;
  for (int i = 0; i < 200; i++) {
    char path[64]; snprintf(path, sizeof path, "/dev/shm/gsv-shm-%d-%d", getpid(), i);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
    if (fd < 0 || write(fd, block, sizeof block) != (long)sizeof block) break;
    close(fd); shm++; }
  for (int i = 0; i < 8; i++) if (fork() == 0) {
    volatile char* p = (volatile char*)malloc(48 << 20); if (!p) _exit(1);
    for (int k = 0; k < (48 << 20); k += 4096) p[k] = 1;
    sleep(1); _exit(p[4096] == 1 ? 0 : 1); }
  int held = 0, st; while (wait(&st) > 0) if (WIFEXITED(st) && WEXITSTATUS(st) == 0) held++;
  for (int i = 0; i < shm; i++) { char path[64]; snprintf(path, sizeof path, "/dev/shm/gsv-shm-%d-%d", getpid(), i); unlink(path); }
  printf("%d %ld\n", held, shm);
}`
	eachMode(t, func(t *testing.T, m sandboxMode) {
		r := NewGCCExecutionVerifier([]TestCase{{Expected: "8 200"}}, WithRunLimits(lim)).Verify(context.Background(), code)
		tr := testsOf(t, r)[0]
		notices := fmt.Sprint(r.Metadata["sandbox_notices"])
		t.Logf("held, MiB in /dev/shm: %q (signal %q)", tr.Actual, tr.Signal)
		if strings.Contains(notices, "limited per process only") {
			t.Skipf("no memory cgroup for this mode here: %s", notices)
		}
		if tr.Passed {
			t.Errorf("8 × 48 MiB and 200 MiB of /dev/shm held under a 128 MiB bound")
		}
		var held, shm int
		if n, _ := fmt.Sscan(strings.TrimSpace(tr.Actual), &held, &shm); n == 2 && (held > 2 || shm > 128) {
			t.Errorf("%d processes held 48 MiB and %d MiB went to /dev/shm under a 128 MiB bound", held, shm)
		}
	})
}

// Issue 55 #5: in every mode a program sees nothing of the host beyond
// the system directories: no host process in /proc (a jail's own two are
// fine), no /etc/passwd, not the project tree, /root or /home, and it
// holds no capability that a setuid file could give back (empty bounding
// set). The fallback confines its commands with Landlock; without Landlock
// (older kernels) its notices say so and this test is skipped there.
func TestRedTeamSeesNoHost(t *testing.T) {
	_, src, _, _ := runtime.Caller(0)
	code := fmt.Sprintf(`#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <sys/prctl.h>
int main() {
  int procs = 0; DIR* d = opendir("/proc");
  while (dirent* e = d ? readdir(d) : nullptr) if (atoi(e->d_name) > 0) procs++;
  int caps = 0; for (int c = 0; c < 64; c++) caps += prctl(PR_CAPBSET_READ, c, 0, 0, 0) == 1;
  bool passwd = fopen("/etc/passwd", "r") != nullptr, project = opendir(%q) != nullptr;
  bool root = opendir("/root") != nullptr, home = opendir("/home") != nullptr;
  printf("hostprocs=%%d passwd=%%d project=%%d root=%%d home=%%d capbnd=%%d\n", procs > 2, passwd, project, root, home, caps);
}`, filepath.Dir(src))
	eachMode(t, func(t *testing.T, m sandboxMode) {
		r := NewGCCExecutionVerifier([]TestCase{{Expected: "hostprocs=0 passwd=0 project=0 root=0 home=0 capbnd=0"}}).Verify(context.Background(), code)
		if !m.jail && landlockABI() < 1 {
			t.Skip("no Landlock in this kernel: the fallback has no filesystem isolation (its notices say so)")
		}
		if tr := testsOf(t, r)[0]; !tr.Passed {
			t.Errorf("the program saw the host: %q %q", tr.Actual, tr.Stderr)
		}
	})
}

// Issue 55 #5: two candidates verified at the same time cannot pass bytes
// through the places every uid can write (/tmp, /var/tmp, /dev/shm,
// /run/lock, /dev/mqueue) or an abstract unix socket. The writer leaves a
// file in each and listens on a socket for 4 s; the reader looks for them
// meanwhile.
func TestRedTeamNoChannelBetweenConcurrentCandidates(t *testing.T) {
	places := fmt.Sprintf(`const char* places[] = {"/tmp/", "/var/tmp/", "/dev/shm/", "/run/lock/", "/dev/mqueue/"};
const char* name = "gosqlenv-channel-%d";
const char* sock = "gosqlenv-channel-sock-%d";`, os.Getpid(), os.Getpid())
	writer := `#include <cstdio>
#include <cstring>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
` + places + `
int main() {
  int wrote = 0;
  for (const char* p : places) { FILE* f = fopen((std::string(p) + name).c_str(), "w"); if (f) { wrote++; fputs("secret", f); fclose(f); } }
  int s = socket(AF_UNIX, SOCK_STREAM, 0); sockaddr_un a{}; a.sun_family = AF_UNIX; memcpy(a.sun_path + 1, sock, strlen(sock));
  bool listening = s >= 0 && bind(s, (sockaddr*)&a, sizeof(sa_family_t) + 1 + strlen(sock)) == 0 && listen(s, 4) == 0;
  fprintf(stderr, "wrote %d, listening %d\n", wrote, listening);
  usleep(4000000);
  puts("done");
}`
	reader := `#include <cstdio>
#include <cstring>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
` + places + `
int main() {
  for (int i = 0; i < 80; i++) {
    for (const char* p : places) { FILE* f = fopen((std::string(p) + name).c_str(), "r"); if (f) { printf("found %s\n", p); return 0; } }
    int s = socket(AF_UNIX, SOCK_STREAM, 0); sockaddr_un a{}; a.sun_family = AF_UNIX; memcpy(a.sun_path + 1, sock, strlen(sock));
    if (s >= 0 && connect(s, (sockaddr*)&a, sizeof(sa_family_t) + 1 + strlen(sock)) == 0) { puts("found socket"); return 0; }
    if (s >= 0) close(s);
    usleep(50000);
  }
  puts("none");
}`
	eachMode(t, func(t *testing.T, m sandboxMode) {
		if !m.jail && landlockABI() < 1 {
			t.Skip("no Landlock in this kernel: the fallback has no filesystem isolation (its notices say so)")
		}
		done := make(chan Result, 1)
		go func() {
			done <- NewGCCExecutionVerifier([]TestCase{{Expected: "done", Timeout: 10 * time.Second}}).Verify(context.Background(), writer)
		}()
		r := NewGCCExecutionVerifier([]TestCase{{Expected: "none", Timeout: 10 * time.Second}}).Verify(context.Background(), reader)
		w := <-done
		if tr := testsOf(t, w)[0]; !tr.Passed {
			t.Fatalf("writer: %q %q %s", tr.Actual, tr.Stderr, w.Error)
		}
		if tr := testsOf(t, r)[0]; !tr.Passed {
			t.Errorf("the reader got the writer's bytes: %q (writer: %q)", tr.Actual, testsOf(t, w)[0].Stderr)
		}
	})
}

// Issue 55 #6: the PID counter carries nothing from one verification to
// the next. A planter makes 150 processes; a program verified after it
// gets the same pid, and its child the same pid, as one verified before
// it: a reused jail's counter is put back before each command (or, where
// init cannot, a jail whose counter moved is not reused), and the fallback
// gives each command a PID namespace of its own. Without namespaces the
// host's counter is everyone's: that mode is skipped.
func TestRedTeamNoPIDCounterChannel(t *testing.T) {
	planter := `#include <cstdio>
#include <sys/wait.h>
#include <unistd.h>
int main() {
  for (int i = 0; i < 150; i++) { pid_t p = fork(); if (p == 0) _exit(0); if (p > 0) waitpid(p, nullptr, 0); }
  puts("ok");
}`
	probe := `#include <cstdio>
#include <sys/wait.h>
#include <unistd.h>
int main() {
  int fd[2]; pipe(fd); pid_t c = fork();
  if (c == 0) { _exit(0); }
  waitpid(c, nullptr, 0);
  printf("ok\n"); fprintf(stderr, "pid %d child %d\n", getpid(), c);
}`
	eachMode(t, func(t *testing.T, m sandboxMode) {
		if m.name == "root fallback without namespaces" {
			t.Skip("without a PID namespace every process takes the host's counter")
		}
		verify := func(code string) string {
			r := NewGCCExecutionVerifier([]TestCase{{Expected: "ok"}}).Verify(context.Background(), code)
			tr := testsOf(t, r)[0]
			if !tr.Passed {
				t.Fatalf("%q %q %s", tr.Actual, tr.Stderr, r.Error)
			}
			return tr.Stderr
		}
		before := verify(probe)
		for round := range 2 {
			verify(planter)
			if after := verify(probe); after != before {
				t.Errorf("round %d: after a planter %q, before it %q", round, after, before)
			}
		}
	})
}
