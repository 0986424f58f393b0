package verify

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// A jail is one confinement, set up once and reused for many commands: a
// bubblewrap sandbox whose PID 1 is initc/init.c. It sees a minimal root — the
// host's /usr (and the /bin, /lib… links or directories beside it),
// /etc/ld.so.cache and /etc/alternatives, read-only; a fresh /proc of its own
// PID namespace; a minimal /dev; a private size-capped tmpfs at /tmp, also
// shown at /dev/shm (/var/tmp links to it) — and the binds its caller names,
// nothing else of the host: no /etc/passwd, no project tree, no other
// verification's files, no host processes, no network (its own empty network
// namespace, so no abstract unix sockets either), no IPC with the host. The
// root and /dev are read-only, so /tmp (and what the binds allow) is all a
// command can write. Each command runs with no capabilities, no_new_privs and
// a seccomp filter (no ptrace or pidfd_getfd, no keyrings, no new namespaces
// or mounts; see init.c), under the rlimits of its request: as root, as the
// jail's pool uid with no groups; otherwise with the caller's uid in a user
// namespace, where init, not dumpable, is still out of its reach. As root the
// whole jail is in a memory cgroup of its own where one can be made. After
// each command every other process of the jail is killed and /tmp is a new
// tmpfs, so commands do not see each other's leftovers.

//go:embed initc/init.c
var initSource []byte

// bwrapPackage is the Debian/Ubuntu package that provides bwrap.
const bwrapPackage = "bubblewrap"

// errNoBwrap says bubblewrap is missing.
var errNoBwrap = errors.New("bubblewrap (bwrap) is not installed (Debian/Ubuntu package " + bwrapPackage + ")")

// jailSetupError is bubblewrap's own failure to set a jail up (no privilege
// to mount, no namespaces), as opposed to a failure of this package.
type jailSetupError struct{ msg string }

// Error says bubblewrap failed to set up the sandbox, and why.
func (e *jailSetupError) Error() string { return "bubblewrap could not set up the sandbox: " + e.msg }

// jailUnavailable, when set, makes Verify use the per-command fallback
// sandbox as if bubblewrap were not installed (tests of the fallback).
var jailUnavailable = false

// privateRoot is a directory only the caller can enter, where verifications
// keep their files (sources, binaries, compile output) and the jail's init
// lives: no sandbox uid can read or run anything in it.
var privateRoot = sync.OnceValues(func() (string, error) {
	var dirs []string
	if os.Geteuid() == 0 {
		dirs = []string{"/run/gosqlenv-verify", filepath.Join(os.TempDir(), "gosqlenv-verify-0")}
	} else {
		if c, err := os.UserCacheDir(); err == nil {
			dirs = append(dirs, filepath.Join(c, "gosqlenv-verify"))
		}
		dirs = append(dirs, filepath.Join(os.TempDir(), "gosqlenv-verify-"+strconv.Itoa(os.Geteuid())))
	}
	var why []string
	for _, d := range dirs {
		if err := ownPrivateDir(d, 0o711); err != nil {
			why = append(why, err.Error())
			continue
		}
		return d, nil
	}
	return "", fmt.Errorf("sandbox: no private directory for verifications: %s", strings.Join(why, "; "))
})

// ownPrivateDir makes sure d is a directory (not a link) of the caller's
// (root's, for the uid pool's lock files) that nobody else can write,
// creating it if needed, and gives it mode perm: 0700, or 0711 for
// privateRoot, through which the fallback sandbox's commands pass to
// directories of their own, by name.
func ownPrivateDir(d string, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(d), 0o755); err != nil {
		return err
	}
	if err := os.Mkdir(d, perm); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	st, err := os.Lstat(d)
	if err != nil {
		return err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !st.IsDir() || !ok || int(sys.Uid) != os.Geteuid() || st.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s is not a private directory of uid %d", d, os.Geteuid())
	}
	return os.Chmod(d, perm)
}

