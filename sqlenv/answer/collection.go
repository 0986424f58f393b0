package answer

import (
	"regexp"
	"strings"
	"time"
	"unicode"
)

// cell is one item of a list or one cell of a table row, ready to compare.
type cell struct {
	text    string  // folded text
	num     float64 // numeric value when isNum
	isNum   bool
	integer bool // the gold value is an integer: compare exactly
	null    bool // the gold value is NULL: None, N/A, null or an empty cell match it
	dated   bool // a date (or date and time) read from prose: when
	when    time.Time
}

func goldCell(v any) cell {
	switch x := v.(type) {
	case int64:
		return cell{text: FormatValue(x), num: float64(x), isNum: true, integer: true}
	case int:
		return cell{text: FormatValue(x), num: float64(x), isNum: true, integer: true}
	case float64:
		return cell{text: FormatValue(x), num: x, isNum: true}
	case nil:
		return cell{text: "null", null: true}
	}
	return textCell(FormatValue(v))
}

// textCell reads a cell written as text, without quotes or emphasis around
// it; it is numeric when it parses as a number (currency signs, thousands
// separators and magnitudes allowed: "$52,000").
func textCell(s string) cell {
	s = trimEmphasis(trimQuotes(strings.TrimSpace(s)))
	c := cell{text: foldText(s)}
	if f, ok := parseLooseNumber(s); ok {
		c.num, c.isNum = f, true
		c.integer = !strings.ContainsAny(s, ".eE")
	}
	return c
}

// matches reports whether predicted cell p matches gold cell g.
func (g cell) matches(p cell) bool {
	if g.null {
		return p.text == "" || nullWords[p.text] || emptyCells[p.text]
	}
	if p.dated {
		d, ok := parseDate(g.text)
		return ok && d.Equal(p.when)
	}
	if g.isNum {
		if !p.isNum {
			return false
		}
		if g.integer {
			return p.num == g.num
		}
		return closeTo(p.num, g.num)
	}
	return p.text == g.text || sameText(p.text, g.text)
}

// emptyCells are the dashes a table shows in an empty cell; they match a
// NULL gold cell.
var emptyCells = map[string]bool{"-": true, "—": true, "–": true}

// sameText reports whether the folded predicted text p names the gold text
// g with an article in front or a sentence's period after it ("the
// Netherlands" for Netherlands).
func sameText(p, g string) bool {
	if !strings.HasSuffix(g, ".") {
		p = strings.TrimSpace(strings.TrimSuffix(p, "."))
	}
	return p == g || (!strings.HasPrefix(g, "the ") && strings.TrimPrefix(p, "the ") == g)
}

var itemPrefix = regexp.MustCompile(`^(?:[-*•]|\d+[.)])\s+`)

// splitItems splits a predicted list on new lines, else pipes, else
// semicolons, else commas; it drops bullets, numbering and brackets.
func splitItems(s string) []cell {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		s = s[1 : len(s)-1]
	}
	var parts []string
	switch {
	case strings.Contains(s, "\n"):
		parts = strings.Split(s, "\n")
	case strings.Contains(s, "|"):
		parts = splitQuoted(s, '|')
	case strings.Contains(s, ";"):
		parts = splitQuoted(s, ';')
	default:
		parts = splitQuoted(s, ',')
	}
	var items []cell
	for _, p := range parts {
		p = itemPrefix.ReplaceAllString(strings.TrimSpace(p), "")
		if p = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(p), ",")); p != "" {
			items = append(items, textCell(p))
		}
	}
	return items
}

// splitQuoted splits s at sep, except inside an item that starts with a
// quote and runs to its closing quote ("Virgin Islands, U.S.", "France" is
// two items). A quote inside an item (O'Brien) is an ordinary character.
func splitQuoted(s string, sep byte) []string {
	var parts []string
	for len(s) > 0 {
		t := strings.TrimLeft(s, " \t")
		if len(t) > 0 && (t[0] == '"' || t[0] == '\'') {
			if end := strings.IndexByte(t[1:], t[0]); end >= 0 {
				rest := strings.TrimLeft(t[end+2:], " \t")
				if rest == "" || rest[0] == sep {
					parts = append(parts, t[:end+2])
					if rest == "" {
						return parts
					}
					s = rest[1:]
					continue
				}
			}
		}
		i := strings.IndexByte(s, sep)
		if i < 0 {
			return append(parts, s)
		}
		parts, s = append(parts, s[:i]), s[i+1:]
	}
	return parts
}

func goldItems(gold string, rows [][]any) []cell {
	if rows != nil {
		items := make([]cell, 0, len(rows))
		for _, r := range rows {
			if len(r) > 0 {
				items = append(items, goldCell(r[0]))
			}
		}
		return items
	}
	var items []cell
	for _, p := range strings.Split(gold, ListSeparator) {
		items = append(items, textCell(p))
	}
	return items
}

// sameItems compares two lists as sets: duplicates are ignored, order too.
func sameItems(pred, gold []cell) bool {
	pred, gold = dedupe(pred), dedupe(gold)
	if len(pred) != len(gold) || len(gold) == 0 {
		return false
	}
	return matchAll(len(pred), len(gold), func(i, j int) bool { return gold[j].matches(pred[i]) })
}

func dedupe(cells []cell) []cell {
	seen := make(map[string]bool, len(cells))
	out := cells[:0:0]
	for _, c := range cells {
		key := c.text
		if c.isNum {
			key = "#" + FormatFloat(c.num)
		}
		if !seen[key] {
			seen[key] = true
			out = append(out, c)
		}
	}
	return out
}

