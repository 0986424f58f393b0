// Package render draws the SQL environment's data as self-contained HTML
// (inline styles, no scripts) for notebooks and files: tables, questions by
// database and difficulty, observations, episode transcripts, and the
// transcripts of several policies side by side on the same questions. It
// depends on the environment only, so that a program showing episodes does
// not carry the model and training code (training/report renders training
// results on top of it).
package render

import (
	"fmt"
	"html"
	"sort"
	"strings"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
)

// Styles shared by the tables and transcripts.
const (
	// TableStyle and CellStyle style a table and its cells; PreStyle a
	// block of preformatted text (SQL, results).
	TableStyle = `border-collapse:collapse;font-family:sans-serif;font-size:13px`
	CellStyle  = `border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top`
	PreStyle   = `margin:0;white-space:pre-wrap;font-size:12px;max-height:18em;overflow:auto`
)

// Table renders a header row and data rows; cells are escaped.
func Table(header []string, rows [][]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<table style="%s"><tr>`, TableStyle)
	for _, h := range header {
		fmt.Fprintf(&b, `<th style="%s;background:#f0f0f0">%s</th>`, CellStyle, html.EscapeString(h))
	}
	b.WriteString("</tr>")
	for _, r := range rows {
		b.WriteString("<tr>")
		for _, c := range r {
			fmt.Fprintf(&b, `<td style="%s">%s</td>`, CellStyle, html.EscapeString(c))
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</table>")
	return b.String()
}

// DatasetTable counts questions by database, split and difficulty.
func DatasetTable(qs ...[]dataset.QuestionRecord) string {
	type key struct{ db, split string }
	counts := map[key]map[dataset.Difficulty]int{}
	for _, list := range qs {
		for _, q := range list {
			k := key{q.DatabaseName, string(q.Split)}
			if counts[k] == nil {
				counts[k] = map[dataset.Difficulty]int{}
			}
			counts[k][q.Difficulty]++
		}
	}
	keys := make([]key, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].split != keys[j].split {
			return keys[i].split > keys[j].split
		}
		return keys[i].db < keys[j].db
	})
	var rows [][]string
	total := map[dataset.Difficulty]int{}
	for _, k := range keys {
		c := counts[k]
		rows = append(rows, []string{k.db, k.split, fmt.Sprint(c[dataset.Easy]), fmt.Sprint(c[dataset.Medium]), fmt.Sprint(c[dataset.Hard]),
			fmt.Sprint(c[dataset.Easy] + c[dataset.Medium] + c[dataset.Hard])})
		for d, n := range c {
			total[d] += n
		}
	}
	rows = append(rows, []string{"all", "", fmt.Sprint(total[dataset.Easy]), fmt.Sprint(total[dataset.Medium]), fmt.Sprint(total[dataset.Hard]),
		fmt.Sprint(total[dataset.Easy] + total[dataset.Medium] + total[dataset.Hard])})
	return Table([]string{"database", "split", "easy", "medium", "hard", "questions"}, rows)
}

// SummaryRow is one line of a results table.
type SummaryRow struct {
	Name   string
	Report sqlenv.EvalReport
}

// SummaryTable compares evaluation reports.
func SummaryTable(rows ...SummaryRow) string {
	var out [][]string
	for _, r := range rows {
		out = append(out, []string{r.Name, fmt.Sprintf("%.1f %%", 100*r.Report.SuccessRate), fmt.Sprintf("%.3f", r.Report.AvgReward),
			fmt.Sprintf("%.1f", r.Report.AvgSteps), fmt.Sprint(len(r.Report.Episodes))})
	}
	return Table([]string{"policy", "success", "avg reward", "avg steps", "episodes"}, out)
}

// Observation renders an observation: question, schema, result or error,
// step count, reward.
func Observation(obs sqlenv.Observation) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<div style="font-family:sans-serif;font-size:13px"><b>Question:</b> %s<br>`, html.EscapeString(obs.Question))
	fmt.Fprintf(&b, `<pre style="%s">%s</pre>`, PreStyle, html.EscapeString(obs.SchemaInfo))
	b.WriteString(observationBody(obs))
	fmt.Fprintf(&b, `<small>step %d, %d left, reward %+.3f, done %v</small></div>`, obs.StepCount, obs.BudgetRemaining, obs.Reward, obs.Done)
	return b.String()
}