// initBinary builds initc/init.c once per machine (per source version) with the
// system C compiler, into privateRoot.
var initBinary = sync.OnceValues(func() (string, error) {
	root, err := privateRoot()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(initSource)
	bin := filepath.Join(root, "init-"+hex.EncodeToString(sum[:8]))
	if st, err := os.Lstat(bin); err == nil && st.Mode().IsRegular() {
		return bin, nil
	}
	cc := ""
	for _, c := range []string{"cc", "gcc", "clang"} {
		if cc = findTool(c); cc != "" {
			break
		}
	}
	if cc == "" {
		return "", errors.New("sandbox: no C compiler (cc, gcc or clang) to build the sandbox's init; install gcc")
	}
	tmp := fmt.Sprintf("%s.tmp%d", bin, os.Getpid())
	if err := os.WriteFile(tmp+".c", initSource, 0o600); err != nil {
		return "", err
	}
	defer os.Remove(tmp + ".c")
	out, err := exec.Command(cc, "-O2", "-o", tmp, tmp+".c").CombinedOutput()
	if err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("sandbox: building its init with %s: %v: %s", cc, err, out)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", err
	}
	return bin, os.Rename(tmp, bin)
})

// bind is a host path made visible in a jail.
type bind struct {
	host, jail string
	writable   bool
}

// jailSpec describes a jail.
type jailSpec struct {
	uid       int    // pool uid of its commands; -1: the caller's (non-root, in a user namespace)
	memory    uint64 // memory of the whole jail (cgroup); 0: not limited
	tmpSize   uint64 // size of its /tmp
	binds     []bind
	extraRoot []string // host directories to show read-only at the same path (a compiler outside /usr)
}

// jail is a running confinement; see the comment at the top of this file.
type jail struct {
	cmd     *exec.Cmd
	ctl     *os.File // our end of init's control socket
	stderr  *capWriter
	cgroup  string
	notices []string
	done    chan struct{} // closed when bwrap has exited
	tainted atomic.Bool   // init reported a change of its own state (response.Tainted)

	mu sync.Mutex // one command at a time
}

// systemDirs and systemFiles are what of the host's file system a command
// needs to run a program or the compiler: a jail shows them (systemBinds),
// the fallback's Landlock lets them be read (systemPaths). /usr is the
// first of systemDirs; the others are links into it (merged /usr) or
// directories.
var (
	systemDirs  = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}
	systemFiles = []string{"/etc/ld.so.cache", "/etc/alternatives"}
)

// systemBinds shows the host's system directories read-only: /usr, and /bin,
// /sbin and /lib* as the links (merged /usr) or directories they are.
func systemBinds() []string {
	args := []string{"--ro-bind", "/usr", "/usr"}
	for _, d := range systemDirs[1:] {
		st, err := os.Lstat(d)
		switch {
		case err != nil:
		case st.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(d); err == nil {
				args = append(args, "--symlink", target, d)
			}
		case st.IsDir():
			args = append(args, "--ro-bind", d, d)
		}
	}
	for _, f := range systemFiles {
		if _, err := os.Stat(f); err == nil {
			args = append(args, "--ro-bind", f, f)
		}
	}
	return args
}

// openJail starts a jail and its init.
func openJail(spec jailSpec) (*jail, error) {
	bwrap := findTool("bwrap")
	if bwrap == "" || jailUnavailable {
		return nil, errNoBwrap
	}
	initPath, err := initBinary()
	if err != nil {
		return nil, err
	}
	args := bwrapArgs(spec, initPath)

	pair, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: socketpair: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(pair[0]), "init-control"), os.NewFile(uintptr(pair[1]), "init-control")
	defer theirs.Close()
	statusR, statusW, err := os.Pipe()
	if err != nil {
		ours.Close()
		return nil, err
	}
	defer statusR.Close()
	j := &jail{ctl: ours, stderr: &capWriter{limit: 4 << 10}, done: make(chan struct{})}
	j.cmd = exec.Command(bwrap, args...)
	j.cmd.Env = []string{"PATH=/usr/bin:/bin", "LANG=C"}
	j.cmd.ExtraFiles = []*os.File{theirs, statusW}
	j.cmd.Stderr = j.stderr
	// No Pdeathsig: the kernel sends it when the forking OS thread exits,
	// not the process (golang.org/issue/27505). If this process dies, the
	// control socket closes, init exits and the jail with it.
	j.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := j.cmd.Start(); err != nil {
		statusW.Close()
		ours.Close()
		return nil, fmt.Errorf("sandbox: start bwrap: %w", err)
	}
	statusW.Close()
	go func() {
		_ = j.cmd.Wait() // how bwrap ended matters not: init's reply (or its absence) says how the command did
		close(j.done)
	}()
	// bwrap reports the PID of init (as the host sees it) once the sandbox
	// is set up, or exits with a message saying why it could not.
	var status struct {
		ChildPID int `json:"child-pid"`
	}
	line, _ := bufio.NewReader(statusR).ReadBytes('\n')
	if json.Unmarshal(line, &status) != nil || status.ChildPID <= 0 {
		j.kill()
		<-j.done
		ours.Close()
		return nil, &jailSetupError{strings.TrimSpace(j.stderr.buf.String())}
	}
	if spec.uid >= 0 {
		// The kernel's OOM killer must pick a command, never init.
		if err := os.WriteFile("/proc/"+strconv.Itoa(status.ChildPID)+"/oom_score_adj", []byte("-1000"), 0); err != nil {
			j.notices = append(j.notices, "the jail's init may be chosen by the kernel's OOM killer (oom_score_adj: "+err.Error()+")")
		}
	}
	if spec.memory > 0 {
		cg, err := newMemoryCgroup(spec.memory, status.ChildPID)
		if err != nil {
			j.notices = append(j.notices, "no memory cgroup ("+err.Error()+"): the jail's init sums its processes' resident memory and /tmp every 10 ms and kills the run past the limit")
		}
		j.cgroup = cg
	}
	return j, nil
}

