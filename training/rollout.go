// Package training trains Qwen3 policies on the SQL environment: GRPO (and an
// SFT warm-up) with batched multi-turn rollouts, reward functions, evaluation,
// checkpoints and metrics.
//
// Data flows one way: questions (sqlenv/dataset) → environments (sqlenv) →
// rollouts (this package, generating with training/qwen3) → rewards →
// advantages → loss → optimizer step (training/optim) → model.
package training

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/training/qwen3"
	"github.com/gosqlenv/gosqlenv/training/tokenizer"
)

// Generator is batched generation by the policy model; *qwen3.Model
// implements it (tests use scripted fakes).
type Generator interface {
	Generate(ctx context.Context, prompts [][]int32, opts qwen3.GenerateOptions) (*qwen3.Generation, error)
}

// ChatTokenizer is what rollouts need of a tokenizer; *tokenizer.Tokenizer
// implements it.
type ChatTokenizer interface {
	ApplyChatTemplate(msgs []tokenizer.Message, opts tokenizer.ChatOptions) (string, error)
	Encode(text string) []int32
	Decode(ids []int32, skipSpecial bool) (string, error)
	EOS() int32
	PAD() int32
}

// RolloutConfig configures rollouts.
type RolloutConfig struct {
	// NumGenerations is the number of episodes played per question (the GRPO group).
	NumGenerations int
	// MaxNewTokens bounds one turn's completion.
	MaxNewTokens int
	// MaxCompletionLength bounds the model tokens of a whole episode; an
	// episode that reaches it ends, truncated, with no terminal reward.
	MaxCompletionLength int
	// HistoryPairs is the number of earlier (action, observation) pairs kept
	// in the prompt after the system prompt and the window's first observation.
	HistoryPairs int
	// MaxResultChars caps the result text of an observation.
	MaxResultChars int
	// Sampling.
	Temperature float64
	TopP        float64
	TopK        int
	// EnableThinking lets Qwen3 think before answering (default off: the
	// empty think block is added to each generation prompt).
	EnableThinking bool
	// LengthBucket is passed to generation (shape bucketing).
	LengthBucket int
	// Seed makes sampling reproducible.
	Seed int64
	// SystemPrompt replaces GetSystemPrompt() when not empty.
	SystemPrompt string
	// SharePrompts prefills each distinct prompt of a turn once
	// (qwen3.GenerateOptions.SharePrompts): episodes of a group start alike.
	SharePrompts bool
	// BatchEpisodes bounds the episodes of one generation batch: a rollout
	// with more is played in consecutive batches of whole question groups
	// (memory stays bounded; 0: all episodes in one batch).
	BatchEpisodes int
	// MaxBatchBytes bounds the memory of one generation call
	// (qwen3.GenerateOptions.MaxBatchBytes; 0: the backend's default).
	MaxBatchBytes int64
	// StaticShapes generates with fixed shapes (qwen3.StaticShapes): the
	// rows of a full batch of the rollout (BucketRows), and prompts padded
	// to the roller's static prompt length (StaticPromptLength).
	StaticShapes bool
}

// Turn is one model turn of an episode, exactly as generated: the training
// sample of this turn is PromptIDs followed by CompletionIDs.
type Turn struct {
	// PromptIDs are the tokens fed to generation (system prompt, window of
	// history, current observation, assistant header).
	PromptIDs []int32
	// CompletionIDs are the sampled tokens, the stop token included.
	CompletionIDs []int32
	// LogProbs are the sampling log-probs of CompletionIDs.
	LogProbs []float32
	// Text is the decoded completion.
	Text string
	// Action is what was parsed from Text; Fallback says nothing parsed and
	// the text was sent as a QUERY.
	Action   sqlenv.Action
	Fallback bool
	// Observation and Reward are the environment's answer to the action.
	Observation sqlenv.Observation
	Reward      float64
}

// Episode is one played episode.
type Episode struct {
	QuestionID string
	// Group indexes the episode's question within the rollout (GRPO groups
	// are the episodes of one question).
	Group   int
	Initial sqlenv.Observation
	Turns   []Turn
	Meta    EpisodeMetadata
}

