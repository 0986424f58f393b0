package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/sqlenv/render"
	"github.com/gosqlenv/gosqlenv/training"
)

// splitTitles are the readable names of the evaluation splits.
var splitTitles = map[string]string{
	training.SplitTrain:       "training questions",
	training.SplitHeldout:     "held-out questions (training databases)",
	training.SplitRenamed:     "held-out questions, tables and columns renamed",
	training.SplitParaphrased: "held-out questions, reworded",
	training.SplitUnseen:      "unseen databases",
}

// readingFailures name what a reading split changes, for Findings' summary
// of a model no better than random on it.
var readingFailures = map[string]string{
	training.SplitRenamed:     "their tables and columns renamed",
	training.SplitParaphrased: "the questions reworded",
}

// SplitsTable describes the question sets of a run: the evaluation
// splits — how many questions each has, from which databases, how many are
// evaluated (max_eval_questions) — and how many of the training questions
// the SFT warm-up and GRPO use.
func SplitsTable(p *training.Pipeline) string {
	var rows [][]string
	for i, qs := range [][]dataset.QuestionRecord{p.Train, p.Heldout, p.Eval} {
		var dbs []string
		for _, q := range qs {
			if !slices.Contains(dbs, q.DatabaseName) {
				dbs = append(dbs, q.DatabaseName)
			}
		}
		evaluated := len(qs)
		if n := p.Config.MaxEvalQuestions; n > 0 {
			evaluated = min(evaluated, n)
		}
		what := splitTitles[training.Splits[i]]
		if i == 0 {
			what += fmt.Sprintf(" (SFT on %d, GRPO on %d)", len(p.SFTQuestions()), len(p.GRPOQuestions()))
		}
		rows = append(rows, []string{training.Splits[i], what, fmt.Sprint(len(qs)), fmt.Sprint(evaluated), strings.Join(dbs, ", ")})
	}
	return render.Table([]string{"split", "what", "questions", "evaluated", "databases"}, rows)
}

// EvalSummaryTable renders an evaluation summary: one row per split and
// policy, greedy success and sampled success ± standard error.
func EvalSummaryTable(s training.EvalSummary) string {
	var rows [][]string
	for _, split := range training.Splits {
		for _, policy := range training.Policies {
			r, ok := s[split][policy]
			if !ok {
				continue
			}
			rows = append(rows, []string{split, policy, fmt.Sprintf("%.1f %%", 100*r.GreedySuccess),
				fmt.Sprintf("%.1f ± %.1f %%", 100*r.SampledSuccess, 100*r.SampledSuccessSE), fmt.Sprint(r.Questions), fmt.Sprint(r.SampledEpisodes), groundedCell(r)})
		}
	}
	return render.Table([]string{"split", "policy", "greedy success", "sampled success ± s.e.", "questions", "sampled episodes", "names read"}, rows)
}

// groundedCell shows a result's GroundedNames: "93 % of 412", or "—"
// when its SQL wrote no names.
func groundedCell(r training.SplitResult) string {
	if r.NamesWritten == 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f %% of %d", 100*r.GroundedNames, r.NamesWritten)
}

