package training

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gosqlenv/gosqlenv/sqlenv"
)

// EvaluateModel plays one greedy episode per question with the roller's
// model (all episodes batched) and reports them in sqlenv's evaluation
// format, so they compare directly with sqlenv.Evaluate's reports of other
// policies on the same questions.
func EvaluateModel(ctx context.Context, r *Roller, questionIDs []string) (sqlenv.EvalReport, error) {
	episodes, _, err := r.Greedy(ctx, questionIDs)
	if err != nil {
		return sqlenv.EvalReport{}, err
	}
	return EvalReportOf(episodes), nil
}

// EvalReportOf converts played episodes to sqlenv's report, with each
// turn's model text in the action's metadata ("text").
func EvalReportOf(episodes []*Episode) sqlenv.EvalReport {
	var rep sqlenv.EvalReport
	var correct, steps int
	var reward float64
	for _, e := range episodes {
		er := sqlenv.EpisodeReport{QuestionID: e.QuestionID, Question: e.Initial.Question, Initial: e.Initial,
			Correct: e.Meta.Correct, Steps: e.Meta.Steps, Reward: e.Meta.EnvReward}
		er.Database, _ = e.Initial.Metadata[sqlenv.MetaDatabaseName].(string)
		for _, t := range e.Turns {
			a := t.Action
			a.Metadata = map[string]any{"text": t.Text}
			er.Turns = append(er.Turns, sqlenv.Turn{Action: a, Observation: t.Observation})
		}
		if e.Meta.Truncated {
			er.Err = "completion budget exhausted before the episode ended"
			rep.Failed++
		}
		if er.Correct {
			correct++
		}
		steps += er.Steps
		reward += er.Reward
		rep.Episodes = append(rep.Episodes, er)
	}
	if n := float64(len(episodes)); n > 0 {
		rep.SuccessRate, rep.AvgReward, rep.AvgSteps = float64(correct)/n, reward/n, float64(steps)/n
	}
	return rep
}

// The policies of an evaluation summary, in reporting order.
const (
	PolicyRandom    = "random"    // sqlenv's random policy
	PolicyUntrained = "untrained" // the model before any training
	PolicySFT       = "sft"       // after the SFT warm-up
	PolicyGRPO      = "grpo"      // after SFT and GRPO
)

// Policies lists the policies of an evaluation summary in reporting order.
var Policies = []string{PolicyRandom, PolicyUntrained, PolicySFT, PolicyGRPO}

// EvalSummaryFile is the name of the machine-readable evaluation summary in
// a run's output directory.
const EvalSummaryFile = "eval_summary.json"

// SplitResult is one policy's evaluation on one split: one greedy episode
// per question, and eval_samples episodes per question sampled at the
// training temperature. Success rates are fractions in [0, 1].
type SplitResult struct {
	// GreedySuccess is the success rate of the greedy episodes. The random
	// policy has no greedy mode: its first episode per question counts.
	GreedySuccess float64 `json:"greedy_success"`
	// SampledSuccess is the success rate of the sampled episodes (NaN-free:
	// equal to GreedySuccess when eval_samples is 0).
	SampledSuccess float64 `json:"sampled_success"`
	// SampledSuccessSE is the standard error of SampledSuccess over its
	// episodes, sqrt(p(1−p)/n).
	SampledSuccessSE float64 `json:"sampled_success_se"`
	// Questions is the number of questions evaluated.
	Questions int `json:"questions"`
	// SampledEpisodes is the number of sampled episodes (questions ×
	// eval_samples).
	SampledEpisodes int `json:"sampled_episodes"`
	// Temperature is the sampling temperature of the sampled episodes.
	Temperature float64 `json:"temperature"`
	// SampledByQuestion is each question's success rate over its sampled
	// episodes, by question id: what PairedDifference compares two
	// policies on (absent from summaries written before it existed).
	SampledByQuestion map[string]float64 `json:"sampled_by_question,omitempty"`
	// GroundedNames is the share of the table and column names written in
	// the QUERY actions of all episodes (greedy and sampled) that the
	// episode had been shown before (GroundedNames), over NamesWritten
	// names; 0 when no name was written.
	GroundedNames float64 `json:"grounded_names"`
	NamesWritten  int     `json:"names_written"`

	// Greedy and Sampled hold the episodes with their transcripts.
	Greedy  sqlenv.EvalReport `json:"-"`
	Sampled sqlenv.EvalReport `json:"-"`
}

// String reads like "greedy 45.0 %, sampled 41.3 ± 3.9 % (40 questions)".
func (r SplitResult) String() string {
	return fmt.Sprintf("greedy %.1f %%, sampled %.1f ± %.1f %% (%d questions)", 100*r.GreedySuccess, 100*r.SampledSuccess, 100*r.SampledSuccessSE, r.Questions)
}

// EvalSummary maps split → policy → result; it is what eval_summary.json
// holds.
type EvalSummary map[string]map[string]SplitResult

// Set records one policy's results per split.
func (s EvalSummary) Set(policy string, bySplit map[string]SplitResult) {
	for split, r := range bySplit {
		if s[split] == nil {
			s[split] = map[string]SplitResult{}
		}
		s[split][policy] = r
	}
}