// EpisodeMetadata is what reward functions see of an episode.
type EpisodeMetadata struct {
	// Known is false when the environment reported no statistics (remote
	// environments may not); reward functions then return NaN.
	Known       bool
	Correct     bool
	Answered    bool
	Progress    float64 // best binned progress toward the gold result, [0, 1]
	Operational float64 // sum of the environment's layer-1 signals
	EnvReward   float64 // sum of the environment's step rewards
	Steps       int
	// ParseFailures counts turns whose text had no ACTION line.
	ParseFailures int
	// Truncated: MaxCompletionLength ended the episode.
	Truncated        bool
	CompletionTokens int
}

// Completion is the episode's model text, turns joined by new lines (the
// "completion" reward functions receive).
func (e *Episode) Completion() string {
	texts := make([]string, len(e.Turns))
	for i, t := range e.Turns {
		texts[i] = t.Text
	}
	return strings.Join(texts, "\n")
}

// Sample is one training sequence with its masks.
type Sample struct {
	IDs []int32
	// Mask is 1 on tokens the model generated (they get gradient), 0 on
	// prompt and observation tokens.
	Mask []int32
	// LogProbs holds the sampling log-prob at each masked position, 0 elsewhere.
	LogProbs []float32
	// Episode indexes the sample's episode in the rollout.
	Episode int
}

// Samples turns episodes into training samples, one per turn.
func Samples(episodes []*Episode) []Sample {
	var out []Sample
	for ei, e := range episodes {
		for _, t := range e.Turns {
			n := len(t.PromptIDs) + len(t.CompletionIDs)
			s := Sample{IDs: make([]int32, 0, n), Mask: make([]int32, n), LogProbs: make([]float32, n), Episode: ei}
			s.IDs = append(append(s.IDs, t.PromptIDs...), t.CompletionIDs...)
			for i := range t.CompletionIDs {
				s.Mask[len(t.PromptIDs)+i] = 1
				s.LogProbs[len(t.PromptIDs)+i] = t.LogProbs[i]
			}
			out = append(out, s)
		}
	}
	return out
}

// RolloutStats measures a rollout.
type RolloutStats struct {
	Episodes, Turns    int
	GeneratedTokens    int
	ParseFailures      int
	GenerateCalls      int
	GenerateSeconds    float64
	EnvironmentSeconds float64
	// EnvFailures counts environment calls that failed (a lost session, a
	// server down); ReplayedEpisodes the episodes that went on after one,
	// on a new session that replayed their actions; DroppedGroups and
	// DroppedEpisodes the question groups left out of the rollout because
	// an episode of theirs could not go on.
	EnvFailures, ReplayedEpisodes  int
	DroppedGroups, DroppedEpisodes int
}

// Roller plays batched multi-turn rollouts: all episodes of a rollout advance
// together, with one batched generation call per turn over every live
// episode; episodes that end stop consuming compute.
type Roller struct {
	gen    Generator
	tok    ChatTokenizer
	newEnv func() (sqlenv.Env, error)
	cfg    RolloutConfig
	system string
	// calls counts the batches played that sample, for seeds. Greedy
	// batches use no randomness and leave it alone, so that evaluating
	// (greedily) between training steps does not change what the training
	// rollouts after it sample.
	calls int64
	// OnProgress, when set, is called after every turn of a rollout with
	// the number of its episodes that have finished and their total.
	OnProgress func(done, total int)
	// promptLength is the static prompt length (StaticShapes): a power of
	// two times LengthBucket that grows to the longest prompt met.
	promptLength int
	// OnEnvFailure, when set, is told of each environment failure: the
	// episode's question, the error, and whether the episode went on (on a
	// new session, its actions replayed) or its group was dropped.
	OnEnvFailure func(questionID string, err error, recovered bool)
}

// Environment failures. An environment is deterministic given the question
// and the actions, so an episode whose session fails (a server lost, a
// connection dropped) goes on in a new session (newEnv: with a client.Pool,
// on another server) after its actions are replayed there and give the
// same observations; after envAttempts failed tries, the episode's question
// group is dropped from the rollout (the step goes on with the others).
const envAttempts = 3