// Findings states in plain words what the last trained policy of the
// summary (grpo, else sft) can and cannot do, from the numbers: how it
// compares with the random policy on each split, how far the run moved it
// from the model it started from (which, pre-trained, may already answer
// held-out questions), and whether GRPO moved sampled success beyond two
// standard errors of the difference from the SFT model's (paired over the
// questions both answered, see training.PairedDifference). It returns
// Markdown.
func Findings(s training.EvalSummary) string {
	last := ""
	for _, p := range []string{training.PolicyGRPO, training.PolicySFT} {
		if _, ok := s[training.SplitTrain][p]; ok {
			last = p
			break
		}
	}
	if last == "" {
		return "No trained model has been evaluated yet."
	}
	pct := func(x float64) string { return fmt.Sprintf("%.0f %%", 100*x) }
	var parts []string
	beats := map[string]bool{}
	for _, split := range training.Splits {
		r, ok := s[split][last]
		if !ok {
			continue
		}
		rnd := s[split][training.PolicyRandom]
		beats[split] = beatsRandom(s, split, last)
		verdict := "no better than the random policy"
		switch {
		case beats[split] && r.GreedySuccess >= 0.5:
			verdict = "solved well"
		case beats[split]:
			verdict = "better than random, far from solved"
		}
		parts = append(parts, fmt.Sprintf("on the %s it succeeds greedily on %s (sampled %s ± %.0f, random policy %s): %s",
			splitTitles[split], pct(r.GreedySuccess), pct(r.SampledSuccess), 100*r.SampledSuccessSE, pct(rnd.SampledSuccess), verdict))
	}
	if len(parts) > 0 {
		parts[0] = strings.ToUpper(parts[0][:1]) + parts[0][1:]
	}
	out := fmt.Sprintf("**What the %s model can and cannot do.** ", map[string]string{training.PolicyGRPO: "SFT + GRPO", training.PolicySFT: "SFT"}[last]) +
		strings.Join(parts, "; ") + "."
	out += sinceStart(s, last)
	summary := inShort(s, last, beats)
	for _, split := range []string{training.SplitTrain, training.SplitHeldout} {
		sft, okS := s[split][training.PolicySFT]
		grpo, okG := s[split][training.PolicyGRPO]
		if !okS || !okG {
			continue
		}
		d, se := difference(grpo, sft)
		switch {
		case d > 0 && se == 0:
			out += fmt.Sprintf(" GRPO raised sampled success on the %s by %.1f points over SFT, on every question alike.", splitTitles[split], 100*d)
		case d > 2*se:
			out += fmt.Sprintf(" GRPO raised sampled success on the %s by %.1f points (%.1f standard errors) over SFT.", splitTitles[split], 100*d, d/se)
		case se > 0:
			out += fmt.Sprintf(" GRPO changed sampled success on the %s by %+.1f points (%.1f standard errors): not a clear gain.", splitTitles[split], 100*d, d/se)
		}
	}
	return out + summary
}

// beatsRandom reports whether policy's sampled success on split exceeds
// the random policy's by more than two standard errors of the difference.
func beatsRandom(s training.EvalSummary, split, policy string) bool {
	r, ok := s[split][policy]
	if !ok {
		return false
	}
	d, se := difference(r, s[split][training.PolicyRandom])
	return d > 2*se
}