// bwrapArgs are bubblewrap's arguments for a jail (see the comment at the top
// of this file); init's control socket is fd 3, bwrap's status fd 4.
func bwrapArgs(spec jailSpec, initPath string) []string {
	args := []string{
		"--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--die-with-parent", "--new-session", "--as-pid-1",
	}
	// Init keeps what it needs to start commands (as the pool uid), to kill
	// them, to give each a fresh /tmp (CAP_SYS_ADMIN, for the mount) and to
	// empty their bounding set (CAP_SETPCAP); the commands themselves have
	// nothing (init.c drops it all before exec). Without root, the jail is
	// in a user namespace where init is uid 0: the mount namespace is then
	// that namespace's own (bwrap's --uid other than 0 or --disable-userns
	// would nest a second user namespace, in which init could not mount).
	// Commands may not create namespaces: init's seccomp filter refuses.
	args = append(args, "--cap-drop", "ALL")
	caps := []string{"CAP_SYS_ADMIN", "CAP_SETPCAP"}
	if spec.uid >= 0 {
		caps = append(caps, "CAP_SETUID", "CAP_SETGID", "CAP_KILL", "CAP_DAC_OVERRIDE", "CAP_FOWNER")
	} else {
		args = append(args, "--unshare-user", "--uid", "0", "--gid", "0")
	}
	for _, c := range caps {
		args = append(args, "--cap-add", c)
	}
	// Directories bwrap creates for mount points are 0700 unless told:
	// the commands must be able to reach /etc/ld.so.cache and /var/tmp.
	args = append(args, "--perms", "0755", "--dir", "/etc", "--perms", "0755", "--dir", "/var")
	args = append(args, systemBinds()...)
	for _, d := range spec.extraRoot {
		// bwrap makes the missing parents of a mount point 0700: a compiler
		// under /opt would be out of the commands' reach.
		var parents []string
		for p := filepath.Dir(d); p != "/" && p != "."; p = filepath.Dir(p) {
			parents = append([]string{p}, parents...)
		}
		for _, p := range parents {
			args = append(args, "--perms", "0755", "--dir", p)
		}
		args = append(args, "--ro-bind", d, d)
	}
	args = append(args, "--proc", "/proc", "--dev", "/dev",
		"--perms", "1777", "--size", strconv.FormatUint(max(spec.tmpSize, 1<<20), 10), "--tmpfs", "/tmp",
		"--symlink", "/tmp", "/var/tmp",
		"--ro-bind", initPath, "/.gosqlenv-init")
	made := map[string]bool{}
	for _, b := range spec.binds {
		if p := filepath.Dir(b.jail); p != "/" && !made[p] { // reachable by the commands
			args = append(args, "--perms", "0755", "--dir", p)
			made[p] = true
		}
		if b.writable {
			args = append(args, "--bind", b.host, b.jail)
		} else {
			args = append(args, "--ro-bind", b.host, b.jail)
		}
	}
	args = append(args, "--remount-ro", "/", "--remount-ro", "/dev",
		"--json-status-fd", "4", "--chdir", "/tmp", "/.gosqlenv-init", "--tmp-size", strconv.FormatUint(max(spec.tmpSize, 1<<20), 10))
	return args
}

// exited reports whether bwrap, and so the jail, has ended.
func (j *jail) exited() bool {
	select {
	case <-j.done:
		return true
	default:
		return false
	}
}

// kill ends the jail at once: bwrap, init and every command.
func (j *jail) kill() {
	if j.cmd.Process != nil {
		_ = syscall.Kill(-j.cmd.Process.Pid, syscall.SIGKILL)
		_ = j.cmd.Process.Kill()
	}
}

