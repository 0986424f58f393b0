package training

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gosqlenv/gosqlenv/training/internal/atomicfile"
	"github.com/gosqlenv/gosqlenv/training/qwen3"
)

// Metrics is one record of named values (TRL's metric names: reward,
// reward_std, rewards/<fn>/mean, loss, grad_norm, …).
type Metrics map[string]float64

// MetricsFile is the JSON-lines file a run writes in its output directory.
const MetricsFile = "metrics.jsonl"

// RunLog collects step metrics: every LoggingSteps steps it writes their
// average as one JSON line to output_dir/metrics.jsonl, calls OnLog, and
// keeps a live progress line on Progress.
type RunLog struct {
	// OnLog, when set, receives every logged record (notebook displays).
	OnLog func(Metrics)
	// OnActivity, when set, is told of work between steps (Activity): the
	// last step's metrics, the run's total steps and what is being done.
	OnActivity func(last Metrics, total int, what string)
	// History holds every logged record.
	History []Metrics

	path     string
	every    int
	progress io.Writer
	window   []Metrics
	total    int
	last     Metrics // the last step added
}

// NewRunLog logs into dir (created if needed); progress may be nil.
func NewRunLog(dir string, loggingSteps int, progress io.Writer) (*RunLog, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("run log: %w", err)
	}
	return &RunLog{path: filepath.Join(dir, MetricsFile), every: max(loggingSteps, 1), progress: progress}, nil
}

// Path is the metrics file.
func (l *RunLog) Path() string { return l.path }

// Total is the number of steps of the run being logged, as last given to
// Add (0 before the first step).
func (l *RunLog) Total() int { return l.total }

// Add records one step's metrics; total is the number of steps of the run.
func (l *RunLog) Add(m Metrics, total int) error {
	l.window = append(l.window, m)
	l.total, l.last = total, m
	if l.progress != nil {
		fmt.Fprint(l.progress, progressLine(m, total))
	}
	if len(l.window) >= l.every {
		return l.Flush()
	}
	return nil
}

// Activity shows work that runs between two steps — a periodic
// evaluation — so that the progress line and the notebook's display stay
// live: the progress line of the last step followed by what, and
// OnActivity.
func (l *RunLog) Activity(what string) {
	last := l.last
	if last == nil {
		last = Metrics{}
	}
	if l.progress != nil {
		line := "\r" + what + " "
		if l.total > 0 {
			line = progressLine(last, l.total) + "· " + what + " "
		}
		fmt.Fprint(l.progress, line)
	}
	if l.OnActivity != nil {
		l.OnActivity(last, l.total, what)
	}
}

// between makes the metrics of a step not yet added (its periodic
// evaluation runs before Add) the ones Activity shows.
func (l *RunLog) between(m Metrics, total int) { l.last, l.total = m, total }

// lastValueMetrics are running totals or estimates: a logged record keeps
// the last step's value instead of the window's average.
var lastValueMetrics = []string{"compile/programs", "compile/seconds", "time/remaining"}

// Flush logs the average of the steps not yet logged. Each metric is
// averaged over the steps that report it: a metric measured only on some
// steps (the periodic evaluation) keeps its value.
func (l *RunLog) Flush() error {
	if len(l.window) == 0 {
		return nil
	}
	rec, count := Metrics{}, map[string]int{}
	for _, m := range l.window {
		for k, v := range m {
			rec[k] += v
			count[k]++
		}
	}
	for k, n := range count {
		rec[k] /= float64(n)
	}
	last := l.window[len(l.window)-1]
	rec["step"], rec["epoch"] = last["step"], last["epoch"]
	for _, k := range lastValueMetrics {
		if v, ok := last[k]; ok {
			rec[k] = v
		}
	}
	l.window = l.window[:0]
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("run log: %w", err)
	}
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("run log: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("run log: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("run log: %w", err)
	}
	l.History = append(l.History, rec)
	if l.OnLog != nil {
		l.OnLog(rec)
	}
	if l.progress != nil && int(rec["step"]) >= l.total {
		fmt.Fprintln(l.progress)
	}
	return nil
}

