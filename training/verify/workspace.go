package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// jailBroken records why bubblewrap could not set a sandbox up on this
// machine (for example in a container without the privilege to mount), so
// that later verifications go straight to the fallback.
var jailBroken atomic.Pointer[string]

// fallbackNotice says how the per-command fallback sandbox (root only)
// differs from a jail; where the kernel has no Landlock, each result also
// carries noLandlockNotice.
const fallbackNotice = "per-command fallback sandbox: each command runs as a pool uid of its own, confined by Landlock (where the kernel has it) to the system directories and its own directory"

// errNoIsolation refuses to run candidates where nothing can isolate them:
// without root and without a working bubblewrap, a program would run as the
// caller, with the caller's files and processes in reach.
var errNoIsolation = errors.New("sandbox: cannot isolate candidate programs here: without root, bubblewrap (Debian/Ubuntu package " + bwrapPackage +
	") must be installed and able to create user namespaces (in Docker: docker run --security-opt seccomp=unconfined --security-opt apparmor=unconfined --security-opt systempaths=unconfined ...; see README, \"Code sandbox\"); or run as root; " +
	"to run untrusted programs with no isolation at all, opt in with verify.WithoutSandbox()")

// refusal is errNoIsolation with the reason bubblewrap could not be used.
func refusal(why string) error { return fmt.Errorf("%w (%s)", errNoIsolation, why) }

// workspace is one verification's directory and the way its commands run.
type workspace struct {
	dir       string
	noSandbox bool

	mu      sync.Mutex
	jailed  bool // commands run in bubblewrap jails
	notices []string
}

// newWorkspace makes a verification's directory: under privateRoot, where no
// sandbox uid can enter, unless noSandbox. Without root it refuses where no
// jail can be had (errNoIsolation).
func newWorkspace(noSandbox bool) (*workspace, error) {
	ws := &workspace{noSandbox: noSandbox}
	if noSandbox {
		dir, err := os.MkdirTemp("", "gosqlenv-verify-")
		ws.dir = dir
		return ws, err
	}
	why := ""
	switch {
	case findTool("bwrap") == "" || jailUnavailable:
		why = errNoBwrap.Error()
	case jailBroken.Load() != nil:
		why = *jailBroken.Load()
	}
	if why != "" && os.Geteuid() != 0 {
		return nil, refusal(why)
	}
	root, err := privateRoot()
	if err != nil {
		return nil, err
	}
	if ws.dir, err = os.MkdirTemp(root, "v-"); err != nil {
		return nil, err
	}
	ws.jailed = true
	if why != "" {
		ws.fallback(why)
	}
	return ws, nil
}

// fallback switches the workspace to the per-command sandbox and says why.
func (ws *workspace) fallback(why string) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if !ws.jailed {
		return
	}
	ws.jailed = false
	ws.notices = append(ws.notices, why+": "+fallbackNotice)
}

// commandDir makes a fresh, empty directory for one command: in the
// workspace for a jail (which binds it), or directly under privateRoot for
// the fallback, whose commands reach it by name through privateRoot (0711)
// while the workspace itself, with the source and the binary, stays closed
// to every sandbox uid.
func (ws *workspace) commandDir(name string) (string, error) {
	if ws.useJail() {
		return freshDir(ws.dir, name)
	}
	root, err := privateRoot()
	if err != nil {
		return "", err
	}
	return freshDir(root, name)
}

func (ws *workspace) useJail() bool {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.jailed
}

// remove deletes the workspace (without following links).
func (ws *workspace) remove() { _ = os.RemoveAll(ws.dir) }

// sandboxEnv is the whole environment of a sandboxed command.
func sandboxEnv(home string) []string {
	return []string{"PATH=/usr/bin:/bin", "HOME=" + home, "TMPDIR=" + home, "LANG=C", "LC_ALL=C"}
}

// poolUID takes a uid of its own for a jail when the caller is root (-1
// otherwise); release gives it back once no process of it is left.
func poolUID(ctx context.Context) (uid int, release func(), notice string, err error) {
	if os.Geteuid() != 0 {
		return -1, func() {}, "", nil
	}
	slot, notice, err := sandboxUIDs.acquire(ctx)
	if err != nil {
		return 0, nil, "", err
	}
	return SandboxUIDBase + slot, func() { sandboxUIDs.settle(slot, 0, 0) }, notice, nil
}

