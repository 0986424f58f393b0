package verify

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Limits bounds one sandboxed command.
type Limits struct {
	CPUTime time.Duration // RLIMIT_CPU (rounded up to whole seconds)
	Memory  uint64        // RLIMIT_AS in bytes, per process
	// TotalMemory bounds all processes of a jail together (a memory cgroup;
	// the jail's /tmp counts too). Where no cgroup can be made the result's
	// sandbox_notices say so, and the bound is Memory × Processes.
	TotalMemory uint64
	// TmpSize is the size of a jail's private /tmp.
	TmpSize   uint64
	FileSize  uint64 // RLIMIT_FSIZE in bytes
	OpenFiles uint64 // RLIMIT_NOFILE
	Processes uint64 // RLIMIT_NPROC (counted per real uid; as root each command has its own, see Sandbox)
	OutputCap int    // bytes kept of stdout and of stderr each; excess is discarded and flagged
}

// RunLimits are the defaults for running a candidate program.
var RunLimits = Limits{CPUTime: 5 * time.Second, Memory: 512 << 20, TotalMemory: 512 << 20, TmpSize: 64 << 20, FileSize: 16 << 20, OpenFiles: 64, Processes: 32, OutputCap: 1 << 20}

// CompileLimits are the defaults for running the compiler.
var CompileLimits = Limits{CPUTime: 30 * time.Second, Memory: 4 << 30, TotalMemory: 4 << 30, TmpSize: 512 << 20, FileSize: 256 << 20, OpenFiles: 256, Processes: 64, OutputCap: 1 << 20}

// Sandbox runs one command at a time, each set up on its own: the
// per-command sandbox. ExecutionVerifier uses it only where bubblewrap jails
// (jail.go) cannot be had, and only as root; the result's sandbox_notices say
// what it does not isolate. Without root it refuses (errNoIsolation): the
// command would run as the caller. It runs commands with:
//   - a clean environment (PATH=/usr/bin:/bin, HOME and TMPDIR set to the work
//     dir, LANG=C); nothing is inherited from the caller, so secrets in the
//     caller's environment are not visible;
//   - rlimits applied by /usr/bin/prlimit (CPU, address space, file size, open
//     files, processes); if prlimit is missing the run proceeds and a notice is
//     recorded;
//   - init's launcher (initc/init.c, "--exec"), started as root in the
//     command's namespaces: it joins the command's memory cgroup
//     (TotalMemory, cgroup v1 or v2, where one can be made; otherwise a
//     notice), empties its bounding set and becomes the pool uid (below);
//     the command gets no descriptor above 2, no capabilities,
//     no_new_privs, Landlock and the jails' seccomp filter (no ptrace,
//     pidfd_getfd, keyrings, System V IPC, sockets, namespaces, mounts...);
//     the launcher stays the command's parent and subreaper, kills every
//     process of the uid when the command ends and reports the command's
//     own wait status;
//   - Landlock, where the kernel has it (5.13+): the command can open
//     nothing of the host's file system but the system directories a jail
//     shows (read and execute), Reads, and its directory and Own (read and
//     write) — not /tmp, /dev/shm or other world-writable directories (a
//     channel between commands), not /proc (the host's processes), not
//     world-readable trees; no TCP, and (ABI 6) no abstract unix socket or
//     signal outside its own processes. Without Landlock a notice says that
//     there is no filesystem isolation;
//   - a uid/gid of its own with no supplementary groups, taken for the
//     duration of the command from a pool (SandboxUIDBase …
//     SandboxUIDBase+SandboxUIDCount-1) in which no two running commands
//     share one, not even across processes on the machine (lock files under
//     /run/gosqlenv-verify-uids; where no such private directory can be had,
//     within this process only, and a notice is recorded). RLIMIT_NPROC
//     counts all processes of a real uid, so this is what makes each
//     command's process limit its own. The directory Own is given to the
//     command's uid. And new PID, mount and network namespaces (no network,
//     not even usable loopback) where they can be made; otherwise a notice;
//   - its own process group, which is SIGKILLed on timeout and after exit;
//     before the uid goes back to the pool, no process of it is left (the
//     PID namespace, or every process of the uid found in /proc is killed),
//     and whatever it owns in /tmp, /var/tmp, /dev/shm and /run/lock is
//     deleted;
//   - stdout/stderr capped at Limits.OutputCap.
//
// What it cannot guarantee: without Landlock there is no filesystem
// isolation (the command reads world-readable files and, while it runs,
// can write to world-writable directories); without a memory cgroup,
// memory is limited per process (RLIMIT_AS), not for the whole command.
//
// With NoIsolation set none of the above isolation is applied (see
// WithoutSandbox); only the clean environment, the wall-clock timeout, the
// process-group kill and the output caps remain.
type Sandbox struct {
	Limits Limits // resource limits; OutputCap 0 means 1 MiB
	// NoIsolation runs the command without prlimit, privilege drop or
	// namespaces. Only for trusted code, or to measure what the isolation costs.
	NoIsolation bool
	// Own is a directory the caller has just made for this command, still
	// empty or holding only the caller's files. As root Run gives the
	// directory itself (not its contents; through a descriptor opened
	// without following links) to the command's uid before the command
	// starts. Nothing is given back afterwards: the caller deletes the
	// directory. Ignored without privilege drop (non-root, NoIsolation).
	Own string
	// Reads are host paths the command may read (and execute) besides the
	// system directories, where Landlock confines it: a compiler outside
	// /usr. Everything else of the host's file system but dir and Own is
	// out of its reach.
	Reads []string
}