// envBackoff is the wait before the n-th retry (n ≥ 1).
func envBackoff(n int) time.Duration { return time.Duration(n*n) * 200 * time.Millisecond }

// NewRoller returns a roller; newEnv makes one environment per episode
// (in-process environments sharing one sqlenv.Databases, or remote clients).
func NewRoller(gen Generator, tok ChatTokenizer, newEnv func() (sqlenv.Env, error), cfg RolloutConfig) (*Roller, error) {
	switch {
	case cfg.NumGenerations < 1:
		return nil, fmt.Errorf("rollout: NumGenerations %d must be at least 1", cfg.NumGenerations)
	case cfg.MaxNewTokens < 1:
		return nil, fmt.Errorf("rollout: MaxNewTokens %d must be at least 1", cfg.MaxNewTokens)
	}
	if cfg.MaxCompletionLength <= 0 {
		cfg.MaxCompletionLength = 1 << 30
	}
	system := cfg.SystemPrompt
	if system == "" {
		system = GetSystemPrompt()
	}
	return &Roller{gen: gen, tok: tok, newEnv: newEnv, cfg: cfg, system: system}, nil
}

// liveEpisode is an episode in progress.
type liveEpisode struct {
	ep      *Episode
	env     sqlenv.Env // nil until opened
	obs     sqlenv.Observation
	history []tokenizer.Message // user/assistant messages after the system prompt
	done    bool
	// dropped: its group left the rollout after an environment failure.
	dropped bool
	// temperature the episode samples at (0: greedy).
	temperature float64
}

// Rollout plays NumGenerations episodes of each question.
func (r *Roller) Rollout(ctx context.Context, questionIDs []string) ([]*Episode, RolloutStats, error) {
	return r.rollout(ctx, questionIDs, r.cfg.NumGenerations, r.cfg.Temperature)
}

// RolloutWith plays generations episodes of each question, sampling at
// temperature (0: greedy) instead of the configured values: RAFT anneals the
// temperature across cycles with it.
func (r *Roller) RolloutWith(ctx context.Context, questionIDs []string, generations int, temperature float64) ([]*Episode, RolloutStats, error) {
	if generations < 1 {
		return nil, RolloutStats{}, fmt.Errorf("rollout: %d generations per question (need ≥ 1)", generations)
	}
	return r.rollout(ctx, questionIDs, generations, temperature)
}

// Greedy plays one greedy episode per question (evaluation).
func (r *Roller) Greedy(ctx context.Context, questionIDs []string) ([]*Episode, RolloutStats, error) {
	return r.rollout(ctx, questionIDs, 1, 0)
}

// Evaluate plays, for each question, one greedy episode and samples
// episodes at temperature, all in one rollout: each turn is one generation
// call for every episode of the split, greedy and sampled alike.
func (r *Roller) Evaluate(ctx context.Context, questionIDs []string, samples int, temperature float64) (greedy, sampled []*Episode, stats RolloutStats, err error) {
	if samples < 0 {
		return nil, nil, stats, fmt.Errorf("rollout: %d samples per question (need ≥ 0)", samples)
	}
	temps := make([]float64, 1+samples)
	for i := 1; i <= samples; i++ {
		temps[i] = temperature
	}
	episodes, stats, err := r.play(ctx, questionIDs, temps)
	if err != nil {
		return nil, nil, stats, err
	}
	for i, e := range episodes {
		if i%len(temps) == 0 {
			greedy = append(greedy, e)
		} else {
			sampled = append(sampled, e)
		}
	}
	return greedy, sampled, stats, nil
}

func (r *Roller) rollout(ctx context.Context, questionIDs []string, gens int, temperature float64) ([]*Episode, RolloutStats, error) {
	temps := make([]float64, gens)
	for i := range temps {
		temps[i] = temperature
	}
	return r.play(ctx, questionIDs, temps)
}

