package verify

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The sandbox's uid pool. When the caller is root every sandboxed command runs
// as its own uid/gid, SandboxUIDBase+i for a slot i < SandboxUIDCount that no
// other running command holds. RLIMIT_NPROC counts the processes of a real uid
// machine-wide, so with one shared uid a fork bomb (or many parallel compiles)
// in one candidate made unrelated concurrent candidates fail to fork; with a
// uid per command each command's process limit is its own.
//
// The range lies far above system and ordinary user ids (and above
// 65534/nobody), below 2^31 so that nothing takes it for negative, and never
// reaches 65535 or 4294967295 ((uid_t)-1). No passwd entry is needed.
const (
	SandboxUIDBase  = 1 << 30 // first uid/gid of the pool
	SandboxUIDCount = 4096    // number of uids in the pool
)

// uidLockDirs are where the pool keeps one lock file per slot it uses, so
// that several processes on one machine (two trainers, parallel test
// binaries) never run commands under the same uid at once. The first
// directory that is, or can be made, a root-owned directory writable only by
// root is used; with none the pool is coordinated within this process only.
var uidLockDirs = []string{"/run/gosqlenv-verify-uids", filepath.Join(os.TempDir(), "gosqlenv-verify-uids-0")}

type uidPool struct {
	mu      sync.Mutex
	once    sync.Once
	lockDir string        // "" when slots are not locked across processes
	dirNote string        // why lockDir is ""
	locks   []*os.File    // per slot: the flock'ed lock file, kept open while this process may use the slot
	owned   []bool        // per slot: this process may use it (locked, or no cross-process locking)
	retired []bool        // per slot: never handed out again (processes of the uid could not be removed)
	free    []int         // owned slots not in use
	next    int           // next slot to try to take
	wake    chan struct{} // closed and replaced when a slot is released
}

var sandboxUIDs = &uidPool{}

func (p *uidPool) init() {
	p.once.Do(func() {
		p.locks = make([]*os.File, SandboxUIDCount)
		p.owned = make([]bool, SandboxUIDCount)
		p.retired = make([]bool, SandboxUIDCount)
		p.wake = make(chan struct{})
		var why []string
		for _, d := range uidLockDirs {
			if err := ownPrivateDir(d, 0o700); err != nil {
				why = append(why, err.Error())
				continue
			}
			p.lockDir = d
			return
		}
		p.dirNote = "sandbox uid pool not coordinated with other processes (" + strings.Join(why, "; ") + ")"
	})
}

// acquire takes a free slot and returns it with its uid; notice is non-empty
// when the pool cannot coordinate with other processes. It waits while every
// slot is taken, until ctx is done.
func (p *uidPool) acquire(ctx context.Context) (slot int, notice string, err error) {
	p.init()
	for {
		p.mu.Lock()
		slot, fresh := p.takeLocked()
		wake := p.wake
		p.mu.Unlock()
		if slot >= 0 {
			// A process that held a newly taken slot before (and died) may
			// have left processes of its uid behind.
			if fresh {
				if live, zombies := killUID(SandboxUIDBase+slot, time.Second); live > 0 || zombies > 0 {
					p.settle(slot, live, zombies)
					continue
				}
			}
			return slot, p.dirNote, nil
		}
		select {
		case <-ctx.Done():
			return -1, "", fmt.Errorf("sandbox: no free uid in the pool of %d: %w", SandboxUIDCount, ctx.Err())
		case <-wake:
		case <-time.After(50 * time.Millisecond): // slots other processes release
		}
	}
}

// takeLocked returns a free owned slot (fresh false), or a newly taken slot
// that has not been cleaned yet (fresh true), or -1.
func (p *uidPool) takeLocked() (int, bool) {
	if n := len(p.free); n > 0 {
		s := p.free[n-1]
		p.free = p.free[:n-1]
		return s, false
	}
	for range SandboxUIDCount {
		s := p.next
		p.next = (p.next + 1) % SandboxUIDCount
		if p.owned[s] || p.retired[s] {
			continue
		}
		if p.lockDir != "" {
			f, err := os.OpenFile(filepath.Join(p.lockDir, strconv.Itoa(SandboxUIDBase+s)), os.O_RDWR|os.O_CREATE, 0o600)
			if err != nil {
				continue
			}
			if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
				f.Close()
				continue
			}
			p.locks[s] = f
		}
		p.owned[s] = true
		return s, true
	}
	return -1, false
}

// release returns slot to the free list.
func (p *uidPool) release(slot int) {
	p.mu.Lock()
	p.free = append(p.free, slot)
	close(p.wake)
	p.wake = make(chan struct{})
	p.mu.Unlock()
}