// RunResult is the outcome of one sandboxed command.
type RunResult struct {
	Stdout, Stderr                   []byte        // captured output, at most Limits.OutputCap bytes each
	StdoutTruncated, StderrTruncated bool          // output beyond the cap was discarded
	ExitCode                         int           // -1 when killed by a signal
	Signal                           string        // e.g. "killed", "" if none
	TimedOut                         bool          // the wall-clock timeout or ctx's deadline ended the run
	Duration                         time.Duration // wall-clock time
	MemoryExceeded                   bool          // a jail's init killed it: its processes and /tmp held more than Limits.TotalMemory
	Err                              error         // failure to start, not program failure
	Notices                          []string      // isolation that could not be applied
}

// OK reports a normal exit with status 0 and no timeout.
func (r RunResult) OK() bool { return r.Err == nil && !r.TimedOut && r.ExitCode == 0 && r.Signal == "" }

// capWriter keeps the first limit bytes written to it.
type capWriter struct {
	buf       bytes.Buffer
	limit     int
	truncated bool
}

// Write keeps what fits under the limit, notes a truncation and never
// fails, so the writer's source is always drained.
func (w *capWriter) Write(p []byte) (int, error) {
	room := w.limit - w.buf.Len()
	if room < len(p) {
		w.truncated = true
		if room > 0 {
			w.buf.Write(p[:room])
		}
		return len(p), nil
	}
	w.buf.Write(p)
	return len(p), nil
}

var namespacesBroken atomic.Bool