// close ends the jail: init exits when its control socket closes, and with
// it, as PID 1, every process of the jail. It returns once bwrap has exited.
func (j *jail) close() {
	j.ctl.Close()
	select {
	case <-j.done:
	case <-time.After(2 * time.Second):
		j.kill()
		<-j.done
	}
	if j.cgroup != "" {
		removeCgroup(j.cgroup)
	}
}

// jailCommand is one command for a jail's init.
type jailCommand struct {
	argv, env []string
	dir       string
	stdin     []byte
	timeout   time.Duration
	limits    Limits
	uid       int // -1: the init's own (user namespace)
	// exe, if set, is the program, opened read-only: the command execs it
	// by descriptor (argv[0] is then only its name), so the jail need not
	// see its file.
	exe *os.File
}

// pipes makes n pipes (read end, write end), or none.
func pipes(n int) ([][2]*os.File, error) {
	var ps [][2]*os.File
	for range n {
		r, w, err := os.Pipe()
		if err != nil {
			for _, p := range ps {
				p[0].Close()
				p[1].Close()
			}
			return nil, err
		}
		ps = append(ps, [2]*os.File{r, w})
	}
	return ps, nil
}

// encode is the command's message to init: a request, then the working
// directory, argv and environment, each NUL-terminated.
func (c jailCommand) encode(lim Limits, memTotal uint64) ([]byte, error) {
	cpu := uint64((lim.CPUTime + time.Second - 1) / time.Second)
	if cpu == 0 {
		cpu = uint64((c.timeout+time.Second-1)/time.Second) + 1
	}
	uid := uint32(c.uid)
	rq := request{Magic: 0x67737631, UID: uid, GID: uid, TimeoutMS: uint32(c.timeout / time.Millisecond),
		Argc: uint32(len(c.argv)), Envc: uint32(len(c.env)),
		CPUSec: cpu, AS: lim.Memory, FSize: lim.FileSize, NoFile: lim.OpenFiles, NP: lim.Processes, MemTotal: memTotal}
	var msg bytes.Buffer
	_ = binary.Write(&msg, binary.NativeEndian, rq)
	for _, s := range append(append([]string{c.dir}, c.argv...), c.env...) {
		if strings.IndexByte(s, 0) >= 0 {
			return nil, fmt.Errorf("sandbox: NUL byte in command %q", c.argv)
		}
		msg.WriteString(s)
		msg.WriteByte(0)
	}
	return msg.Bytes(), nil
}

// request must match struct gs_request in initc/init.c.
type request struct {
	Magic                         uint32
	UID, GID                      uint32
	TimeoutMS                     uint32
	Argc, Envc                    uint32
	CPUSec, AS, FSize, NoFile, NP uint64
	// MemTotal bounds the resident memory of all the jail's processes and
	// its /tmp together, summed by init every 10 ms (a jail without a
	// memory cgroup: the user-namespace mode); 0: not bounded by init.
	MemTotal uint64
}

// response must match struct gs_response in initc/init.c.
type response struct {
	Status, TimedOut, Err int32
	// Tainted: init's own state (limits, affinity, priority, OOM score,
	// core-dump filter) changed since the jail opened — a command reached
	// it — so the jail must not serve another verification.
	Tainted int32
	// MemExceeded: init killed the command because the jail held more
	// than request.MemTotal.
	MemExceeded, _ int32
}