// retire takes slot out of use for good; its lock stays held so that no other
// process takes it either.
func (p *uidPool) retire(slot int) {
	p.mu.Lock()
	p.retired[slot] = true
	p.mu.Unlock()
}

// settle puts slot back into use once no process of its uid is left: at once
// when there is none, else from a goroutine that kills what is alive and waits
// for the zombies to be reaped. A slot whose processes do not go away within
// a minute is retired.
func (p *uidPool) settle(slot int, live, zombies int) {
	if live == 0 && zombies == 0 {
		p.release(slot)
		return
	}
	go func() {
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
			if l, z := killUID(SandboxUIDBase+slot, 0); l == 0 && z == 0 {
				p.release(slot)
				return
			}
		}
		p.retire(slot)
	}()
}

// uidProc is a process seen in /proc.
type uidProc struct {
	pid, ppid int
	zombie    bool // exited, not yet reaped, no live thread
}

// procsOfUID lists the processes that have uid as their real, effective,
// saved or filesystem uid.
func procsOfUID(uid int) []uidProc {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := strconv.Itoa(uid)
	var out []uidProc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		pr := uidProc{pid: pid}
		match, threads := false, 1
		for _, l := range strings.Split(string(st), "\n") {
			k, v, ok := strings.Cut(l, ":")
			if !ok {
				continue
			}
			f := strings.Fields(v)
			switch k {
			case "State":
				pr.zombie = len(f) > 0 && (f[0] == "Z" || f[0] == "X")
			case "PPid":
				if len(f) > 0 {
					pr.ppid, _ = strconv.Atoi(f[0])
				}
			case "Threads":
				if len(f) > 0 {
					threads, _ = strconv.Atoi(f[0])
				}
			case "Uid":
				for _, x := range f {
					if x == want {
						match = true
					}
				}
			}
		}
		if match {
			// A thread-group leader that has exited while other threads run
			// shows as a zombie: it is alive.
			pr.zombie = pr.zombie && threads <= 1
			out = append(out, pr)
		}
	}
	return out
}

// killUID SIGKILLs every process of uid until none is alive, for at most
// patience, reaping the zombies that are this process's children (orphans
// reparented to it). It returns how many processes of uid are still alive and
// how many zombies wait for other parents to reap them (a container's init
// may do that only every second or so); zombies still count towards the
// uid's RLIMIT_NPROC.
func killUID(uid int, patience time.Duration) (live, zombies int) {
	deadline := time.Now().Add(patience)
	me := os.Getpid()
	for delay := 100 * time.Microsecond; ; delay = min(2*delay, 20*time.Millisecond) {
		live, zombies = 0, 0
		for _, pr := range procsOfUID(uid) {
			if !pr.zombie {
				live++
				_ = syscall.Kill(pr.pid, syscall.SIGKILL)
				continue
			}
			if pr.ppid == me {
				var ws syscall.WaitStatus
				if n, _ := syscall.Wait4(pr.pid, &ws, syscall.WNOHANG, nil); n == pr.pid {
					continue
				}
			}
			zombies++
		}
		if live == 0 || time.Now().After(deadline) {
			return live, zombies
		}
		time.Sleep(delay)
	}
}

// sharedWritableDirs are where every uid may create files on a usual Linux
// system; the fallback sandbox's commands see them.
var sharedWritableDirs = []string{"/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/var/lock", "/dev/mqueue"}

// removeFilesOfUID deletes everything uid owns in sharedWritableDirs, after
// its last process has ended: a file, or a whole tree of any depth (os.RemoveAll
// works through directory descriptors, without following links). It looks
// into the world-writable directories of other owners below them too (such
// as /tmp/.X11-unix), the only other places uid could have written.
func removeFilesOfUID(uid int) error {
	seen := map[string]bool{}
	var errs []error
	var visit func(dir string, depth int)
	visit = func(dir string, depth int) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			info, err := os.Lstat(p)
			if err != nil {
				continue
			}
			st, ok := info.Sys().(*syscall.Stat_t)
			switch {
			case !ok:
			case int(st.Uid) == uid:
				if err := os.RemoveAll(p); err != nil {
					errs = append(errs, err)
				}
			case info.IsDir() && info.Mode().Perm()&0o002 != 0 && depth < 8:
				visit(p, depth+1)
			}
		}
	}
	for _, d := range sharedWritableDirs {
		real, err := filepath.EvalSymlinks(d)
		if err != nil || seen[real] {
			continue
		}
		seen[real] = true
		visit(real, 0)
	}
	return errors.Join(errs...)
}