// play plays len(temps) episodes of each question, the i-th of each at
// temps[i] (0: greedy), question by question; a question's episodes form
// its group. Questions are played in batches of at most BatchEpisodes
// episodes (whole groups), each batch its own generation seeds.
func (r *Roller) play(ctx context.Context, questionIDs []string, temps []float64) ([]*Episode, RolloutStats, error) {
	perBatch := len(questionIDs)
	if r.cfg.BatchEpisodes > 0 {
		perBatch = max(1, r.cfg.BatchEpisodes/len(temps))
	}
	// With static shapes every batch of this rollout has the rows of a
	// full one.
	rows := qwen3.BucketRows(min(perBatch, len(questionIDs)) * len(temps))
	var episodes []*Episode
	var stats RolloutStats
	total := len(questionIDs) * len(temps)
	for from := 0; from < len(questionIDs); from += perBatch {
		report := func(done int) {
			if r.OnProgress != nil {
				r.OnProgress(from*len(temps)+done, total)
			}
		}
		batch, s, err := r.playBatch(ctx, questionIDs[from:min(from+perBatch, len(questionIDs))], temps, rows, report)
		stats.add(s)
		if err != nil {
			return nil, stats, err
		}
		for _, e := range batch {
			e.Group += from
		}
		episodes = append(episodes, batch...)
	}
	return episodes, stats, nil
}

// add accumulates o into s.
func (s *RolloutStats) add(o RolloutStats) {
	s.Episodes += o.Episodes
	s.Turns += o.Turns
	s.GeneratedTokens += o.GeneratedTokens
	s.ParseFailures += o.ParseFailures
	s.GenerateCalls += o.GenerateCalls
	s.GenerateSeconds += o.GenerateSeconds
	s.EnvironmentSeconds += o.EnvironmentSeconds
	s.EnvFailures += o.EnvFailures
	s.ReplayedEpisodes += o.ReplayedEpisodes
	s.DroppedGroups += o.DroppedGroups
	s.DroppedEpisodes += o.DroppedEpisodes
}

// playBatch plays one batch of play's questions, all episodes advancing
// together: one generation call per turn (of rows rows with static
// shapes); report gets the number of the batch's episodes finished after
// each turn.
func (r *Roller) playBatch(ctx context.Context, questionIDs []string, temps []float64, rows int, report func(done int)) ([]*Episode, RolloutStats, error) {
	var stats RolloutStats
	if slices.ContainsFunc(temps, func(t float64) bool { return t > 0 }) {
		r.calls++
	}
	live, err := r.startEpisodes(ctx, questionIDs, temps, &stats)
	defer func() {
		for _, l := range live {
			if l.env != nil {
				l.env.Close()
			}
		}
	}()
	if err != nil {
		return nil, stats, err
	}
	for turn := 0; ; turn++ {
		var active []*liveEpisode
		for _, l := range live {
			if !l.done {
				active = append(active, l)
			}
		}
		if turn > 0 {
			report(len(live) - len(active))
		}
		if len(active) == 0 {
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, stats, err
		}
		if err := r.playTurn(ctx, live, active, temps, rows, turn, &stats); err != nil {
			return nil, stats, err
		}
	}
	episodes := make([]*Episode, 0, len(live))
	for _, l := range live {
		if !l.dropped {
			episodes = append(episodes, l.ep)
		}
	}
	stats.Episodes = len(episodes)
	return episodes, stats, nil
}

// startEpisodes resets an environment for each of len(temps) episodes of
// every question (a group), with its first observation as the history; a
// group whose reset fails is dropped whole.
func (r *Roller) startEpisodes(ctx context.Context, questionIDs []string, temps []float64, stats *RolloutStats) ([]*liveEpisode, error) {
	gens := len(temps)
	live := make([]*liveEpisode, 0, len(questionIDs)*gens)
	for qi, id := range questionIDs {
		for g := 0; g < gens; g++ {
			l := &liveEpisode{ep: &Episode{QuestionID: id, Group: qi}, temperature: temps[g]}
			live = append(live, l)
			if l.dropped = live[len(live)-1-g].dropped; l.dropped { // an earlier episode of the group failed
				l.done = true
				stats.DroppedEpisodes++
				continue
			}
			if err := r.withRecovery(ctx, l, stats, nil); err != nil {
				if ctx.Err() != nil {
					return live, ctx.Err()
				}
				r.drop(live, l, err, stats)
				continue
			}
			l.ep.Initial = l.obs
			l.history = []tokenizer.Message{{Role: "user", Content: FormatObservation(l.obs, r.cfg.MaxResultChars)}}
		}
	}
	return live, nil
}

