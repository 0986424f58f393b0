package training

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gosqlenv/gosqlenv/sqlenv"
)

func TestRolloutBatchedMultiTurn(t *testing.T) {
	qs, newEnv := bundledEnv(t, 3)
	q0, q1 := qs[0], qs[1]
	gen := &scriptedGenerator{script: func(call, row int, prompt string) string {
		switch call {
		case 0:
			return []string{"DESCRIBE: " + q0.TablesInvolved[0], "hello there", "ANSWER: " + string(q1.GoldAnswer), "QUERY: SELECT 1"}[row]
		case 1:
			return []string{"ANSWER: " + string(q0.GoldAnswer), "ANSWER: surely wrong", "QUERY: SELECT 1"}[row]
		default:
			return "DESCRIBE: nosuch"
		}
	}}
	r, err := NewRoller(gen, byteTokenizer{}, newEnv, RolloutConfig{NumGenerations: 2, MaxNewTokens: 400, HistoryPairs: 1, MaxResultChars: 300, Temperature: 1, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	episodes, stats, err := r.Rollout(context.Background(), []string{q0.QuestionID, q1.QuestionID})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gen.sizes, []int{4, 3, 1}) {
		t.Fatalf("generation batch sizes %v, want [4 3 1]: one call per turn over live episodes", gen.sizes)
	}
	if stats.Episodes != 4 || stats.Turns != 8 || stats.GenerateCalls != 3 || stats.ParseFailures != 1 {
		t.Fatalf("stats %+v", stats)
	}
	want := []struct {
		correct, truncated bool
		steps, turns       int
		group              int
	}{{true, false, 2, 2, 0}, {false, false, 2, 2, 0}, {true, false, 1, 1, 1}, {false, false, 3, 3, 1}}
	for i, w := range want {
		e := episodes[i]
		if e.Meta.Correct != w.correct || e.Meta.Truncated != w.truncated || e.Meta.Steps != w.steps || len(e.Turns) != w.turns || e.Group != w.group || !e.Meta.Known {
			t.Errorf("episode %d: %+v (group %d, %d turns), want %+v", i, e.Meta, e.Group, len(e.Turns), w)
		}
	}
	if ep := episodes[1]; !ep.Turns[0].Fallback || ep.Turns[0].Action.ActionType != sqlenv.Query || ep.Meta.ParseFailures != 1 || ep.Turns[0].Observation.Error == "" {
		t.Fatalf("unparseable output: %+v", ep.Turns[0])
	}
	if ep := episodes[3]; !strings.Contains(ep.Turns[2].Observation.Result, "budget exhausted") {
		t.Fatalf("budget exhaustion: %+v", ep.Turns[2].Observation)
	}
	// History window: system, one earlier pair, the current observation.
	prompt, _ := byteTokenizer{}.Decode(episodes[3].Turns[2].PromptIDs, false)
	if n := strings.Count(prompt, "<|im_start|>user"); n != 2 {
		t.Fatalf("turn 3 prompt has %d user turns, want 2 (HistoryPairs 1):\n%s", n, prompt)
	}
	if !strings.HasSuffix(prompt, "<|im_start|>assistant\n<think>\n\n</think>\n\n") || !strings.HasPrefix(prompt, "<|im_start|>system\n") {
		t.Fatalf("prompt framing:\n%s", prompt)
	}
	// Samples: prompt then completion; the mask marks exactly the completion.
	samples := Samples(episodes)
	if len(samples) != 8 {
		t.Fatalf("%d samples, want 8 (one per turn)", len(samples))
	}
	k := 0
	for ei, e := range episodes {
		for _, turn := range e.Turns {
			s := samples[k]
			k++
			p := len(turn.PromptIDs)
			if s.Episode != ei || !slices.Equal(s.IDs[:p], turn.PromptIDs) || !slices.Equal(s.IDs[p:], turn.CompletionIDs) {
				t.Fatalf("sample %d does not concatenate its turn", k)
			}
			for i := range s.IDs {
				wantMask := int32(0)
				if i >= p {
					wantMask = 1
				}
				if s.Mask[i] != wantMask || (wantMask == 1 && s.LogProbs[i] != -0.5) || (wantMask == 0 && s.LogProbs[i] != 0) {
					t.Fatalf("sample %d position %d: mask %d logp %g", k, i, s.Mask[i], s.LogProbs[i])
				}
			}
		}
	}
	// Rewards from the episodes' metadata.
	rewards, _ := RewardSet([]string{"correctness", "progress", "operational"}, nil)
	total, per := ScoreEpisodes(rewards, episodes)
	if !slices.Equal(per["correctness"], []float64{1, 0, 1, 0}) {
		t.Fatalf("correctness %v", per["correctness"])
	}
	for i := range total {
		if math.Abs(total[i]-(per["correctness"][i]+per["progress"][i]+per["operational"][i])) > 1e-12 {
			t.Fatalf("total %v is not the sum of %v", total, per)
		}
	}
}

func TestRolloutTruncatesAtCompletionBudget(t *testing.T) {
	qs, newEnv := bundledEnv(t, 10)
	gen := &scriptedGenerator{script: func(call, row int, prompt string) string { return "QUERY: SELECT 1" }}
	r, err := NewRoller(gen, byteTokenizer{}, newEnv, RolloutConfig{NumGenerations: 1, MaxNewTokens: 100, MaxCompletionLength: 40})
	if err != nil {
		t.Fatal(err)
	}
	episodes, _, err := r.Rollout(context.Background(), []string{qs[0].QuestionID})
	if err != nil {
		t.Fatal(err)
	}
	e := episodes[0]
	// "QUERY: SELECT 1" + EOS is 16 tokens: two full turns, then 8 tokens of a third.
	if !e.Meta.Truncated || e.Meta.CompletionTokens != 40 || len(e.Turns) != 3 || len(e.Turns[2].CompletionIDs) != 8 || !e.Meta.Known {
		t.Fatalf("truncation: %+v, turns %d", e.Meta, len(e.Turns))
	}
	if e.Meta.Steps != 2 {
		t.Fatalf("the cut turn must not be sent to the environment: %d steps", e.Meta.Steps)
	}
	// A truncated episode failed (correctness 0) but keeps the operational
	// signals of its two queries: 0.025 for the first SELECT 1, 0.005 for the repeat.
	correct := RewardCorrectness([]string{e.Completion()}, []EpisodeMetadata{e.Meta})
	if correct[0] != 0 || math.Abs(e.Meta.Operational-0.03) > 1e-12 {
		t.Fatalf("truncated episode: correctness %v, operational %v", correct, e.Meta.Operational)
	}
}

func TestRewardFunctions(t *testing.T) {
	meta := []EpisodeMetadata{
		{Known: true, Correct: true, Progress: 1, Operational: 0.075},
		{Known: true, Correct: false, Progress: 0.25, Operational: -0.01},
		{Known: false},
	}
	completions := []string{"a", "b", "c"}
	check := func(name string, got []float64, want []float64) {
		t.Helper()
		for i := range want {
			if !(got[i] == want[i] || math.IsNaN(got[i]) && math.IsNaN(want[i])) {
				t.Fatalf("%s = %v, want %v", name, got, want)
			}
		}
	}
	nan := math.NaN()
	check("correctness", RewardCorrectness(completions, meta), []float64{1, 0, nan})
	check("progress", RewardProgress(completions, meta), []float64{1, 0.25, nan})
	check("operational", RewardOperational(completions, meta), []float64{0.075, -0.01, nan})
	check("missing metadata", RewardCorrectness([]string{"x", "y"}, meta[:1]), []float64{1, nan})
	if got := RewardCorrectness(nil, nil); len(got) != 0 {
		t.Fatalf("empty batch: %v", got)
	}
	set, err := RewardSet([]string{"correctness", "operational"}, []float64{1, 0.5})
	if err != nil {
		t.Fatal(err)
	}
	eps := []*Episode{{Meta: meta[0]}, {Meta: meta[2]}}
	total, _ := ScoreEpisodes(set, eps)
	if math.Abs(total[0]-1.0375) > 1e-12 || total[1] != 0 {
		t.Fatalf("weighted totals %v (NaN must be left out)", total)
	}
	if _, err := RewardSet([]string{"speed"}, nil); err == nil || !strings.Contains(err.Error(), `unknown reward function "speed"`) {
		t.Fatalf("unknown reward: %v", err)
	}
	if _, err := RewardSet([]string{"correctness"}, []float64{1, 2}); err == nil {
		t.Fatal("weights of the wrong length accepted")
	}
}

// A rollout larger than BatchEpisodes is played in batches of whole
// question groups — no generation call sees more episodes — and gives the
// episodes, groups and order of one batch.
func TestRolloutPlaysInBoundedBatches(t *testing.T) {
	qs, newEnv := bundledEnv(t, 3)
	qs = qs[:5]
	gold := map[string]string{}
	var ids []string
	for _, q := range qs {
		gold[q.QuestionText] = string(q.GoldAnswer)
		ids = append(ids, q.QuestionID)
	}
	answer := func(call, row int, prompt string) string {
		for text, a := range gold {
			if strings.Contains(prompt, text) {
				return "ANSWER: " + a
			}
		}
		return "ANSWER: ?"
	}
	play := func(batch int) ([]*Episode, []*Episode, RolloutStats, []int) {
		gen := &scriptedGenerator{script: answer}
		r, err := NewRoller(gen, byteTokenizer{}, newEnv, RolloutConfig{NumGenerations: 2, MaxNewTokens: 400, MaxResultChars: 300, Temperature: 1, Seed: 5, BatchEpisodes: batch})
		if err != nil {
			t.Fatal(err)
		}
		greedy, sampled, stats, err := r.Evaluate(context.Background(), ids, 2, 0.7)
		if err != nil {
			t.Fatal(err)
		}
		return greedy, sampled, stats, gen.sizes
	}
	greedy, sampled, stats, sizes := play(7) // 7 episodes: 2 questions × (1 greedy + 2 sampled) per batch
	if !slices.Equal(sizes, []int{6, 6, 3}) {
		t.Fatalf("generation batch sizes %v, want [6 6 3]", sizes)
	}
	if stats.Episodes != 15 || stats.GenerateCalls != 3 || stats.Turns != 15 {
		t.Fatalf("stats %+v: want 15 episodes, 15 turns, 3 calls", stats)
	}
	oneGreedy, oneSampled, _, oneSizes := play(0)
	if !slices.Equal(oneSizes, []int{15}) {
		t.Fatalf("unbounded rollout: batch sizes %v, want [15]", oneSizes)
	}
	check := func(kind string, got, want []*Episode, perQuestion int) {
		if len(got) != len(want) || len(got) != len(ids)*perQuestion {
			t.Fatalf("%s: %d episodes, unbounded %d, want %d", kind, len(got), len(want), len(ids)*perQuestion)
		}
		for i, e := range got {
			q := i / perQuestion
			if e.QuestionID != ids[q] || e.Group != q || want[i].Group != q || !e.Meta.Correct || e.Meta.Correct != want[i].Meta.Correct {
				t.Fatalf("%s episode %d: question %s group %d correct %v; want question %s group %d (unbounded: group %d correct %v)",
					kind, i, e.QuestionID, e.Group, e.Meta.Correct, ids[q], q, want[i].Group, want[i].Meta.Correct)
			}
		}
	}
	check("greedy", greedy, oneGreedy, 1)
	check("sampled", sampled, oneSampled, 2)
}

// failingEnv wraps an environment: fail decides, from the question of the
// episode and the number of steps sent on this session (0 for the reset),
// whether a call fails (as a lost connection does).
type failingEnv struct {
	sqlenv.Env
	question string
	steps    int
	// ordinal numbers the sessions in the order they were made (0-based).
	ordinal int
	fail    func(question string, step, ordinal int) bool
}

func (f *failingEnv) Reset(ctx context.Context, opts sqlenv.ResetOptions) (sqlenv.Observation, error) {
	f.question, f.steps = opts.QuestionID, 0
	if f.fail(f.question, 0, f.ordinal) { // step 0: the reset
		return sqlenv.Observation{}, fmt.Errorf("connection refused: %w", sqlenv.ErrClosed)
	}
	return f.Env.Reset(ctx, opts)
}

func (f *failingEnv) Step(ctx context.Context, a sqlenv.Action) (sqlenv.Observation, error) {
	f.steps++
	if f.fail(f.question, f.steps, f.ordinal) {
		return sqlenv.Observation{}, fmt.Errorf("connection lost: %w", sqlenv.ErrClosed)
	}
	return f.Env.Step(ctx, a)
}

// TestRolloutSurvivesEnvironmentFailures: an episode whose session fails
// mid-way goes on in a new session after replaying its actions, with the
// observations it would have had; an episode whose environment keeps
// failing takes its question group out of the rollout, and the others
// play on.
func TestRolloutSurvivesEnvironmentFailures(t *testing.T) {
	qs, newEnv := bundledEnv(t, 4)
	ids := []string{qs[0].QuestionID, qs[1].QuestionID, qs[2].QuestionID}
	script := func(call, row int, prompt string) string {
		return []string{"DESCRIBE: " + qs[0].TablesInvolved[0], "QUERY: SELECT 1", "QUERY: SELECT 2", "ANSWER: 7"}[min(call, 3)]
	}
	play := func(fail func(question string, step, ordinal int) bool) ([]*Episode, RolloutStats, []string) {
		t.Helper()
		made := 0
		wrapped := func() (sqlenv.Env, error) {
			env, err := newEnv()
			made++
			return &failingEnv{Env: env, fail: fail, ordinal: made - 1}, err
		}
		r, err := NewRoller(&scriptedGenerator{script: script}, byteTokenizer{}, wrapped, RolloutConfig{NumGenerations: 2, MaxNewTokens: 400, HistoryPairs: 1, MaxResultChars: 300, Temperature: 1, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		var reports []string
		r.OnEnvFailure = func(q string, err error, recovered bool) {
			reports = append(reports, fmt.Sprintf("%s %v %v", q, recovered, err))
		}
		episodes, stats, err := r.Rollout(context.Background(), ids)
		if err != nil {
			t.Fatal(err)
		}
		return episodes, stats, reports
	}
	observations := func(eps []*Episode) []string {
		var out []string
		for _, e := range eps {
			for _, turn := range e.Turns {
				o := turn.Observation
				out = append(out, fmt.Sprintf("%s %d %q %q %v %g", e.QuestionID, o.StepCount, o.Result, o.Error, o.Done, o.Reward))
			}
		}
		return out
	}
	clean, cleanStats, _ := play(func(string, int, int) bool { return false })
	if len(clean) != 6 || cleanStats.EnvFailures != 0 {
		t.Fatalf("undisturbed: %d episodes, %+v", len(clean), cleanStats)
	}

	// The third step of both first sessions of question 1 fails: each new
	// session replays two steps, then the third succeeds.
	episodes, stats, reports := play(func(q string, step, ordinal int) bool {
		return q == ids[1] && step == 3 && ordinal < 2*len(ids)
	})
	if !slices.Equal(observations(episodes), observations(clean)) {
		t.Errorf("after a replay the observations differ:\n%q\nwant\n%q", observations(episodes), observations(clean))
	}
	if stats.EnvFailures != 2 || stats.ReplayedEpisodes != 2 || stats.DroppedGroups != 0 || len(reports) != 2 || !strings.Contains(reports[0], "true") {
		t.Errorf("one failure each, replayed: %+v %q", stats, reports)
	}

	// Every session of question 2 fails at its second step: the group is
	// dropped after envAttempts tries, the other groups are whole.
	episodes, stats, reports = play(func(q string, step, _ int) bool { return q == ids[2] && step == 2 })
	if len(episodes) != 4 || episodes[0].QuestionID != ids[0] || episodes[3].QuestionID != ids[1] {
		t.Fatalf("after a group failed: %d episodes", len(episodes))
	}
	if !slices.Equal(observations(episodes), observations(clean[:4])) {
		t.Errorf("the other groups changed")
	}
	if stats.DroppedGroups != 1 || stats.DroppedEpisodes != 2 || stats.Episodes != 4 || stats.EnvFailures != envAttempts+1 || stats.ReplayedEpisodes != 0 {
		t.Errorf("dropped group: %+v", stats)
	}
	if len(reports) != 1 || !strings.Contains(reports[0], ids[2]+" false") {
		t.Errorf("reports %q", reports)
	}

	// A question whose sessions cannot even start: its whole group, opened
	// or not yet, is dropped and counted.
	episodes, stats, _ = play(func(q string, step, _ int) bool { return q == ids[0] && step == 0 })
	if len(episodes) != 4 || stats.DroppedGroups != 1 || stats.DroppedEpisodes != 2 || episodes[0].QuestionID != ids[1] {
		t.Errorf("a group whose sessions cannot start: %d episodes, %+v", len(episodes), stats)
	}
}

// TestGreedyRolloutsLeaveSamplingSeedsAlone: a greedy evaluation between two
// sampled rollouts (GRPO's periodic evaluation between steps) does not
// change the seeds the second rollout samples with; a sampled one does.
func TestGreedyRolloutsLeaveSamplingSeedsAlone(t *testing.T) {
	qs, newEnv := bundledEnv(t, 3)
	ids := []string{qs[0].QuestionID, qs[1].QuestionID}
	ctx := context.Background()
	seedsAfter := func(between func(r *Roller) error) []int64 {
		t.Helper()
		gen := &scriptedGenerator{script: func(call, row int, prompt string) string { return "ANSWER: 1" }}
		r, err := NewRoller(gen, byteTokenizer{}, newEnv, RolloutConfig{NumGenerations: 2, MaxNewTokens: 50, Temperature: 1, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := r.Rollout(ctx, ids); err != nil {
			t.Fatal(err)
		}
		if between != nil {
			if err := between(r); err != nil {
				t.Fatal(err)
			}
		}
		n := len(gen.seeds)
		if _, _, err := r.Rollout(ctx, ids); err != nil {
			t.Fatal(err)
		}
		return gen.seeds[n:]
	}
	alone := seedsAfter(nil)
	greedy := seedsAfter(func(r *Roller) error { _, _, err := r.Greedy(ctx, ids); return err })
	sampled := seedsAfter(func(r *Roller) error { _, _, _, err := r.Evaluate(ctx, ids, 2, 0.7); return err })
	if !slices.Equal(alone, greedy) {
		t.Errorf("a greedy evaluation in between changed the next rollout's seeds: %v, without it %v", greedy, alone)
	}
	if slices.Equal(alone, sampled) {
		t.Errorf("a sampled evaluation in between left the next rollout's seeds as they were (%v): two sampled batches would share a random stream", alone)
	}
}