func observationBody(obs sqlenv.Observation) string {
	switch {
	case obs.Error != "":
		return fmt.Sprintf(`<pre style="%s;color:#b00">%s</pre>`, PreStyle, html.EscapeString(obs.Error))
	case obs.Result != "":
		return fmt.Sprintf(`<pre style="%s">%s</pre>`, PreStyle, html.EscapeString(obs.Result))
	}
	return ""
}

// Transcript renders an episode: the question, then each action with what
// the environment answered and the step's reward, then the outcome.
func Transcript(ep sqlenv.EpisodeReport) string {
	var b strings.Builder
	verdict := `<span style="color:#b00">✗ wrong or unanswered</span>`
	if ep.Correct {
		verdict = `<span style="color:#080">✓ correct</span>`
	}
	fmt.Fprintf(&b, `<div style="font-family:sans-serif;font-size:13px"><b>%s</b> <small>(%s)</small><br>%s — reward %.3f in %d steps`,
		html.EscapeString(ep.Question), html.EscapeString(ep.QuestionID), verdict, ep.Reward, ep.Steps)
	if ep.Err != "" {
		fmt.Fprintf(&b, ` <small>(%s)</small>`, html.EscapeString(ep.Err))
	}
	fmt.Fprintf(&b, `<table style="%s;margin-top:4px">`, TableStyle)
	for i, t := range ep.Turns {
		action := string(t.Action.ActionType) + ": " + t.Action.Argument
		if text, ok := t.Action.Metadata["text"].(string); ok && strings.TrimSpace(text) != strings.TrimSpace(action) {
			action += "\n— model wrote: " + text
		}
		fmt.Fprintf(&b, `<tr><td style="%s">%d</td><td style="%s"><pre style="%s">%s</pre></td><td style="%s">%s</td><td style="%s">%+.3f</td></tr>`,
			CellStyle, i+1, CellStyle, PreStyle, html.EscapeString(action), CellStyle, observationBody(t.Observation), CellStyle, t.Observation.Reward)
	}
	b.WriteString("</table></div>")
	return b.String()
}

// Column is one policy's episodes in a side-by-side comparison.
type Column struct {
	// Name heads the column ("random policy", "trained model").
	Name string
	// Report holds the policy's episodes.
	Report sqlenv.EvalReport
}

// SideBySide shows, for the first n questions of the last column that
// every column has an episode of (the first of each), the columns'
// transcripts next to each other, each question once.
func SideBySide(n int, columns ...Column) string {
	if len(columns) == 0 {
		return ""
	}
	byID := make([]map[string]sqlenv.EpisodeReport, len(columns))
	for i, c := range columns {
		byID[i] = map[string]sqlenv.EpisodeReport{}
		for _, ep := range c.Report.Episodes {
			if _, dup := byID[i][ep.QuestionID]; !dup {
				byID[i][ep.QuestionID] = ep
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<table style="%s"><tr>`, TableStyle)
	for _, c := range columns {
		fmt.Fprintf(&b, `<th style="%s;background:#f0f0f0">%s</th>`, CellStyle, html.EscapeString(c.Name))
	}
	b.WriteString("</tr>")
	shown, done := 0, map[string]bool{}
	for _, last := range columns[len(columns)-1].Report.Episodes {
		id := last.QuestionID
		if shown >= n {
			break
		}
		if done[id] {
			continue
		}
		row := make([]sqlenv.EpisodeReport, len(columns))
		complete := true
		for i := range columns {
			if row[i], complete = byID[i][id]; !complete {
				break
			}
		}
		if !complete {
			continue
		}
		done[id] = true
		shown++
		b.WriteString("<tr>")
		for _, ep := range row {
			fmt.Fprintf(&b, `<td style="%s;width:%d%%;vertical-align:top">%s</td>`, CellStyle, 100/len(columns), Transcript(ep))
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</table>")
	return b.String()
}