// playTurn generates the next action of every active episode in one
// generation call and steps their environments; an episode whose
// environment fails drops its group.
func (r *Roller) playTurn(ctx context.Context, live, active []*liveEpisode, temps []float64, rows, turn int, stats *RolloutStats) error {
	mixed := slices.ContainsFunc(temps, func(t float64) bool { return t != temps[0] })
	prompts := make([][]int32, len(active))
	var perEpisode []float64 // temperatures, when the episodes' differ
	if mixed {
		perEpisode = make([]float64, len(active))
	}
	for i, l := range active {
		if mixed {
			perEpisode[i] = l.temperature
		}
		p, err := r.prompt(l.history)
		if err != nil {
			return err
		}
		prompts[i] = p
	}
	opts := qwen3.GenerateOptions{
		MaxNewTokens: r.cfg.MaxNewTokens, Temperature: temps[0], Temperatures: perEpisode, TopP: r.cfg.TopP, TopK: r.cfg.TopK,
		Seed: r.cfg.Seed*1_000_003 + r.calls*10_007 + int64(turn), StopTokens: []int32{r.tok.EOS(), r.tok.PAD()},
		PadID: r.tok.PAD(), LengthBucket: r.cfg.LengthBucket, SharePrompts: r.cfg.SharePrompts,
		MaxBatchBytes: r.cfg.MaxBatchBytes,
	}
	if r.cfg.StaticShapes {
		opts.Static = qwen3.StaticShapes{Rows: rows, PromptLength: r.staticPromptLength(prompts)}
	}
	gen, genSeconds, err := timedGenerate(ctx, r.gen, prompts, opts)
	if err != nil {
		return fmt.Errorf("rollout: generate (turn %d, %d episodes): %w", turn, len(active), err)
	}
	stats.GenerateCalls++
	stats.GenerateSeconds += genSeconds
	envStart := now()
	defer func() { stats.EnvironmentSeconds += since(envStart) }()
	for i, l := range active {
		if l.dropped { // its group was dropped earlier in this turn
			continue
		}
		if err := r.advance(ctx, l, prompts[i], gen.Tokens[i], gen.LogProbs[i], stats); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var ef *envFailure
			if !errors.As(err, &ef) {
				return err
			}
			r.drop(live, l, ef.err, stats)
		}
	}
	return nil
}

// envFailure is an environment error an episode could not recover from.
type envFailure struct{ err error }

func (e *envFailure) Error() string { return e.err.Error() }

// open gives l a new environment with its question reset; an episode
// already under way also gets its actions replayed, each of which must
// give the observation it gave before.
func (r *Roller) open(ctx context.Context, l *liveEpisode) error {
	if l.env != nil {
		l.env.Close()
		l.env = nil
	}
	env, err := r.newEnv()
	if err != nil {
		return fmt.Errorf("new environment: %w", err)
	}
	obs, err := env.Reset(ctx, sqlenv.ResetOptions{QuestionID: l.ep.QuestionID})
	if err != nil {
		env.Close()
		return fmt.Errorf("reset question %s: %w", l.ep.QuestionID, err)
	}
	if l.ep.Initial.Question != "" && (obs.Question != l.ep.Initial.Question || obs.SchemaInfo != l.ep.Initial.SchemaInfo) {
		env.Close()
		return fmt.Errorf("replay of question %s: the new session's reset differs from the first", l.ep.QuestionID)
	}
	for i, t := range l.ep.Turns {
		got, err := env.Step(ctx, t.Action)
		obs = got
		if err != nil {
			env.Close()
			return fmt.Errorf("replay of question %s, turn %d: %w", l.ep.QuestionID, i+1, err)
		}
		want := t.Observation
		if got.Result != want.Result || got.Error != want.Error || got.StepCount != want.StepCount || got.Done != want.Done || got.Reward != want.Reward {
			env.Close()
			return fmt.Errorf("replay of question %s, turn %d: the new session observed something else (step %d, reward %g; first %d, %g)",
				l.ep.QuestionID, i+1, got.StepCount, got.Reward, want.StepCount, want.Reward)
		}
	}
	l.env, l.obs = env, obs
	return nil
}