// ReadEvalSummary reads dir's eval_summary.json; a missing file is an empty
// summary.
func ReadEvalSummary(dir string) (EvalSummary, error) {
	s := EvalSummary{}
	b, err := os.ReadFile(filepath.Join(dir, EvalSummaryFile))
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, EvalSummaryFile), err)
	}
	return s, nil
}

// RecordEvaluation adds one policy's results to dir's eval_summary.json
// (keeping the other policies' entries) and writes the transcripts to
// eval_<policy>.json beside it. It returns the updated summary.
func RecordEvaluation(dir, policy string, bySplit map[string]SplitResult) (EvalSummary, error) {
	s, err := ReadEvalSummary(dir)
	if err != nil {
		return nil, err
	}
	s.Set(policy, bySplit)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := writeJSON(filepath.Join(dir, EvalSummaryFile), s); err != nil {
		return nil, err
	}
	transcripts := map[string]map[string]sqlenv.EvalReport{}
	for split, r := range bySplit {
		transcripts[split] = map[string]sqlenv.EvalReport{"greedy": r.Greedy, "sampled": r.Sampled}
	}
	return s, writeJSON(TranscriptsPath(dir, policy), transcripts)
}

// TranscriptsPath is the file in dir where RecordEvaluation writes the
// episodes of policy: eval_<policy>.json.
func TranscriptsPath(dir, policy string) string {
	return filepath.Join(dir, "eval_"+policy+".json")
}

// ReadTranscripts reads the episodes RecordEvaluation wrote for policy:
// split → "greedy" or "sampled" → report.
func ReadTranscripts(dir, policy string) (map[string]map[string]sqlenv.EvalReport, error) {
	var t map[string]map[string]sqlenv.EvalReport
	b, err := os.ReadFile(TranscriptsPath(dir, policy))
	if err != nil {
		return nil, err
	}
	return t, json.Unmarshal(b, &t)
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// splitResult summarises greedy and sampled reports.
func splitResult(questions int, temperature float64, greedy, sampled sqlenv.EvalReport) SplitResult {
	r := SplitResult{Questions: questions, Temperature: temperature, Greedy: greedy, Sampled: sampled,
		GreedySuccess: greedy.SuccessRate, SampledSuccess: greedy.SuccessRate, SampledEpisodes: len(greedy.Episodes)}
	if len(sampled.Episodes) > 0 {
		r.SampledSuccess, r.SampledEpisodes = sampled.SuccessRate, len(sampled.Episodes)
	}
	p, n := r.SampledSuccess, float64(r.SampledEpisodes)
	if n > 0 {
		r.SampledSuccessSE = math.Sqrt(p * (1 - p) / n)
	}
	if g, n := GroundedNames(slices.Concat(greedy.Episodes, sampled.Episodes)); n > 0 {
		r.GroundedNames, r.NamesWritten = float64(g)/float64(n), n
	}
	episodes := sampled.Episodes
	if len(episodes) == 0 {
		episodes = greedy.Episodes
	}
	if len(episodes) > 0 {
		correct, total := map[string]int{}, map[string]int{}
		for _, ep := range episodes {
			total[ep.QuestionID]++
			if ep.Correct {
				correct[ep.QuestionID]++
			}
		}
		r.SampledByQuestion = make(map[string]float64, len(total))
		for q, t := range total {
			r.SampledByQuestion[q] = float64(correct[q]) / float64(t)
		}
	}
	return r
}

// PairedDifference compares two policies' sampled success on the questions
// both were evaluated on: the mean over those questions of a's success rate
// minus b's, and its standard error, sd/√n of the per-question differences.
// Both policies answered the same questions, so what makes a question easy
// or hard for both cancels out: this is the standard error of the
// difference, smaller than the √(se_a² + se_b²) of two independent samples
// when the policies agree on which questions are hard, and it counts the
// questions (not the episodes) as the sample, as a claim about new
// questions should. ok is false when either result lacks per-question
// rates (summaries written before SampledByQuestion) or fewer than two
// questions are shared.
func PairedDifference(a, b SplitResult) (diff, se float64, n int, ok bool) {
	var ds []float64
	for q, ra := range a.SampledByQuestion {
		if rb, shared := b.SampledByQuestion[q]; shared {
			ds = append(ds, ra-rb)
		}
	}
	if len(ds) < 2 {
		return 0, 0, len(ds), false
	}
	diff, se = MeanStdErr(ds)
	return diff, se, len(ds), true
}

// Table renders the summary as aligned text: one row per split and policy
// (in Splits and Policies order, other policies after them).
func (s EvalSummary) Table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-18s %-10s %9s %18s %9s\n", "split", "policy", "greedy", "sampled ± se", "questions")
	for _, split := range Splits {
		for _, policy := range s.policies(split) {
			r := s[split][policy]
			fmt.Fprintf(&b, "%-18s %-10s %8.1f%% %11.1f ± %4.1f%% %9d\n", split, policy, 100*r.GreedySuccess, 100*r.SampledSuccess, 100*r.SampledSuccessSE, r.Questions)
		}
	}
	return b.String()
}

// policies lists the policies recorded for split: Policies first, then
// others by name.
func (s EvalSummary) policies(split string) []string {
	var out, extra []string
	for _, p := range Policies {
		if _, ok := s[split][p]; ok {
			out = append(out, p)
		}
	}
	for p := range s[split] {
		if !slices.Contains(Policies, p) {
			extra = append(extra, p)
		}
	}
	slices.Sort(extra)
	return append(out, extra...)
}
