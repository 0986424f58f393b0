package verify

import (
	"context"
	"regexp"
	"strings"

	"github.com/gosqlenv/gosqlenv/sqlenv/answer"
)

// AnswerVerifier scores a model's final answer to a SQL question against the
// gold answer with answer.Check, so that SQL answers fit the same Verifier
// interface (and VerifyBatch) as programs. Reward is 1 when the answer is
// correct, else 0; Success says the same.
type AnswerVerifier struct {
	Gold     string      // the gold answer text
	Type     answer.Type // selects the comparison rule (integer, float, string, list, table)
	GoldRows [][]any     // rows of the gold query, or nil; used by list and table comparisons
	// GoldColumns are the gold query's column names, or nil; a table
	// answer may start with a header line that names them.
	GoldColumns []string
}

// NewAnswerVerifier returns a verifier for one question's gold answer.
func NewAnswerVerifier(gold string, typ answer.Type, goldRows [][]any) *AnswerVerifier {
	return &AnswerVerifier{Gold: gold, Type: typ, GoldRows: goldRows}
}

// answerLineRe matches a line that starts with ANSWER ("ANSWER: 42",
// "answer 42", "Answer=42", "Answer is: 42"); group 1 is the rest of the line.
var answerLineRe = regexp.MustCompile(`(?im)^[ \t]*answer\b(?:[ \t]+is\b)?[ \t]*[:：=]?[ \t]*(.*)$`)

// PredictedAnswer returns the answer in a model's output: the text after the
// last line that starts with "ANSWER" (case-insensitive, with or without a
// colon) when there is one, else the whole output, trimmed. After the marker
// the answer is the rest of that line; when that is empty, or for list and
// table answers, the following lines up to a blank line are included too.
// found reports whether a marker line was seen.
func PredictedAnswer(output string, typ answer.Type) (predicted string, found bool) {
	text := strings.ReplaceAll(output, "\r\n", "\n")
	ms := answerLineRe.FindAllStringSubmatchIndex(text, -1)
	if ms == nil {
		return strings.TrimSpace(text), false
	}
	m := ms[len(ms)-1]
	first := strings.TrimSpace(text[m[2]:m[3]])
	if first != "" && typ != answer.List && typ != answer.Table {
		return first, true
	}
	rest := text[m[1]:]
	lines := []string{}
	if first != "" {
		lines = append(lines, first)
	}
	for _, l := range strings.Split(strings.TrimPrefix(rest, "\n"), "\n") {
		if strings.TrimSpace(l) == "" {
			if len(lines) == 0 {
				continue // blank lines between the marker and the answer
			}
			break
		}
		lines = append(lines, l)
	}
	return strings.TrimSpace(strings.Join(lines, "\n")), true
}

// Verify implements Verifier. output is the model's text; see
// PredictedAnswer for how the answer is found in it. Metadata has
// "predicted", "gold", "answer_type" and "answer_marker" (whether an ANSWER
// line was found).
func (a *AnswerVerifier) Verify(_ context.Context, output string) Result {
	pred, found := PredictedAnswer(output, a.Type)
	res := Result{Metadata: map[string]any{
		"predicted": pred, "gold": a.Gold, "answer_type": string(a.Type), "answer_marker": found,
	}}
	switch {
	case pred == "":
		res.Details, res.Error = "no answer", "no answer found in the output"
	case answer.Expected{Text: a.Gold, Type: a.Type, Rows: a.GoldRows, Columns: a.GoldColumns}.Check(pred):
		res.Success, res.Reward, res.Details = true, 1, "correct answer"
	default:
		res.Details = "wrong answer"
	}
	return res
}
