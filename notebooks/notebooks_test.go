// Package notebooks_test executes the project's notebooks headlessly
// (notebooks/run.sh: Jupyter's nbconvert with the GoNB kernel) with the tiny
// preset shortened further, and checks that no cell failed and that the
// plots and HTML outputs are saved in the executed copies.
package notebooks_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

type notebook struct {
	Cells []struct {
		CellType string `json:"cell_type"`
		Source   []string
		Outputs  []struct {
			OutputType string         `json:"output_type"`
			Data       map[string]any `json:"data"`
			Ename      string         `json:"ename"`
			Evalue     string         `json:"evalue"`
			Text       []string       `json:"text"`
		} `json:"outputs"`
	} `json:"cells"`
}

func jupyterAvailable() bool {
	for _, j := range []string{"/usr/bin/jupyter", "jupyter"} {
		if err := exec.Command(j, "nbconvert", "--version").Run(); err == nil {
			return true
		}
	}
	return false
}

func TestNotebooksExecute(t *testing.T) {
	if testing.Short() {
		t.Skip("executing notebooks takes minutes")
	}
	if !jupyterAvailable() {
		t.Skip("Jupyter's nbconvert is not installed: sudo apt-get install jupyter-nbconvert jupyter-client (or pip install nbconvert); bash .ci/run installs it")
	}
	if deadline, ok := t.Deadline(); ok && time.Until(deadline) < 9*time.Minute {
		t.Skipf("less than 9 minutes left of the test timeout (%v): run with -timeout 30m", time.Until(deadline).Round(time.Second))
	}
	names := []string{"train_grpo.ipynb", "explore_sqlenv.ipynb"}
	cmd := exec.Command("bash", "run.sh", names[0], names[1])
	cmd.Dir = "."
	cmd.Env = append(os.Environ(),
		"GOSQLENV_MAX_STEPS=2", "GOSQLENV_EVAL_STEPS=1", "GOSQLENV_SFT_MAX_QUESTIONS=6", "GOSQLENV_SFT_EPOCHS=1",
		"GOSQLENV_MAX_EVAL_QUESTIONS=3", "GOSQLENV_EVAL_SAMPLES=2",
		"GOSQLENV_NUM_GENERATIONS=2", "GOSQLENV_PER_DEVICE_TRAIN_BATCH_SIZE=2", "GOSQLENV_GRADIENT_ACCUMULATION_STEPS=1")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("notebooks executed in %v", time.Since(start).Round(time.Second))
	if err != nil {
		t.Fatalf("run.sh failed: %v\n%s", err, tail(string(out), 4000))
	}
	// The terminal shows progress, one line per cell; the kernel's own log
	// (klog's start-up self-test, GoNB's messages) is in a file.
	cellLines := 0
	running := map[string]int{} // heartbeat lines per cell ("3/10")
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) > 3 && f[0] == "cell" && f[len(f)-1] == "ok" {
			cellLines++
			// A cell that ran well past the heartbeat's 30 s printed lines meanwhile.
			if secs, err := strconv.ParseFloat(f[len(f)-3], 64); err == nil && secs > 40 && running[f[1]] < int(secs/30)-1 {
				t.Errorf("cell %s ran %.0f s with %d progress lines in the terminal, want one every 30 s", f[1], secs, running[f[1]])
			}
		}
		if len(f) > 3 && f[0] == "cell" && slices.Contains(f, "running") {
			running[f[1]]++
		}
		if strings.Contains(line, "Info message") || strings.Contains(line, "Executing: /tmp/gonb_") {
			t.Errorf("the kernel's log reached the terminal: %q", line)
		}
	}
	defer func() {
		if cellLines != 0 {
			t.Errorf("run.sh printed %+d lines \"cell … ok\" more than the notebooks' code cells:\n%s", cellLines, tail(string(out), 4000))
		}
	}()
	for _, name := range names {
		if st, err := os.Stat(filepath.Join("out", strings.TrimSuffix(name, ".ipynb")+".kernel.log")); err != nil || st.Size() == 0 {
			t.Errorf("%s: no kernel log beside the executed copy: %v", name, err)
		}
	}
	for _, name := range names {
		path := filepath.Join("out", name)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("executed notebook: %v", err)
		}
		var nb notebook
		if err := json.Unmarshal(b, &nb); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		counts := map[string]int{}
		for _, c := range nb.Cells {
			if c.CellType == "code" {
				cellLines--
			}
		}
		for i, c := range nb.Cells {
			for _, o := range c.Outputs {
				if o.OutputType == "error" {
					t.Errorf("%s cell %d failed: %s: %s", name, i, o.Ename, o.Evalue)
				}
				if o.OutputType == "stream" && strings.Contains(strings.Join(o.Text, ""), "panic:") {
					t.Errorf("%s cell %d panicked: %s", name, i, strings.Join(o.Text, ""))
				}
				for mime := range o.Data {
					counts[mime]++
				}
			}
		}
		wantPNG := 0
		if name == "train_grpo.ipynb" {
			wantPNG = 3 // success per split, GRPO's learning curves and the SFT loss
			checkEvalSummary(t, filepath.Join("outputs", "tiny", "eval_summary.json"))
		}
		if counts["image/png"] < wantPNG || counts["text/html"] < 3 {
			t.Errorf("%s: outputs by type %v, want ≥ %d image/png and ≥ 3 text/html", name, counts, wantPNG)
		}
	}
}