// withRecovery runs op on l's environment (nil op: opens it); when that
// fails (not by ctx), it re-opens l's session, replaying the episode
// (open), and runs op again, up to envAttempts times with a growing wait.
// It counts failures and recoveries in stats and reports them to
// OnEnvFailure.
func (r *Roller) withRecovery(ctx context.Context, l *liveEpisode, stats *RolloutStats, op func() error) error {
	run := func() error {
		if op == nil {
			return r.open(ctx, l)
		}
		return op()
	}
	err := run()
	first := err
	for attempt := 1; err != nil && ctx.Err() == nil; attempt++ {
		stats.EnvFailures++
		if attempt > envAttempts {
			break
		}
		if attempt > 1 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(envBackoff(attempt - 1)):
			}
		}
		if err = r.open(ctx, l); err == nil && op != nil {
			err = op()
		}
		if err == nil {
			stats.ReplayedEpisodes++
			if r.OnEnvFailure != nil {
				r.OnEnvFailure(l.ep.QuestionID, first, true)
			}
		}
	}
	return err
}

// drop takes l's question group out of the rollout after err.
func (r *Roller) drop(live []*liveEpisode, l *liveEpisode, err error, stats *RolloutStats) {
	stats.DroppedGroups++
	for _, o := range live {
		if o.ep.Group == l.ep.Group && !o.dropped {
			o.dropped, o.done = true, true
			stats.DroppedEpisodes++
		}
	}
	l.dropped, l.done = true, true
	if r.OnEnvFailure != nil {
		r.OnEnvFailure(l.ep.QuestionID, err, false)
	}
}

// prompt renders and tokenizes the current prompt of an episode: the system
// prompt, the window's first observation and at most HistoryPairs (action,
// observation) pairs, and the assistant header.
func (r *Roller) prompt(history []tokenizer.Message) ([]int32, error) {
	keep := 1 + 2*r.cfg.HistoryPairs
	if len(history) > keep {
		history = history[len(history)-keep:]
	}
	msgs := append([]tokenizer.Message{{Role: "system", Content: r.system}}, history...)
	text, err := r.tok.ApplyChatTemplate(msgs, tokenizer.ChatOptions{AddGenerationPrompt: true, DisableThinking: !r.cfg.EnableThinking})
	if err != nil {
		return nil, fmt.Errorf("rollout: chat template: %w", err)
	}
	return r.tok.Encode(text), nil
}