// openJailOrFallback opens a jail; a jail bubblewrap cannot set up switches
// the workspace (and later ones) to the fallback and returns nil.
func (ws *workspace) openJailOrFallback(spec jailSpec) (*jail, error) {
	j, err := openJail(spec)
	if err == nil {
		return j, nil
	}
	if _, ok := errors.AsType[*jailSetupError](err); ok {
		why := err.Error()
		jailBroken.CompareAndSwap(nil, &why)
		if os.Geteuid() != 0 {
			return nil, refusal(why)
		}
		ws.fallback(why)
		return nil, nil
	}
	return nil, err
}

// compile compiles main.cpp into prog.
func (ws *workspace) compile(ctx context.Context, comp string, flags []string, lim Limits, timeout time.Duration) RunResult {
	bin := filepath.Join(ws.dir, "prog")
	argv := append(append([]string{comp}, flags...), "main.cpp", "-o", "prog") // run in the source's directory
	if ws.noSandbox {
		sb := Sandbox{Limits: lim, NoIsolation: true}
		return sb.Run(ctx, ws.dir, timeout, nil, argv...)
	}
	jailed := ws.useJail()
	out, err := ws.commandDir("out")
	if err != nil {
		return RunResult{Err: err}
	}
	defer os.RemoveAll(out)
	var r RunResult
	if jailed {
		if r, jailed, err = ws.compileInJail(ctx, comp, flags, lim, timeout, out); err != nil {
			return RunResult{Err: err}
		}
		if !jailed {
			// bubblewrap failed: the fallback's commands need a directory they can reach.
			if out, err = ws.commandDir("out"); err != nil {
				return RunResult{Err: err}
			}
			defer os.RemoveAll(out)
		}
	}
	if !jailed {
		if err := copyFile(filepath.Join(ws.dir, "main.cpp"), filepath.Join(out, "main.cpp"), 0o644); err != nil {
			return RunResult{Err: err}
		}
		sb := Sandbox{Limits: lim, Own: out, Reads: compilerRoot(comp)}
		r = sb.Run(ctx, out, timeout, nil, argv...)
	}
	if r.OK() {
		err := readBack(out, "prog", bin, lim.FileSize)
		if errors.Is(err, syscall.ENOENT) { // MinGW names its output prog.exe
			err = readBack(out, "prog.exe", bin, lim.FileSize)
		}
		if err != nil {
			r.Err = err
		}
	}
	return r
}

// compileInJail compiles main.cpp into out in a jail that sees the source
// read-only and out writable. jailed is false when bubblewrap could not set
// a jail up (the workspace has then switched to the fallback).
func (ws *workspace) compileInJail(ctx context.Context, comp string, flags []string, lim Limits, timeout time.Duration, out string) (r RunResult, jailed bool, err error) {
	extra := compilerRoot(comp)
	for _, d := range extra {
		for _, hidden := range []string{"/tmp", "/var/tmp", "/dev", "/proc"} {
			if d == hidden || strings.HasPrefix(d, hidden+"/") {
				return r, false, fmt.Errorf("sandbox: the compiler %s is installed under %s, which the jail replaces with its own: install it elsewhere (e.g. /opt)", comp, hidden)
			}
		}
	}
	uid, release, notice, err := poolUID(ctx)
	if err != nil {
		return r, false, err
	}
	defer release() // after the jail has closed: no process of uid is left
	if err := giveDir(out, uid); err != nil {
		return r, false, err
	}
	j, err := ws.openJailOrFallback(jailSpec{
		uid: uid, memory: lim.TotalMemory, tmpSize: lim.TmpSize, extraRoot: extra,
		binds: []bind{{host: filepath.Join(ws.dir, "main.cpp"), jail: "/src/main.cpp"}, {host: out, jail: "/out", writable: true}},
	})
	if err != nil || j == nil {
		return r, false, err
	}
	r = j.run(ctx, jailCommand{
		argv: append(append([]string{comp}, flags...), "/src/main.cpp", "-o", "/out/prog"),
		env:  sandboxEnv("/tmp"), dir: "/tmp", timeout: timeout, limits: lim, uid: uid,
	})
	j.close()
	r.Notices = append(r.Notices, j.notices...)
	if notice != "" {
		r.Notices = append(r.Notices, notice)
	}
	return r, true, nil
}