// checkEvalSummary checks that the run wrote eval_summary.json with every
// split and policy, 3 questions each (GOSQLENV_MAX_EVAL_QUESTIONS).
func checkEvalSummary(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the training notebook wrote no evaluation summary: %v", err)
	}
	var s map[string]map[string]struct {
		Greedy    *float64 `json:"greedy_success"`
		Sampled   *float64 `json:"sampled_success"`
		SE        *float64 `json:"sampled_success_se"`
		Questions int      `json:"questions"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for _, split := range []string{"train", "heldout_questions", "unseen_databases"} {
		for _, policy := range []string{"random", "untrained", "sft", "grpo"} {
			r, ok := s[split][policy]
			if !ok || r.Greedy == nil || r.Sampled == nil || r.SE == nil || r.Questions != 3 {
				t.Errorf("%s: %s/%s = %+v, want all fields and 3 questions", path, split, policy, r)
			}
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// cellRun is one executed cell as interactive.py reports it.
type cellRun struct {
	Cell    int      `json:"cell"`
	Restart bool     `json:"restart"`
	Status  string   `json:"status"`
	Seconds float64  `json:"seconds"`
	Texts   []string `json:"texts"`
	Error   string   `json:"error"`
	// Complete and Matches: a completion request (Tab) and its answer.
	Complete string   `json:"complete"`
	Matches  []string `json:"matches"`
}

// interact executes a notebook's code cells through a real GoNB kernel in
// the order of steps (cell numbers from 1, or "restart"), as a person does.
func interact(t *testing.T, notebook string, env []string, steps ...string) []cellRun {
	t.Helper()
	setup := exec.Command("bash", "run.sh", "--setup")
	if out, err := setup.CombinedOutput(); err != nil {
		t.Fatalf("run.sh --setup: %v\n%s", err, tail(string(out), 3000))
	}
	repo, _ := filepath.Abs("..")
	cmd := exec.Command("/usr/bin/python3", append([]string{"interactive.py", notebook}, steps...)...)
	cmd.Env = append(os.Environ(), "JUPYTER_DATA_DIR="+filepath.Join(repo, ".jupyter"), "PATH="+filepath.Join(repo, ".bin")+":"+os.Getenv("PATH"))
	cmd.Env = append(cmd.Env, env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("interactive.py %s %v: %v\n%s\nkernel: %s", notebook, steps, err, out, tail(stderr.String(), 3000))
	}
	var runs []cellRun
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r cellRun
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("interactive.py printed %q: %v", line, err)
		}
		runs = append(runs, r)
	}
	if len(runs) != len(steps) {
		t.Fatalf("%d results for %d steps: %+v", len(runs), len(steps), runs)
	}
	return runs
}

// The explore notebook the way a person uses it: re-running a step's cell
// redoes that step (same observation, not one more step), re-running the
// answer still answers, and after a kernel restart a middle cell runs on
// its own and shows what it showed before.
func TestExploreNotebookInteractively(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a Jupyter kernel")
	}
	if !jupyterAvailable() {
		t.Skip("Jupyter's nbconvert is not installed: sudo apt-get install jupyter-nbconvert jupyter-client; bash .ci/run installs it")
	}
	t.Setenv("GONB_DIR", "") // the kernel sets it to the notebook's folder
	runs := interact(t, "explore_sqlenv.ipynb", nil, "1", "2", "3", "3", "4", "5", "6", "7", "7", "complete:%%\nexplore.Sta", "restart", "5")
	if m := runs[9].Matches; !slices.Contains(m, "Start") {
		t.Errorf("completing explore.Sta offered %v, want Start (gopls, installed by run.sh --setup)", m)
	}
	runs = slices.Delete(runs, 9, 10)
	for i, r := range runs {
		if !r.Restart && r.Status != "ok" {
			t.Fatalf("step %d (cell %d) failed: %s %v", i, r.Cell, r.Error, r.Texts)
		}
	}
	same := func(what string, a, b cellRun) {
		if strings.Join(a.Texts, "\n") != strings.Join(b.Texts, "\n") {
			t.Errorf("%s: outputs differ:\n%v\n%v", what, a.Texts, b.Texts)
		}
	}
	same("re-running the DESCRIBE cell", runs[2], runs[3])
	same("re-running the ANSWER cell", runs[7], runs[8])
	same("the QUERY cell after a restart", runs[5], runs[10])
	if answer := strings.Join(runs[8].Texts, " "); !strings.Contains(answer, "Answer submitted: correct") || !strings.Contains(answer, "step 5, 0 left") {
		t.Errorf("the re-run ANSWER cell shows %q, want the correct answer at step 5", answer)
	}
}

// A cell of the training notebook run before the section it needs says
// which section to run, instead of "no such file".
func TestTrainingNotebookNamesTheCellToRunFirst(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a Jupyter kernel")
	}
	if !jupyterAvailable() {
		t.Skip("Jupyter's nbconvert is not installed: sudo apt-get install jupyter-nbconvert jupyter-client; bash .ci/run installs it")
	}
	out := t.TempDir()
	// Code cells: 1 %noautoget, 2 configuration, 3 data, …, 8 learning curves,
	// 9 what was learned.
	runs := interact(t, "train_grpo.ipynb", []string{"GOSQLENV_OUTPUT_DIR=" + out}, "1", "2", "8", "9", "restart", "3")
	for i, want := range map[int]string{2: "run section 6 (GRPO) first", 3: "run section 4 (Baselines) first"} {
		r := runs[i]
		text := r.Error + " " + strings.Join(r.Texts, " ")
		if r.Status != "error" || !strings.Contains(text, want) {
			t.Errorf("cell %d run too early: status %s, error %q, outputs %v; want an error saying %q", r.Cell, r.Status, r.Error, r.Texts, want)
		}
		if strings.Contains(text, "goroutine") || strings.Count(text, want) != 1 {
			t.Errorf("cell %d: the error is not said once, plainly: %q", r.Cell, text)
		}
		// GoNB as released also copies "exit status 1" onto the cell's
		// stderr; run.sh builds the kernel without that copy.
		if n := strings.Count(text, "exit status 1"); n != 1 {
			t.Errorf("cell %d: %q says the exit status %d times, want once (as the cell's error)", r.Cell, text, n)
		}
	}
	// After a restart, a middle cell runs on its own (its helpers live in package nb).
	if r := runs[5]; r.Status != "ok" || !strings.Contains(strings.Join(r.Texts, " "), "heldout_questions") {
		t.Errorf("the data cell after a restart: status %s, error %q, outputs %v", r.Status, r.Error, r.Texts)
	}
}

// Every display of a cell reaches the notebook even when the cell's program
// ends right after showing it on a busy machine: GoNB stops reading a
// program's displays when it exits, and CI once lost the ANSWER cell's whole
// output that way (cell.HTML now waits until GoNB has read each display).
func TestDisplaysSurviveABusyMachine(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a Jupyter kernel")
	}
	if !jupyterAvailable() {
		t.Skip("Jupyter's nbconvert is not installed: sudo apt-get install jupyter-nbconvert jupyter-client; bash .ci/run installs it")
	}
	t.Setenv("GONB_DIR", "")
	// Keep every core busy, so that GoNB's reader lags behind the cell.
	stop := make(chan struct{})
	var busy sync.WaitGroup
	for range runtime.NumCPU() + 1 {
		busy.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
			}
		})
	}
	runs := interact(t, filepath.Join("testdata", "displays.ipynb"), nil, "1", "2", "2", "2", "2", "2")
	close(stop)
	busy.Wait()
	want := make([]string, 300)
	for j := range want {
		want[j] = fmt.Sprintf("display %d", j)
	}
	for i, r := range runs[1:] {
		if r.Status != "ok" {
			t.Fatalf("run %d: %s %s", i+1, r.Status, r.Error)
		}
		if !slices.Equal(r.Texts, want) {
			t.Errorf("run %d showed %d displays, want the 300 in order (first missing after %d)", i+1, len(r.Texts), commonPrefix(r.Texts, want))
		}
	}
}

func commonPrefix(a, b []string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// The training notebook's cells re-run and stopped the way a person does:
// the SFT cell run again leaves that run's metrics alone; GRPO after a
// stopped SFT re-run refuses, saying why, instead of training from the
// earlier run's checkpoint; after a complete SFT it names the checkpoint it
// starts from; the curves of a stopped GRPO say the run did not finish.
func TestTrainingNotebookRerunsAndStops(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a Jupyter kernel")
	}
	if !jupyterAvailable() {
		t.Skip("Jupyter's nbconvert is not installed: sudo apt-get install jupyter-nbconvert jupyter-client; bash .ci/run installs it")
	}
	out := t.TempDir()
	env := []string{"GOSQLENV_OUTPUT_DIR=" + out, "GOSQLENV_MAX_STEPS=3", "GOSQLENV_EVAL_STEPS=0", "GOSQLENV_LOGGING_STEPS=1",
		"GOSQLENV_SFT_MAX_QUESTIONS=6", "GOSQLENV_SFT_EPOCHS=2", "GOSQLENV_MAX_EVAL_QUESTIONS=2", "GOSQLENV_EVAL_SAMPLES=1",
		"GOSQLENV_NUM_GENERATIONS=2", "GOSQLENV_PER_DEVICE_TRAIN_BATCH_SIZE=2", "GOSQLENV_GRADIENT_ACCUMULATION_STEPS=1"}
	// Code cells: 1 %noautoget, 2 configuration, 6 SFT, 7 GRPO, 8 learning curves.
	runs := interact(t, "train_grpo.ipynb", env, "1", "2", "6", "6", "stop:6:step 1/", "7", "6", "stop:7:step 1/", "8")
	text := func(i int) string { return runs[i].Error + " " + strings.Join(runs[i].Texts, " ") }
	for _, i := range []int{2, 3, 6, 8} {
		if runs[i].Status != "ok" {
			t.Fatalf("step %d (cell %d): %s", i, runs[i].Cell, text(i))
		}
	}
	if runs[4].Status != "error" {
		t.Errorf("the stopped SFT cell ended %s: %s", runs[4].Status, text(4))
	}
	// Stopped after its current step (or, killed, never ended).
	if r := text(5); runs[5].Status != "error" || !strings.Contains(r, "run the SFT warm-up to its end before GRPO") ||
		!strings.Contains(r, "SFT warm-up stopped at") && !strings.Contains(r, "never ended") {
		t.Errorf("GRPO after a stopped SFT re-run: %s %s; want a refusal saying the SFT run stopped", runs[5].Status, r)
	}
	if r := text(7); !strings.Contains(r, "GRPO starts from sft/checkpoint-") || !strings.Contains(r, "completed SFT run") {
		t.Errorf("GRPO after a complete SFT does not name its checkpoint: %s", r)
	}
	if r := text(8); !strings.Contains(r, "This GRPO run did not finish") {
		t.Errorf("the curves of a stopped GRPO run: %s; want them marked as unfinished", r)
	}
	// Three complete or stopped SFT runs, one run's metrics.
	b, err := os.ReadFile(filepath.Join(out, "sft", "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var last struct {
		Step float64 `json:"step"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || int(last.Step) != len(lines) {
		t.Errorf("sft/metrics.jsonl after re-runs: %d lines ending at step %v (%v), want one run's", len(lines), last.Step, err)
	}
}
