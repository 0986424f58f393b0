package report

import (
	"fmt"
	"strings"

	"github.com/gosqlenv/gosqlenv/training"
)

// Run is one training run's evaluation summary (eval_summary.json), named
// for a table (for example "seed 1").
type Run struct {
	Name    string
	Summary training.EvalSummary
}

// RunsTable renders several runs of one preset (seeds, usually) as the
// Markdown table BENCHMARKS.md reports: a row per run and split with each
// policy's greedy / sampled ± s.e. success and GRPO − SFT in sampled
// success, in points and in standard errors of the difference (paired over
// the questions both answered, as the notebook's findings; unpaired for
// summaries without per-question rates). Under it, per split, the mean of
// GRPO − SFT over the runs and its standard error between runs (sd/√n): the
// run-to-run spread, which a single run's standard error does not show.
func RunsTable(runs []Run) string {
	cols := []string{training.PolicyRandom, training.PolicyUntrained, training.PolicySFT, training.PolicyGRPO}
	titles := map[string]string{training.PolicyRandom: "random", training.PolicyUntrained: "untrained (base)",
		training.PolicySFT: "SFT", training.PolicyGRPO: "SFT + GRPO"}
	var b strings.Builder
	b.WriteString("| run | split |")
	for _, c := range cols {
		fmt.Fprintf(&b, " %s |", titles[c])
	}
	b.WriteString(" GRPO − SFT (sampled) |\n|---|---|")
	b.WriteString(strings.Repeat("---|", len(cols)+1) + "\n")
	gains := map[string][]float64{}
	for _, r := range runs {
		for _, split := range training.Splits {
			bySplit, ok := r.Summary[split]
			if !ok {
				continue
			}
			fmt.Fprintf(&b, "| %s | %s |", r.Name, split)
			for _, c := range cols {
				res, ok := bySplit[c]
				if !ok {
					b.WriteString(" — |")
					continue
				}
				fmt.Fprintf(&b, " %.1f / %.1f ± %.1f %% |", 100*res.GreedySuccess, 100*res.SampledSuccess, 100*res.SampledSuccessSE)
			}
			sft, okS := bySplit[training.PolicySFT]
			grpo, okG := bySplit[training.PolicyGRPO]
			switch d, se := difference(grpo, sft); {
			case !okS || !okG:
				b.WriteString(" — |\n")
			case se == 0:
				fmt.Fprintf(&b, " %+.1f |\n", 100*d)
				gains[split] = append(gains[split], d)
			default:
				fmt.Fprintf(&b, " %+.1f = %+.1f s.e. |\n", 100*d, d/se)
				gains[split] = append(gains[split], d)
			}
		}
	}
	var means []string
	for _, split := range training.Splits {
		g := gains[split]
		if len(g) < 2 {
			continue
		}
		m, se := training.MeanStdErr(g)
		means = append(means, fmt.Sprintf("%s %+.1f ± %.1f (%d runs)", split, 100*m, 100*se, len(g)))
	}
	if len(means) > 0 {
		fmt.Fprintf(&b, "\nGRPO − SFT in sampled success, mean over the runs that have both ± its standard error between runs (points): %s.\n",
			strings.Join(means, "; "))
	}
	return b.String()
}
