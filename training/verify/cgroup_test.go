package verify

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Cgroups that verifier processes left behind are removed by the next
// verifier that makes one: those of processes that are gone; not those of
// running processes, this one included.
func TestStaleCgroupsAreSwept(t *testing.T) {
	parent, _, err := memoryCgroupParent()
	if err != nil {
		t.Skip("no memory cgroup controller:", err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	live := exec.Command("sleep", "30")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { live.Process.Kill(); live.Wait() }()
	name := func(pid int) string { return filepath.Join(parent, fmt.Sprintf("gosqlenv-verify-%d-1", pid)) }
	for _, pid := range []int{dead.Process.Pid, live.Process.Pid, os.Getpid()} {
		if err := os.Mkdir(name(pid), 0o755); err != nil {
			t.Skip("cannot make a cgroup here (not root?):", err)
		}
		defer removeCgroup(name(pid))
	}
	sweepStaleCgroups(parent)
	if _, err := os.Stat(name(dead.Process.Pid)); err == nil {
		t.Errorf("the cgroup of an exited process is left: %s", name(dead.Process.Pid))
	}
	for _, pid := range []int{live.Process.Pid, os.Getpid()} {
		if _, err := os.Stat(name(pid)); err != nil {
			t.Errorf("the cgroup of a running process was removed: %v", err)
		}
	}
}