// compilerRoot is the installation directory to show in the jail for a
// compiler outside the system directories (/opt/gcc-14/bin/g++ →
// /opt/gcc-14), or nil.
func compilerRoot(comp string) []string {
	real, err := filepath.EvalSymlinks(comp)
	if err != nil {
		return nil
	}
	for _, d := range []string{"/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/"} {
		if strings.HasPrefix(real, d) {
			return nil
		}
	}
	return []string{filepath.Dir(filepath.Dir(real))}
}

// freshDir makes a new, empty directory name under parent (which only the
// caller can write).
func freshDir(parent, name string) (string, error) {
	return os.MkdirTemp(parent, name+"-")
}

// giveDir gives the directory dir itself, which the caller has just made
// and which is still empty, to uid (as root; nothing otherwise). It opens the
// directory without following a link and changes it through the descriptor:
// nothing is ever changed by a path a sandboxed command could have written,
// and nothing is given back afterwards — the caller deletes the directory.
func giveDir(dir string, uid int) error {
	if uid < 0 || os.Geteuid() != 0 {
		return nil
	}
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("sandbox: open %s: %w", dir, err)
	}
	defer syscall.Close(fd)
	if err := syscall.Fchown(fd, uid, uid); err != nil {
		return fmt.Errorf("sandbox: give %s to uid %d: %w", dir, uid, err)
	}
	return nil
}

// readBack copies the file name that a sandboxed command wrote in dir to
// dst (a new file of the caller's, mode 0755). It refuses anything but a
// regular file with a single link and at most limit bytes (0: no limit),
// opened without following a link: a command cannot make the caller read
// or copy a file of someone else's.
func readBack(dir, name, dst string, limit uint64) error {
	dfd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("sandbox: open %s: %w", dir, err)
	}
	defer syscall.Close(dfd)
	fd, err := syscall.Openat(dfd, name, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("sandbox: the compiler's output %s: %w", name, err)
	}
	in := os.NewFile(uintptr(fd), filepath.Join(dir, name))
	defer in.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Nlink != 1 || (limit > 0 && uint64(st.Size) > limit) {
		return fmt.Errorf("sandbox: the compiler's output %s is not a plain file of its own (mode %o, %d links, %d bytes)", name, st.Mode, st.Nlink, st.Size)
	}
	syscall.ForkLock.RLock() // see copyFile
	defer syscall.ForkLock.RUnlock()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, io.LimitReader(in, st.Size)); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// testRunner runs one worker's tests, one after another.
type testRunner interface {
	run(ctx context.Context, stdin []byte, timeout time.Duration, lim Limits) RunResult
	notices() []string
	close()
}

// testRunner returns a runner for one worker: a jail that sees the binary,
// or the per-command sandbox.
func (ws *workspace) testRunner(ctx context.Context, lim Limits) (testRunner, error) {
	if ws.noSandbox || !ws.useJail() {
		return &processRunner{ws: ws}, nil
	}
	jr := &jailRunner{ws: ws, lim: lim}
	if err := jr.open(ctx); err != nil {
		jr.close()
		return nil, err
	}
	if jr.pj == nil { // bubblewrap failed: fallback
		jr.close()
		return &processRunner{ws: ws}, nil
	}
	return jr, nil
}

// sealedCopy returns the program at path as an anonymous file (memfd)
// sealed against any change. The jail execs it by descriptor; a program
// that reopens its own executable for writing (/proc/self/exe or a
// descriptor of it: in the user-namespace jail it has the file owner's
// uid; kernel 6.18 here refuses with ETXTBSY, but a red team rewrote its
// binary on another) cannot alter the binary the next tests run, nor the
// file on the host, whatever the kernel allows.
func sealedCopy(path string) (*os.File, error) {
	src, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	fd, err := unix.MemfdCreate("prog", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("sandbox: memfd for the program: %w", err)
	}
	f := os.NewFile(uintptr(fd), "prog")
	if _, err := io.Copy(f, src); err != nil {
		f.Close()
		return nil, fmt.Errorf("sandbox: copy the program: %w", err)
	}
	seals := unix.F_SEAL_WRITE | unix.F_SEAL_GROW | unix.F_SEAL_SHRINK | unix.F_SEAL_SEAL
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, seals); err != nil {
		f.Close()
		return nil, fmt.Errorf("sandbox: seal the program: %w", err)
	}
	if err := f.Chmod(0o555); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// jailRunner runs tests in a jail of its own (taken from testJails or