// matchAll pairs every predicted element i with a distinct gold element j
// such that match(i, j), greedily; n and m must be equal.
func matchAll(n, m int, match func(i, j int) bool) bool {
	if n != m {
		return false
	}
	used := make([]bool, m)
	for i := 0; i < n; i++ {
		found := false
		for j := 0; j < m; j++ {
			if !used[j] && match(i, j) {
				used[j], found = true, true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

var tableRule = regexp.MustCompile(`^\|?[\s:|-]*-[\s:|-]*\|?$`)

// parseTable reads one row per non-empty line; cells are separated by "|"
// (else tabs, else commas). Markdown rules and numbering are skipped.
func parseTable(s string) [][]cell {
	var rows [][]cell
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || tableRule.MatchString(line) {
			continue
		}
		line = itemPrefix.ReplaceAllString(line, "")
		var parts []string
		switch {
		case strings.Contains(line, "|"):
			// A Markdown row has pipes at both ends; without the leading
			// one, a trailing pipe ends an empty last cell ("Lima |").
			if strings.HasPrefix(line, "|") {
				line = strings.TrimSuffix(line[1:], "|")
			}
			parts = strings.Split(line, "|")
		case strings.Contains(line, "\t"):
			parts = strings.Split(line, "\t")
		default:
			parts = strings.Split(line, ",")
		}
		row := make([]cell, len(parts))
		for i, p := range parts {
			row[i] = textCell(p)
		}
		rows = append(rows, row)
	}
	return rows
}

func goldTable(gold string, rows [][]any) [][]cell {
	if rows != nil {
		out := make([][]cell, len(rows))
		for i, r := range rows {
			out[i] = make([]cell, len(r))
			for j, v := range r {
				out[i][j] = goldCell(v)
			}
		}
		return out
	}
	var out [][]cell
	for _, line := range strings.Split(gold, "\n") {
		var row []cell
		for _, p := range strings.Split(line, "|") {
			row = append(row, textCell(p))
		}
		out = append(out, row)
	}
	return out
}

// sameRows compares two tables as multisets of rows. A prediction with one
// extra first line that names the gold columns is compared without it.
func sameRows(pred, gold [][]cell, columns []string) bool {
	if len(gold) == 0 {
		return false
	}
	try := func(pred [][]cell) bool {
		return matchAll(len(pred), len(gold), func(i, j int) bool { return rowMatches(pred[i], gold[j]) })
	}
	if try(pred) {
		return true
	}
	return len(pred) == len(gold)+1 && isHeader(pred[0], columns, gold) && try(pred[1:])
}

// rowMatches reports whether predicted row p matches gold row g cell by cell.
func rowMatches(p, g []cell) bool {
	if len(p) == len(g)+1 && p[len(g)].text == "" {
		p = p[:len(g)] // "Alice | 3 |": a pipe after the last cell
	}
	if len(p) != len(g) {
		return false
	}
	for k := range g {
		if !g[k].matches(p[k]) {
			return false
		}
	}
	return true
}

// isHeader reports whether row is a header line: it names columns, cell by
// cell (equal once reduced to letters and digits: "Name" for name, "count"
// for count(*), "singer name" for singer_name, "name" for T1.name; or one
// containing the other). Without column names, a row is a header only when
// it cannot be data: no cell is numeric, and some gold column holds only
// numbers. No numeric cell is ever a header.
func isHeader(row []cell, columns []string, gold [][]cell) bool {
	if len(columns) == 0 {
		return headerLike(row, gold)
	}
	if len(row) != len(columns) {
		return false
	}
	labels := labelColumns(columns)
	for i, c := range row {
		if c.isNum {
			return false
		}
		h, col := alnum(c.text), alnum(columnName(columns[i]))
		named := h != "" && col != "" && (h == col || (len(h) >= 3 && strings.Contains(col, h)) || (len(col) >= 3 && strings.Contains(h, col)))
		if !named && namedColumn(c.text, labels) != i {
			return false
		}
	}
	return true
}

// labelColumns maps each stem of the columns' labels (columnLabels) to the
// one column it names, or to -1 when it names several.
func labelColumns(columns []string) map[string]int {
	labels := map[string]int{}
	for k, c := range columns {
		for _, w := range columnLabels(c) {
			if j, ok := labels[w]; ok && j != k {
				labels[w] = -1
			} else {
				labels[w] = k
			}
		}
	}
	return labels
}

// namedColumn is the one column the words of a header cell name through
// their labels ("Average" for avg(age)), or -1.
func namedColumn(text string, labels map[string]int) int {
	named := -1
	for _, w := range wordsOf(text) {
		j, ok := labels[stem(w)]
		if !ok || j < 0 {
			continue
		}
		if named >= 0 && named != j {
			return -1
		}
		named = j
	}
	return named
}

// headerLike reports whether row, of text cells only, sits over a gold
// column of numbers only, where it cannot be a row of data.
func headerLike(row []cell, gold [][]cell) bool {
	if len(gold) == 0 || len(row) != len(gold[0]) {
		return false
	}
	for _, c := range row {
		if c.isNum {
			return false
		}
	}
	for k := range row {
		numeric := true
		for _, g := range gold {
			if k >= len(g) || !g[k].isNum {
				numeric = false
				break
			}
		}
		if numeric {
			return true
		}
	}
	return false
}

// columnName drops a table qualifier: "T1.name" → "name".
func columnName(c string) string {
	if i := strings.LastIndexByte(c, '.'); i >= 0 && !strings.ContainsAny(c[:i], "()") {
		return c[i+1:]
	}
	return c
}

// alnum keeps the lower-cased letters and digits of s.
func alnum(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}