// Rewind drops the records of steps after step from the log file, for a
// run that continues from the checkpoint of that step: what a killed run
// logged past its last checkpoint is logged again as the steps are redone,
// so the file ends as an uninterrupted run's would. A last line cut short
// by the kill is dropped too. A missing file is nothing to rewind.
func (l *RunLog) Rewind(step int) error {
	data, err := os.ReadFile(l.path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("run log: %w", err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	var kept strings.Builder
	for i, line := range lines {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var m Metrics
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			if i == len(lines)-1 && !strings.HasSuffix(line, "\n") {
				break // the write the kill cut short
			}
			return fmt.Errorf("run log: %s line %d: %w", l.path, i+1, err)
		}
		if int(m["step"]) <= step {
			kept.WriteString(line)
		}
	}
	if err := atomicfile.Write(l.path, []byte(kept.String())); err != nil {
		return fmt.Errorf("run log: %w", err)
	}
	return nil
}

// progressLine renders "\r step 3/25 [=====>     ] reward 0.412 …": the
// rollout figures for GRPO steps, the epoch for supervised ones.
func progressLine(m Metrics, total int) string {
	step := int(m["step"])
	const width = 24
	done := width * step / max(total, 1)
	bar := strings.Repeat("=", done) + strings.Repeat(" ", width-done)
	if done < width && done > 0 {
		bar = bar[:done-1] + ">" + bar[done:]
	}
	line := fmt.Sprintf("\rstep %d/%d [%s] ", step, total, bar)
	if r, ok := m["reward"]; ok {
		line += fmt.Sprintf("reward %.3f success %.0f%% ", r, 100*m["success_rate"])
	} else if e, ok := m["epoch"]; ok {
		line += fmt.Sprintf("epoch %.2f ", e)
	}
	line += fmt.Sprintf("loss %.4f %.1fs/step ", m["loss"], m["step_time"])
	if left, ok := m["time/remaining"]; ok && step < total {
		line += fmt.Sprintf("about %s left ", (time.Duration(left) * time.Second).Round(time.Second))
	}
	return line
}

// remainingSeconds estimates the time a run has left after step (1-based)
// of total: the last step's time for each step left, and the last periodic
// evaluation's time for each evaluation left (evalAt says which steps
// evaluate; 0 seconds until one has run).
func remainingSeconds(step, total int, stepSeconds, evalSeconds float64, evalAt func(step int) bool) float64 {
	left := stepSeconds * float64(total-step)
	for s := step + 1; s <= total; s++ {
		if evalAt(s) {
			left += evalSeconds
		}
	}
	return left
}

// ReadMetrics reads a metrics.jsonl file.
func ReadMetrics(path string) ([]Metrics, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read metrics: %w", err)
	}
	defer f.Close()
	var out []Metrics
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var m Metrics
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return nil, fmt.Errorf("read metrics: %s line %d: %w", path, line, err)
		}
		out = append(out, m)
	}
	return out, sc.Err()
}

// Keys lists the metric names of records, sorted.
func Keys(records []Metrics) []string {
	seen := map[string]bool{}
	for _, r := range records {
		for k := range r {
			seen[k] = true
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Series extracts one metric over records (NaN where absent).
func Series(records []Metrics, key string) []float64 {
	out := make([]float64, len(records))
	for i, r := range records {
		v, ok := r[key]
		if !ok {
			v = math.NaN()
		}
		out[i] = v
	}
	return out
}

// addCompileMetrics records in m the programs compiled so far in the
// process and the seconds that took (qwen3.CompileStats), as
// compile/programs and compile/seconds.
func addCompileMetrics(m Metrics) {
	programs, seconds := qwen3.CompileStats()
	m["compile/programs"], m["compile/seconds"] = float64(programs), seconds
}