// sinceStart compares the last trained policy with the model the run
// started from (training.PolicyUntrained) on the splits where that model
// succeeds at all: what the run's own training changed, as opposed to what
// the model could already do (a pre-trained base can answer held-out
// questions before SFT and GRPO). It returns "" when the summary has no
// untrained policy.
func sinceStart(s training.EvalSummary, last string) string {
	var parts []string
	var started []string
	for _, split := range training.Splits {
		base, okB := s[split][training.PolicyUntrained]
		r, okR := s[split][last]
		if !okB || !okR || (base.GreedySuccess == 0 && base.SampledSuccess == 0) {
			continue
		}
		started = append(started, fmt.Sprintf("on the %s %.0f %% greedily (%.0f %% sampled)", splitTitles[split], 100*base.GreedySuccess, 100*base.SampledSuccess))
		d, se := difference(r, base)
		if se > 0 {
			parts = append(parts, fmt.Sprintf("by %+.1f points (%.1f standard errors) on the %s", 100*d, d/se, splitTitles[split]))
		} else {
			parts = append(parts, fmt.Sprintf("by %+.1f points on the %s", 100*d, splitTitles[split]))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf(" The model the run started from already succeeded %s; this run's training changed sampled success %s.",
		strings.Join(started, " and "), strings.Join(parts, " and "))
}

// difference is a's sampled success minus b's and its standard error:
// paired over the questions both answered (training.PairedDifference), or,
// for summaries without per-question rates, as two independent samples.
func difference(a, b training.SplitResult) (d, se float64) {
	if d, se, _, ok := training.PairedDifference(a, b); ok {
		return d, se
	}
	return a.SampledSuccess - b.SampledSuccess, math.Sqrt(a.SampledSuccessSE*a.SampledSuccessSE + b.SampledSuccessSE*b.SampledSuccessSE)
}

// SolvedSideBySide shows up to n questions that the trained policy's
// episodes solve, each beside the other policies' episodes on the same
// question (e.g. the random policy's and the model's before training), the
// trained policy in the last column. The questions that show learning come
// first: those whose trained episode's SQL carries a constant of the
// question (training.QuestionConstants of the question and its queries),
// then those the other policies failed more often; otherwise in the trained
// report's order.
func SolvedSideBySide(n int, trained render.Column, others ...render.Column) string {
	var solved sqlenv.EvalReport
	for _, ep := range trained.Report.Episodes {
		if ep.Correct {
			solved.Episodes = append(solved.Episodes, ep)
		}
	}
	if len(solved.Episodes) == 0 {
		return "<p>The trained model solved none of these questions.</p>"
	}
	failedBy := map[string]int{}
	for _, c := range others {
		for _, ep := range c.Report.Episodes {
			if !ep.Correct {
				failedBy[ep.QuestionID]++
			}
		}
	}
	rank := func(ep sqlenv.EpisodeReport) int {
		r := failedBy[ep.QuestionID]
		if copiesConstant(ep) {
			r += 1 << 20
		}
		return r
	}
	slices.SortStableFunc(solved.Episodes, func(a, b sqlenv.EpisodeReport) int { return cmp.Compare(rank(b), rank(a)) })
	return render.SideBySide(n, append(slices.Clip(others), render.Column{Name: trained.Name, Report: solved})...)
}

// copiesConstant reports whether an episode's QUERY actions spell a literal
// that its question spells too: the model carried a value of the question
// into its SQL.
func copiesConstant(ep sqlenv.EpisodeReport) bool {
	var sql strings.Builder
	for _, t := range ep.Turns {
		if t.Action.ActionType == sqlenv.Query {
			sql.WriteString(t.Action.Argument)
			sql.WriteString("\n")
		}
	}
	return len(training.QuestionConstants(ep.Question, sql.String())) > 0
}

// inShort is Findings' one-sentence summary of what the policy last
// generalises to, from which splits it beats the random policy on (beats);
// "" when no statement fits.
func inShort(s training.EvalSummary, last string, beats map[string]bool) string {
	_, hasHeldout := s[training.SplitHeldout][last]
	// Where the model the run started from already generalised, the
	// credit is pre-training's, and the summary says so.
	inherited := ""
	if beatsRandom(s, training.SplitHeldout, training.PolicyUntrained) {
		inherited = " (as the model the run started from already did)"
	}
	// New questions of the training databases, qualified by the reading
	// splits it does not beat the random policy on: a model that fails
	// them answers only the names and wordings it was trained on.
	unreadNote, notOthers := "", ", not to other databases."
	var unread []string
	for _, split := range []string{training.SplitRenamed, training.SplitParaphrased} {
		if _, ok := s[split][last]; ok && !beats[split] {
			unread = append(unread, readingFailures[split])
		}
	}
	if len(unread) > 0 {
		unreadNote = ", as long as they keep the names and wordings it was trained on (not with " + strings.Join(unread, " or ") + ")"
		notOthers = ", and not to other databases."
	}
	switch {
	case beats[training.SplitTrain] && hasHeldout && !beats[training.SplitHeldout]:
		return " In short: it has learned the questions it was trained on, and it does not generalise to new questions, even about the same database."
	case beats[training.SplitTrain] && beats[training.SplitHeldout] && !beats[training.SplitUnseen]:
		return " In short: it generalises to new questions about its training databases" + inherited + unreadNote + notOthers
	case beats[training.SplitTrain] && beats[training.SplitHeldout] && beats[training.SplitUnseen]:
		return " In short: it generalises to new questions about its training databases" + inherited + unreadNote + ", and beyond chance to databases it never saw."
	}
	return ""
}