// run runs one command in the jail and waits for it; ctx ends it (and the
// jail) early.
func (j *jail) run(ctx context.Context, c jailCommand) RunResult {
	j.mu.Lock()
	defer j.mu.Unlock()
	var res RunResult
	if c.timeout <= 0 {
		c.timeout = 5 * time.Second
	}
	lim := c.limits
	if lim.OutputCap <= 0 {
		lim.OutputCap = 1 << 20
	}
	var memTotal uint64
	if j.cgroup == "" {
		memTotal = lim.TotalMemory // no cgroup: init sums the jail's memory itself
	}
	msg, err := c.encode(lim, memTotal)
	if err != nil {
		res.Err = err
		return res
	}
	cio, err := newCommandIO(c.stdin, lim.OutputCap)
	if err != nil {
		res.Err = err
		return res
	}
	start := time.Now()
	err = j.send(msg, cio.inR, cio.outW, cio.errW, c.exe)
	cio.closeFarEnds()
	if err != nil {
		j.kill()
		cio.wait(&res)
		res.Err = fmt.Errorf("sandbox: send command to init: %w (%s)", err, strings.TrimSpace(j.stderr.buf.String()))
		return res
	}
	// Init enforces the timeout; ctx, and a margin past the timeout in case
	// init itself is stuck, end the whole jail.
	stop := context.AfterFunc(ctx, j.kill)
	defer stop()
	guard := time.AfterFunc(c.timeout+5*time.Second, j.kill)
	defer guard.Stop()
	rs, rerr := j.receive()
	res.Duration = time.Since(start)
	cio.wait(&res)
	if rs.Tainted != 0 {
		j.tainted.Store(true)
	}
	res.MemoryExceeded = rs.MemExceeded != 0
	switch {
	case ctx.Err() != nil && rerr != nil:
		res.TimedOut, res.Err = true, fmt.Errorf("sandbox: %w", ctx.Err())
	case rerr != nil:
		res.Err = fmt.Errorf("sandbox: init ended: %v %s", rerr, strings.TrimSpace(j.stderr.buf.String()))
	case rs.Err != 0:
		res.Err = fmt.Errorf("sandbox: start %s: %w", c.argv[0], syscall.Errno(rs.Err))
	default:
		res.TimedOut = rs.TimedOut != 0
		ws := syscall.WaitStatus(rs.Status)
		if ws.Signaled() {
			res.ExitCode, res.Signal = -1, ws.Signal().String()
		} else {
			res.ExitCode = ws.ExitStatus()
		}
	}
	return res
}

// commandIO is a command's stdin, stdout and stderr: pipes whose far ends
// (inR, outW, errW) init hands to the command, fed and drained here.
type commandIO struct {
	inR, outW, errW *os.File
	out, errw       *capWriter
	wg              sync.WaitGroup
}

// newCommandIO makes the pipes and starts writing stdin and reading the
// outputs, each kept up to capBytes.
func newCommandIO(stdin []byte, capBytes int) (*commandIO, error) {
	p, err := pipes(3)
	if err != nil {
		return nil, err
	}
	inW, outR, errR := p[0][1], p[1][0], p[2][0]
	cio := &commandIO{inR: p[0][0], outW: p[1][1], errW: p[2][1], out: &capWriter{limit: capBytes}, errw: &capWriter{limit: capBytes}}
	cio.wg.Add(3)
	go func() { defer cio.wg.Done(); _, _ = inW.Write(stdin); inW.Close() }()
	go func() { defer cio.wg.Done(); _, _ = io.Copy(cio.out, outR); outR.Close() }()
	go func() { defer cio.wg.Done(); _, _ = io.Copy(cio.errw, errR); errR.Close() }()
	return cio, nil
}

// closeFarEnds closes this process's copies of the ends init was sent, so
// that the outputs end when the command's do.
func (cio *commandIO) closeFarEnds() {
	cio.inR.Close()
	cio.outW.Close()
	cio.errW.Close()
}

// wait waits for stdin to be written and the outputs to end, and puts the
// outputs in res.
func (cio *commandIO) wait(res *RunResult) {
	cio.wg.Wait()
	res.Stdout, res.StdoutTruncated = cio.out.buf.Bytes(), cio.out.truncated
	res.Stderr, res.StderrTruncated = cio.errw.buf.Bytes(), cio.errw.truncated
}

// send sends init a command message with the command's stdin, stdout and
// stderr descriptors, and the program's if exe is not nil.
func (j *jail) send(msg []byte, stdin, stdout, stderr, exe *os.File) error {
	sc, err := j.ctl.SyscallConn()
	if err != nil {
		return err
	}
	fds := []int{int(stdin.Fd()), int(stdout.Fd()), int(stderr.Fd())}
	if exe != nil {
		fds = append(fds, int(exe.Fd()))
	}
	var serr error
	err = sc.Write(func(fd uintptr) bool {
		serr = syscall.Sendmsg(int(fd), msg, syscall.UnixRights(fds...), nil, 0)
		return serr != syscall.EAGAIN
	})
	if err != nil {
		return err
	}
	return serr
}

// receive reads init's response to the command sent; an error means init
// (and the jail) ended.
func (j *jail) receive() (response, error) {
	var rs response
	buf := make([]byte, binary.Size(rs))
	n, err := j.ctl.Read(buf)
	if err == nil && n != len(buf) {
		err = fmt.Errorf("short response (%d of %d bytes)", n, len(buf))
	}
	if err != nil {
		return rs, err
	}
	err = binary.Read(bytes.NewReader(buf), binary.NativeEndian, &rs)
	return rs, err
}
