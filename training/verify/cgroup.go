package verify

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// A jail's memory limit covers all of its processes together: a memory
// cgroup of its own, under the cgroup this process is in, with memory.max
// (cgroup v2) or memory.limit_in_bytes (v1, where the memory controller is
// still mounted on its own hierarchy). Where neither can be written (not
// root, no delegation, no controller) the jail's notices say that memory is
// limited per process only.

var cgroupSeq atomic.Int64

// memoryCgroupParent finds the directory of this process's memory cgroup and
// whether it is cgroup v2.
func memoryCgroupParent() (dir string, v2 bool, err error) {
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", false, err
	}
	paths := map[string]string{} // "memory" (v1) or "" (v2) → cgroup path
	for _, line := range strings.Split(strings.TrimSpace(string(self)), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		for _, c := range strings.Split(f[1], ",") {
			if c == "memory" || (f[0] == "0" && c == "") {
				paths[c] = f[2]
			}
		}
	}
	mi, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", false, err
	}
	defer mi.Close()
	var v1Dir, v2Dir string
	sc := bufio.NewScanner(mi)
	for sc.Scan() {
		// id parent major:minor root mountpoint options... - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		a, b := strings.Fields(pre), strings.Fields(post)
		if len(a) < 5 || len(b) < 3 {
			continue
		}
		root, mount := a[3], a[4]
		switch {
		case b[0] == "cgroup" && paths["memory"] != "" && hasOption(b[2], "memory"):
			v1Dir = filepath.Join(mount, relCgroup(paths["memory"], root))
		case b[0] == "cgroup2" && paths[""] != "":
			if _, seen := paths["memory"]; !seen {
				v2Dir = filepath.Join(mount, relCgroup(paths[""], root))
			}
		}
	}
	switch {
	case v1Dir != "":
		return v1Dir, false, nil
	case v2Dir != "":
		return v2Dir, true, nil
	}
	return "", false, errors.New("no memory cgroup controller is mounted")
}

func hasOption(opts, name string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == name {
			return true
		}
	}
	return false
}

// relCgroup is cgroup path p relative to the mount's root.
func relCgroup(p, root string) string {
	if root != "/" {
		p = strings.TrimPrefix(p, root)
	}
	return p
}

// newMemoryCgroup makes a cgroup limited to limit bytes of memory (no swap)
// and moves pid into it; its children are born there.
func newMemoryCgroup(limit uint64, pid int) (string, error) {
	dir, _, err := makeMemoryCgroup(limit)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
		removeCgroup(dir)
		return "", fmt.Errorf("move the sandbox into %s: %w", dir, err)
	}
	return dir, nil
}

// makeMemoryCgroup makes an empty cgroup limited to limit bytes of memory
// (no swap), page cache and tmpfs pages (/dev/shm) included; v2 says it is
// cgroup v2's.
func makeMemoryCgroup(limit uint64) (dir string, v2 bool, err error) {
	parent, v2, err := memoryCgroupParent()
	if err != nil {
		return "", false, err
	}
	if v2 {
		// The memory controller must be enabled for the children.
		ctl, err := os.ReadFile(filepath.Join(parent, "cgroup.subtree_control"))
		if err != nil {
			return "", false, err
		}
		if !hasOption(strings.ReplaceAll(strings.TrimSpace(string(ctl)), " ", ","), "memory") {
			if err := os.WriteFile(filepath.Join(parent, "cgroup.subtree_control"), []byte("+memory"), 0); err != nil {
				return "", false, fmt.Errorf("enable the memory controller in %s: %w", parent, err)
			}
		}
	}
	sweepOnce.Do(func() { sweepStaleCgroups(parent) })
	dir = filepath.Join(parent, fmt.Sprintf("gosqlenv-verify-%d-%d", os.Getpid(), cgroupSeq.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the same message for every jail, whatever its name
		}
		return "", false, fmt.Errorf("cannot create a memory cgroup under %s: %w", parent, err)
	}
	files := [][2]string{{"memory.limit_in_bytes", strconv.FormatUint(limit, 10)}}
	if v2 {
		files = [][2]string{{"memory.max", strconv.FormatUint(limit, 10)}, {"memory.swap.max", "0"}}
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f[0]), []byte(f[1]), 0); err != nil && f[0] != "memory.swap.max" {
			removeCgroup(dir)
			return "", false, fmt.Errorf("set %s of %s: %w", f[0], dir, err)
		}
	}
	if !v2 { // no swap either, where the kernel accounts it
		_ = os.WriteFile(filepath.Join(dir, "memory.memsw.limit_in_bytes"), []byte(strconv.FormatUint(limit, 10)), 0)
	}
	return dir, v2, nil
}

// removeCgroup removes a jail's cgroup once its processes are gone (the
// kernel may take a moment to let go of the last one).
func removeCgroup(dir string) {
	for i := 0; i < 100; i++ {
		err := syscall.Rmdir(dir)
		if err == nil || errors.Is(err, syscall.ENOENT) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

var sweepOnce sync.Once

// sweepStaleCgroups removes the cgroups under parent that verifier
// processes no longer running left behind (a pooled jail's cgroup outlives
// a process that exits without closing its verifiers). A cgroup is named
// gosqlenv-verify-PID-N after the process that made it; one whose process
// is gone and that holds no process is removed (rmdir refuses a cgroup
// that still has processes).
func sweepStaleCgroups(parent string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), "gosqlenv-verify-")
		pidText, _, ok2 := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || !ok2 || err != nil || !e.IsDir() || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); err == nil || errors.Is(err, syscall.EPERM) {
			continue // its process (or one with its pid) still runs
		}
		_ = syscall.Rmdir(filepath.Join(parent, e.Name()))
	}
}
