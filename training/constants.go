package training

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gosqlenv/gosqlenv/sqlenv"
)

// sqlLiteral matches a string literal ('…', ” escapes a quote) or a number
// standing alone in SQL.
var sqlLiteral = regexp.MustCompile(`'(?:[^']|'')*'|\b\d+(?:\.\d+)?\b`)

// QuestionConstants returns the constants of a question: the literals of its
// gold SQL (strings unquoted, numbers) that the question's text spells as
// whole words, case-insensitively — "students who enrolled in 2019 and come
// from Brussels" with `… enrollment_year = 2019 AND home_city = 'Brussels'`
// gives 2019 and Brussels; a template's own literals (`round(x, 2)`) that
// the text does not spell are left out. Each constant is listed once.
func QuestionConstants(question, goldSQL string) []string {
	var out []string
	for _, lit := range sqlLiteral.FindAllString(goldSQL, -1) {
		c := lit
		if strings.HasPrefix(c, "'") {
			c = strings.ReplaceAll(c[1:len(c)-1], "''", "'")
		}
		seen := slices.ContainsFunc(out, func(x string) bool { return strings.EqualFold(x, c) })
		if strings.TrimSpace(c) == "" || seen || !spellsWord(question, c) {
			continue
		}
		out = append(out, c)
	}
	return out
}

// ConstantsCopied counts, over episodes, the question constants
// (QuestionConstants of each episode's question and the gold SQL goldSQL
// gives for its question id) that the episode's QUERY actions spell as whole
// words: how often a policy carries the question's values into its SQL
// instead of values it learned by heart. Episodes of unknown questions and
// questions without constants add nothing.
func ConstantsCopied(episodes []sqlenv.EpisodeReport, goldSQL map[string]string) (copied, total int) {
	for _, e := range episodes {
		gold, ok := goldSQL[e.QuestionID]
		if !ok {
			continue
		}
		var sql strings.Builder
		for _, t := range e.Turns {
			if t.Action.ActionType == sqlenv.Query {
				sql.WriteString(t.Action.Argument)
				sql.WriteString("\n")
			}
		}
		for _, c := range QuestionConstants(e.Question, gold) {
			total++
			if spellsWord(sql.String(), c) {
				copied++
			}
		}
	}
	return copied, total
}

// spellsWord reports whether text holds w, case-insensitively, not as part
// of a longer word or number.
func spellsWord(text, w string) bool {
	text, w = strings.ToLower(text), strings.ToLower(w)
	for from := 0; ; {
		i := strings.Index(text[from:], w)
		if i < 0 {
			return false
		}
		start, end := from+i, from+i+len(w)
		before, _ := utf8.DecodeLastRuneInString(text[:start])
		after, _ := utf8.DecodeRuneInString(text[end:])
		if !wordRune(before) && !wordRune(after) {
			return true
		}
		from = start + 1
	}
}

// wordRune reports whether r continues a word or number (utf8.RuneError,
// the edge of the text, does not).
func wordRune(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_')
}