// opened), reopened if a test ended it; the program goes to the jail by
// descriptor.
type jailRunner struct {
	ws    *workspace
	lim   Limits   // the jail's memory and /tmp
	exe   *os.File // the program, read-only
	pj    *pooledJail
	notes []string
}

func (jr *jailRunner) open(ctx context.Context) error {
	if jr.exe == nil {
		exe, err := sealedCopy(filepath.Join(jr.ws.dir, "prog"))
		if err != nil {
			return err
		}
		jr.exe = exe
	}
	if pj := testJails.get(jr.lim.TotalMemory, jr.lim.TmpSize); pj != nil {
		jr.pj = pj
		jr.notes = append(jr.notes, pj.j.notices...)
		return nil
	}
	uid, release, notice, err := poolUID(ctx)
	if err != nil {
		return err
	}
	if notice != "" {
		jr.notes = append(jr.notes, notice)
	}
	j, err := jr.ws.openJailOrFallback(jailSpec{uid: uid, memory: jr.lim.TotalMemory, tmpSize: jr.lim.TmpSize})
	if err != nil || j == nil {
		release()
		return err
	}
	jr.pj = &pooledJail{j: j, uid: uid, release: release, memory: jr.lim.TotalMemory, tmpSize: jr.lim.TmpSize}
	jr.notes = append(jr.notes, j.notices...)
	return nil
}

func (jr *jailRunner) run(ctx context.Context, stdin []byte, timeout time.Duration, lim Limits) RunResult {
	if jr.pj == nil || jr.pj.j.exited() {
		jr.closeJail()
		if err := jr.open(ctx); err != nil || jr.pj == nil {
			return RunResult{Err: fmt.Errorf("sandbox: reopen: %v", err)}
		}
	}
	return jr.pj.j.run(ctx, jailCommand{
		argv: []string{"prog"}, env: sandboxEnv("/tmp"), dir: "/tmp",
		stdin: stdin, timeout: timeout, limits: lim, uid: jr.pj.uid, exe: jr.exe,
	})
}

func (jr *jailRunner) notices() []string { return jr.notes }

// closeJail hands the jail back to testJails (which closes it if it has ended).
func (jr *jailRunner) closeJail() {
	if jr.pj != nil {
		testJails.put(jr.pj)
		jr.pj = nil
	}
}

func (jr *jailRunner) close() {
	jr.closeJail()
	if jr.exe != nil {
		jr.exe.Close()
		jr.exe = nil
	}
}

// processRunner runs each test as a command of the per-command Sandbox
// (the fallback) or unsandboxed (NoSandbox).
type processRunner struct{ ws *workspace }

func (pr *processRunner) run(ctx context.Context, stdin []byte, timeout time.Duration, lim Limits) RunResult {
	ws := pr.ws
	if ws.noSandbox {
		sb := Sandbox{Limits: lim, NoIsolation: true}
		return sb.Run(ctx, ws.dir, timeout, stdin, filepath.Join(ws.dir, "prog"))
	}
	// A fresh directory per test with its own copy of the binary: what one
	// test leaves, the next does not see, and no other uid can reach it.
	dir, err := ws.commandDir("run")
	if err != nil {
		return RunResult{Err: err}
	}
	defer os.RemoveAll(dir)
	if err := copyFile(filepath.Join(ws.dir, "prog"), filepath.Join(dir, "prog"), 0o755); err != nil {
		return RunResult{Err: err}
	}
	sb := Sandbox{Limits: lim, Own: dir}
	return sb.Run(ctx, dir, timeout, stdin, filepath.Join(dir, "prog"))
}

func (pr *processRunner) notices() []string { return nil }
func (pr *processRunner) close()            {}
