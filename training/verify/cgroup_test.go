package verify

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// The fallback's launcher kills every process of its uid after the
// command, so as root outside a PID namespace it refuses to run one without
// --uid; with --probe it only joins the cgroup it is given (the verifier's
// cgroup v2 check) and runs nothing.
func TestLauncherRefusesRootWithoutUID(t *testing.T) {
	needGPP(t)
	if os.Geteuid() != 0 {
		t.Skip("as root only")
	}
	launcher, err := initBinary()
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	out, err := exec.Command(launcher, "--exec", "/usr/bin/touch", marker).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "refusing to run a command as root") {
		t.Errorf("launcher without --uid: err %v, output %q", err, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the command ran")
	}
	cg, _, err := makeMemoryCgroup(64 << 20)
	if err != nil {
		t.Skip("no memory cgroup:", err)
	}
	defer removeCgroup(cg)
	out, err = exec.Command(launcher, "--cgroup", filepath.Join(cg, "cgroup.procs"), "--probe", "--exec", "/usr/bin/touch", marker).CombinedOutput()
	if err != nil {
		t.Errorf("probe: %v %q", err, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the probe ran the command")
	}
}
