package training

import (
	"slices"
	"strings"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
)

// GroundedNames counts, over episodes, the table and column names that the
// episodes' QUERY actions write (SQLNames) and how many of them the episode
// had been shown before that action — in the table list, a DESCRIBE or
// SAMPLE, a result or an error message, not the question: a policy that
// reads the schema it is shown writes names it has seen; one that recalls
// names from training writes others (a renamed table's old name). Each
// name counts once per action.
func GroundedNames(episodes []sqlenv.EpisodeReport) (grounded, total int) {
	for _, e := range episodes {
		seen := []string{shownText(e.Initial)}
		for _, t := range e.Turns {
			if t.Action.ActionType == sqlenv.Query {
				for _, name := range SQLNames(t.Action.Argument) {
					total++
					if slices.ContainsFunc(seen, func(s string) bool { return spellsWord(s, name) }) {
						grounded++
					}
				}
			}
			seen = append(seen, shownText(t.Observation))
		}
	}
	return grounded, total
}

// shownText is what an observation shows of the database: its table list
// (with the described tables' columns), result and error.
func shownText(o sqlenv.Observation) string {
	return o.SchemaInfo + "\n" + o.Result + "\n" + o.Error
}

// SQLNames returns the identifiers of a SQL text that name tables or
// columns, each once, in order: words and quoted identifiers outside string
// literals and comments that are not SQL keywords, not function names (a
// word followed by "("), and not aliases the query defines (the word after
// AS, or after a table name in FROM or JOIN) or uses (the word before ".").
func SQLNames(text string) []string {
	toks := sqlTokens(text)
	aliases := map[string]bool{}
	for i, t := range toks {
		lower := strings.ToLower(t.text)
		if t.kind == tokWord && i+1 < len(toks) && toks[i+1].text == "." {
			aliases[lower] = true // a table or an alias: it qualifies a column
		}
		if t.kind == tokWord && !t.quoted && lower == "as" && i+1 < len(toks) && toks[i+1].kind == tokWord {
			aliases[strings.ToLower(toks[i+1].text)] = true
		}
		// FROM t a, JOIN t a, "…, t a": the word right after a table is its alias.
		if (lower == "from" || lower == "join" || lower == ",") && i+2 < len(toks) &&
			toks[i+1].kind == tokWord && toks[i+2].kind == tokWord && !toks[i+2].quoted && !sqlitedb.IsKeyword(toks[i+2].text) {
			aliases[strings.ToLower(toks[i+2].text)] = true
		}
	}
	var out []string
	for i, t := range toks {
		if t.kind != tokWord {
			continue
		}
		lower := strings.ToLower(t.text)
		isFunc := i+1 < len(toks) && toks[i+1].text == "("
		if t.quoted {
			isFunc = false
		}
		if (!t.quoted && sqlitedb.IsKeyword(lower)) || isFunc || (aliases[lower] && !isTableBeforeAlias(toks, i)) {
			continue
		}
		if !slices.ContainsFunc(out, func(x string) bool { return strings.EqualFold(x, t.text) }) {
			out = append(out, t.text)
		}
	}
	return out
}

// isTableBeforeAlias reports whether the word at i is a table named in
// FROM or JOIN (which SQLNames keeps even when it also qualifies columns:
// "FROM student … student.name").
func isTableBeforeAlias(toks []sqlToken, i int) bool {
	if i == 0 {
		return false
	}
	prev := strings.ToLower(toks[i-1].text)
	return prev == "from" || prev == "join"
}

// The kinds of sqlTokens' tokens.
const (
	tokWord = iota // an identifier or keyword, bare or quoted
	tokOther
)

type sqlToken struct {
	kind   int
	text   string // a quoted identifier without its quotes
	quoted bool
}

// sqlTokens splits SQL into words (bare or quoted identifiers) and single
// other characters (sqlitedb.Tokens), dropping white space, string
// literals, numbers and comments.
func sqlTokens(text string) []sqlToken {
	var out []sqlToken
	for _, t := range sqlitedb.Tokens(text) {
		switch t.Kind {
		case sqlitedb.Word:
			out = append(out, sqlToken{kind: tokWord, text: t.Text})
		case sqlitedb.QuotedWord:
			out = append(out, sqlToken{kind: tokWord, text: t.Text, quoted: true})
		case sqlitedb.Punct:
			out = append(out, sqlToken{kind: tokOther, text: t.Text})
		}
	}
	return out
}