// advance applies one generated completion to its episode.
func (r *Roller) advance(ctx context.Context, l *liveEpisode, prompt, completion []int32, logps []float32, stats *RolloutStats) error {
	budget := r.cfg.MaxCompletionLength - l.ep.Meta.CompletionTokens
	truncated := len(completion) > budget
	if truncated {
		completion, logps = completion[:budget], logps[:budget]
	}
	text, err := r.tok.Decode(completion, true)
	if err != nil {
		return fmt.Errorf("rollout: decode completion: %w", err)
	}
	parsed := ParseModelOutput(text)
	turn := Turn{PromptIDs: prompt, CompletionIDs: slices.Clone(completion), LogProbs: slices.Clone(logps), Text: text,
		Action: parsed.Action, Fallback: parsed.Fallback}
	stats.Turns++
	stats.GeneratedTokens += len(completion)
	l.ep.Meta.CompletionTokens += len(completion)
	if parsed.Fallback {
		l.ep.Meta.ParseFailures++
		stats.ParseFailures++
	}
	if truncated {
		// The completion budget ran out mid-turn: the action is not sent.
		l.ep.Turns = append(l.ep.Turns, turn)
		l.truncate()
		return nil
	}
	var obs sqlenv.Observation
	err = r.withRecovery(ctx, l, stats, func() (err error) {
		obs, err = l.env.Step(ctx, parsed.Action)
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &envFailure{fmt.Errorf("rollout: step question %s: %w", l.ep.QuestionID, err)}
	}
	turn.Observation, turn.Reward = obs, obs.Reward
	l.ep.Turns = append(l.ep.Turns, turn)
	l.obs = obs
	l.ep.Meta.EnvReward += obs.Reward
	l.ep.Meta.Steps = obs.StepCount
	l.history = append(l.history,
		tokenizer.Message{Role: "assistant", Content: text},
		tokenizer.Message{Role: "user", Content: FormatObservation(obs, r.cfg.MaxResultChars)})
	if obs.Done {
		l.done = true
		fillStats(&l.ep.Meta, obs)
	} else if l.ep.Meta.CompletionTokens >= r.cfg.MaxCompletionLength {
		l.truncate()
	}
	return nil
}

// truncate ends an episode that ran out of completion tokens: it failed to
// answer (correctness 0, not unknown), and keeps the progress and
// operational signals it earned, from the environment when it can tell.
func (l *liveEpisode) truncate() {
	m := &l.ep.Meta
	m.Truncated, m.Known, m.Correct = true, true, false
	l.done = true
	if s, ok := l.env.(interface{ Stats() sqlenv.EpisodeStats }); ok {
		st := s.Stats()
		m.Progress, m.Operational = st.Progress, st.Operational
	}
}

// fillStats copies the environment's episode statistics from the final
// observation (a sqlenv.EpisodeStats in process, a JSON object remotely).
func fillStats(m *EpisodeMetadata, obs sqlenv.Observation) {
	switch s := obs.Metadata[sqlenv.MetaStats].(type) {
	case sqlenv.EpisodeStats:
		m.Known, m.Correct, m.Answered, m.Progress, m.Operational = true, s.Correct, s.Answered, s.Progress, s.Operational
	case map[string]any:
		num := func(k string) float64 { f, _ := s[k].(float64); return f }
		flag := func(k string) bool { b, _ := s[k].(bool); return b }
		m.Known, m.Correct, m.Answered, m.Progress, m.Operational = true, flag("correct"), flag("answered"), num("progress"), num("operational")
	default:
		if c, ok := obs.Metadata[sqlenv.MetaCorrect].(bool); ok {
			m.Known, m.Correct = true, c
		}
	}
}

// errNoEpisodes is returned by trainers for empty rollouts.
var errNoEpisodes = errors.New("rollout produced no episodes")

// timedGenerate calls g.Generate and returns the seconds it took.
func timedGenerate(ctx context.Context, g Generator, prompts [][]int32, opts qwen3.GenerateOptions) (*qwen3.Generation, float64, error) {
	start := now()
	gen, err := g.Generate(ctx, prompts, opts)
	return gen, since(start), err
}

// StaticPromptLength is the prompt length of static shapes
// (RolloutConfig.StaticShapes): LengthBucket times a power of two, grown
// to fit the longest prompt met so far (or given to SetStaticPromptLength).
func (r *Roller) StaticPromptLength() int { return r.promptLength }

// SetStaticPromptLength grows the static prompt length to fit prompts of n
// tokens (before the run meets them: a run that knows its longest prompts
// up front compiles its generation programs once).
func (r *Roller) SetStaticPromptLength(n int) {
	if n > r.promptLength {
		r.promptLength = staticLength(n, r.cfg.LengthBucket)
	}
}

// staticPromptLength grows the static prompt length to the longest of
// prompts and returns it.
func (r *Roller) staticPromptLength(prompts [][]int32) int {
	for _, p := range prompts {
		r.SetStaticPromptLength(len(p))
	}
	return r.promptLength
}

// staticLength is the smallest bucket·2ᵏ that is at least n: static
// shapes' lengths, a few per run.
func staticLength(n, bucket int) int {
	l := max(bucket, 1)
	for l < n {
		l *= 2
	}
	return l
}