func findTool(name string) string {
	for _, d := range []string{"/usr/bin", "/bin", "/usr/sbin", "/sbin"} {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// Run executes argv in dir with the given wall-clock timeout.
func (s *Sandbox) Run(ctx context.Context, dir string, timeout time.Duration, stdin []byte, argv ...string) RunResult {
	var res RunResult
	if len(argv) == 0 {
		res.Err = errors.New("sandbox: empty command")
		return res
	}
	lim := s.Limits
	if lim.OutputCap <= 0 {
		lim.OutputCap = 1 << 20
	}
	if s.NoIsolation {
		return s.runOnce(ctx, dir, timeout, stdin, argv, lim, false, false)
	}
	if os.Geteuid() != 0 {
		res.Err = errNoIsolation
		return res
	}
	// The launcher closes inherited descriptors and installs the jail's
	// seccomp filter (no ptrace, keyrings, namespaces...) before exec.
	launcher, err := initBinary()
	if err != nil {
		res.Err = err
		return res
	}
	var prlimit []string
	if pl := findTool("prlimit"); pl != "" {
		prlimit = append(prlimitArgs(pl, lim, timeout), "--")
	} else {
		res.Notices = append(res.Notices, "prlimit not found: resource limits not applied")
	}
	opts := landlockArgs(dir, s.Own, s.Reads)
	if landlockABI() < 1 {
		res.Notices = append(res.Notices, noLandlockNotice)
	}
	slot, note, err := sandboxUIDs.acquire(ctx)
	if err != nil {
		res.Err = err
		return res
	}
	if note != "" {
		res.Notices = append(res.Notices, note)
	}
	uid := SandboxUIDBase + slot
	opts = append(opts, "--uid", strconv.Itoa(uid))
	notices := res.Notices
	if lim.TotalMemory > 0 {
		cg, err := commandCgroup(lim.TotalMemory)
		if err != nil {
			notices = append(notices, "memory is limited per process only (RLIMIT_AS), not for the whole run: "+err.Error())
		} else {
			defer removeCgroup(cg) // last: after the uid's processes are gone
			opts = append(opts, "--cgroup", filepath.Join(cg, "cgroup.procs"))
		}
	}
	full := slices.Concat(prlimit, []string{launcher}, opts, []string{"--exec"}, argv)
	r := s.runAs(ctx, dir, timeout, stdin, full, lim, uid, notices)
	// Nothing of uid may outlive the run. With a PID namespace the
	// kernel has killed (and the namespace's init reaped) whatever the
	// command left before Wait returned; without one, every process of
	// uid in /proc is killed here.
	live, zombies := 0, 0
	if !r.usedNS {
		live, zombies = killUID(uid, time.Second)
	}
	// Nor anything it wrote where every uid can write (/tmp, /dev/shm...).
	if err := removeFilesOfUID(uid); err != nil {
		r.Notices = append(r.Notices, "files of the sandbox uid may be left: "+err.Error())
	}
	// The uid is handed out again only when none of its processes, not
	// even a zombie (which still counts for RLIMIT_NPROC), is left.
	sandboxUIDs.settle(slot, live, zombies)
	return r.RunResult
}

// prlimitArgs is the prlimit command (at path pl) that applies lim's
// per-process limits to what it runs.
func prlimitArgs(pl string, lim Limits, timeout time.Duration) []string {
	cpu := int64((lim.CPUTime + time.Second - 1) / time.Second)
	if cpu <= 0 {
		cpu = int64((timeout+time.Second-1)/time.Second) + 1
	}
	args := []string{pl, "--cpu=" + strconv.FormatInt(cpu, 10)}
	for _, l := range []struct {
		flag string
		v    uint64
	}{{"--as=", lim.Memory}, {"--fsize=", lim.FileSize}, {"--nofile=", lim.OpenFiles}, {"--nproc=", lim.Processes}} {
		if l.v > 0 {
			args = append(args, l.flag+strconv.FormatUint(l.v, 10))
		}
	}
	return args
}

// commandCgroup makes the memory cgroup of one fallback command: all its
// processes share it, /dev/shm pages they write included. The launcher
// joins it, still root, before it forks the command (cgroup v1 or v2).
func commandCgroup(limit uint64) (string, error) {
	cg, v2, err := makeMemoryCgroup(limit)
	if err == nil && v2 {
		if err = launcherJoinsV2(cg); err != nil {
			removeCgroup(cg)
			return "", err
		}
	}
	return cg, err
}

// launcherJoinsV2 checks, once per process, that the launcher can join a
// cgroup v2 cgroup such as cg (a move needs write access to the common
// ancestor's cgroup.procs, which delegation may not give): where it
// cannot, fallback commands run without one (and say so) rather than fail.
func launcherJoinsV2(cg string) error {
	v2JoinOnce.Do(func() {
		launcher, err := initBinary()
		if err == nil {
			var out []byte
			out, err = exec.Command(launcher, "--cgroup", filepath.Join(cg, "cgroup.procs"), "--probe", "--exec", "/bin/true").CombinedOutput()
			if err != nil {
				err = fmt.Errorf("cgroup v2: the launcher cannot join %s: %v %s", cg, err, bytes.TrimSpace(out))
			}
		}
		v2JoinErr = err
	})
	return v2JoinErr
}

var (
	v2JoinOnce sync.Once
	v2JoinErr  error
)

// noLandlockNotice is the fallback's notice where the kernel has no
// Landlock (before 5.13, or not enabled at boot).
const noLandlockNotice = "no Landlock in this kernel: no filesystem isolation; the program reads the host's world-readable files and can write to world-writable directories (/tmp, /dev/shm), which are cleaned of its files after each command"

// landlockABI is the running kernel's Landlock ABI version, 0 without it.
var landlockABI = sync.OnceValue(func() int {
	const sysLandlockCreateRuleset, versionFlag = 444, 1 // the same number on every architecture
	abi, _, errno := syscall.RawSyscall(sysLandlockCreateRuleset, 0, 0, versionFlag)
	if errno != 0 {
		return 0
	}
	return int(abi)
})

// landlockArgs are the launcher's options that confine a fallback command
// with Landlock, where the kernel has it: the host's system directories
// (as a jail shows them) and reads read-only, dir and own read-write. The
// launcher also allows the standard devices (/dev/null …).
func landlockArgs(dir, own string, reads []string) []string {
	if landlockABI() < 1 {
		return nil
	}
	args := []string{"--landlock"}
	for _, p := range slices.Concat(systemPaths(), reads) {
		args = append(args, "--read", p)
	}
	args = append(args, "--write", dir)
	if own != "" && own != dir {
		args = append(args, "--write", own)
	}
	return args
}

// systemPaths are those of systemDirs and systemFiles this host has.
var systemPaths = sync.OnceValue(func() []string {
	var ps []string
	for _, p := range slices.Concat(systemDirs, systemFiles) {
		if _, err := os.Stat(p); err == nil {
			ps = append(ps, p)
		}
	}
	return ps
})

type runOutcome struct {
	RunResult
	usedNS bool // the command ran in its own PID namespace
}

// runAs runs argv (the launcher, wrapped in prlimit; the launcher becomes
// the pool uid uid, to which Own is given first), in namespaces where they
// work.
func (s *Sandbox) runAs(ctx context.Context, dir string, timeout time.Duration, stdin []byte, argv []string, lim Limits, uid int, notices []string) runOutcome {
	if s.Own != "" {
		if err := giveDir(s.Own, uid); err != nil {
			return runOutcome{RunResult: RunResult{Err: err, Notices: notices}}
		}
	}
	useNS := !namespacesBroken.Load()
	for {
		r := s.runOnce(ctx, dir, timeout, stdin, argv, lim, useNS, true)
		if r.Err != nil && useNS && (errors.Is(r.Err, syscall.EPERM) || errors.Is(r.Err, syscall.EINVAL) || errors.Is(r.Err, syscall.ENOSPC)) {
			namespacesBroken.Store(true)
			notices = append(notices, "namespaces unavailable ("+r.Err.Error()+"): running without PID/net isolation")
			useNS = false
			continue
		}
		if !useNS {
			notices = append(notices, "no PID/net namespace isolation")
		}
		r.Notices = append(notices, r.Notices...)
		return runOutcome{RunResult: r, usedNS: useNS && r.Err == nil}
	}
}

// runOnce runs argv once. With launched, argv starts init's launcher, which
// writes the command's raw wait status to the pipe on fd 3: that status,
// not the launcher's own, is the result.
func (s *Sandbox) runOnce(ctx context.Context, dir string, timeout time.Duration, stdin []byte, argv []string, lim Limits, useNS, launched bool) RunResult {
	var res RunResult
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "TMPDIR=" + dir, "LANG=C", "LC_ALL=C"}
	cmd.Stdin = bytes.NewReader(stdin)
	out := &capWriter{limit: lim.OutputCap}
	errw := &capWriter{limit: lim.OutputCap}
	cmd.Stdout, cmd.Stderr = out, errw
	attr := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if useNS {
		attr.Cloneflags = syscall.CLONE_NEWPID | syscall.CLONE_NEWNS | syscall.CLONE_NEWNET
	}
	cmd.SysProcAttr = attr
	cmd.Cancel = func() error {
		if cmd.Process != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
		return nil
	}
	cmd.WaitDelay = 300 * time.Millisecond
	var statusR *os.File
	if launched {
		r, w, err := os.Pipe()
		if err != nil {
			res.Err = err
			return res
		}
		defer r.Close()
		statusR = r
		cmd.ExtraFiles = []*os.File{w}
		defer w.Close()
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		res.Err = err
		return res
	}
	if launched {
		cmd.ExtraFiles[0].Close()
	}
	werr := cmd.Wait()
	res.Duration = time.Since(start)
	// Kill whatever is left in the process group (orphans, sleepers).
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	res.TimedOut = errors.Is(cctx.Err(), context.DeadlineExceeded)
	res.Stdout, res.StdoutTruncated = out.buf.Bytes(), out.truncated
	res.Stderr, res.StderrTruncated = errw.buf.Bytes(), errw.truncated
	if st := cmd.ProcessState; st != nil {
		ws, _ := st.Sys().(syscall.WaitStatus)
		var raw [4]byte
		if statusR != nil && ws.Exited() {
			if n, _ := io.ReadFull(statusR, raw[:]); n == len(raw) {
				ws = syscall.WaitStatus(binary.NativeEndian.Uint32(raw[:]))
			}
		}
		if ws.Signaled() {
			res.ExitCode = -1
			res.Signal = ws.Signal().String()
		} else {
			res.ExitCode = ws.ExitStatus()
		}
	} else if werr != nil {
		res.Err = fmt.Errorf("sandbox: wait: %w", werr)
	}
	return res
}
