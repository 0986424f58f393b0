package sqlenv

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gosqlenv/gosqlenv/sqlenv/answer"
	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
)

// renderRows renders a result for the agent: a header line of column names,
// then at most maxRows numbered rows "1. a | b", then a line stating how many
// rows there were. total is the row count when known exactly (else -1).
//
// Values are shown unambiguously (see cell): SQL NULL is NULL and the text
// 'NULL' is quoted, as are texts that look like blob literals or start with
// a quote; line breaks, tabs, other control characters and invisible or
// line-breaking Unicode characters are escaped (\n, \t, \x00, \u{2028}), a
// backslash is "\\"; a "|" in a value or a column name is "\|", so the
// columns always split on " | "; a blob that is not plain text is hex; a
// value cut at cellWidth characters says how long it is. The whole
// observation stays within budget characters (0: no limit): columns beyond
// those whose header and first row fit, then rows, are left out (and a
// single column too wide gets narrower cells); the last line says exactly
// what was cut, so that the agent can narrow its query.
func renderRows(cols []string, rows [][]any, total int, truncated bool, maxRows, cellWidth, budget int) string {
	if budget > 0 {
		budget = max(budget, MinObservationChars)
	}
	lay := fitColumns(cols, rows, cellWidth, budget)
	var b strings.Builder
	b.WriteString(strings.Join(lay.header[:lay.shownCols], " | "))
	b.WriteByte('\n')
	shown, cutCells, maxCellLen := writeRows(&b, rows, lay, maxRows, budget)
	var what []string
	if lay.shownCols < len(cols) {
		what = append(what, fmt.Sprintf("%d of %d columns", lay.shownCols, len(cols)))
	}
	if cutCells > 0 {
		values := "values"
		if cutCells == 1 {
			values = "value"
		}
		what = append(what, fmt.Sprintf("%d %s cut at %d characters (the longest has %d)", cutCells, values, lay.cellWidth, maxCellLen))
	}
	budgetCut := shown < min(len(rows), maxRows) || lay.shownCols < len(cols) || lay.narrowed
	switch {
	case truncated:
		rowsWord := "rows"
		if len(rows) == 1 {
			rowsWord = "row"
		}
		fmt.Fprintf(&b, "(showing %d of at least %d %s: the result is too large to read in full", shown, len(rows), rowsWord)
	case total > shown || budgetCut:
		fmt.Fprintf(&b, "(showing %d of %d rows", shown, max(total, len(rows)))
	case total == 1:
		b.WriteString("(1 row")
	default:
		fmt.Fprintf(&b, "(%d rows", total)
	}
	if len(what) > 0 {
		b.WriteString("; " + strings.Join(what, "; "))
	}
	if budgetCut {
		fmt.Fprintf(&b, "; the observation is limited to %d characters (about %d tokens): select fewer columns or rows", budget, EstimateTokens(budget))
	}
	b.WriteByte(')')
	return b.String()
}

// noteRoom is the room kept for a result's last line.
const noteRoom = 300

// resultLayout is how a result's columns are shown.
type resultLayout struct {
	header    []string // every column's name as shown
	shownCols int      // the first shownCols columns are shown
	cellWidth int      // values are cut at this many characters
	narrowed  bool     // cellWidth was narrowed to fit the budget
}

// fitColumns keeps as many columns as let the header and the first row fit
// the budget (one at least; 0: no limit); a single column too wide for the
// budget gets narrower cells.
func fitColumns(cols []string, rows [][]any, cellWidth, budget int) resultLayout {
	ncols := len(cols)
	lay := resultLayout{header: make([]string, ncols), shownCols: ncols, cellWidth: cellWidth}
	for i, c := range cols {
		lay.header[i] = cell(c, cellWidth).text
	}
	if budget <= 0 {
		return lay
	}
	avail := budget - noteRoom
	var first []string
	if len(rows) > 0 {
		first = make([]string, min(len(rows[0]), ncols))
		for i := range first {
			first[i] = cell(rows[0][i], cellWidth).text
		}
	}
	cost := func(i int) int {
		n := len(lay.header[i]) + 3
		if i < len(first) {
			n += len(first[i]) + 3
		}
		return n
	}
	if ncols > 0 && cost(0) > avail {
		lay.cellWidth = max(8, (avail-16)/8) // 4 bytes a character at most, two cells
		lay.narrowed = true
		for i, c := range cols {
			lay.header[i] = cell(c, lay.cellWidth).text
		}
		for i := range first {
			first[i] = cell(rows[0][i], lay.cellWidth).text
		}
	}
	used := 0
	for i := range ncols {
		used += cost(i)
		if used > avail {
			lay.shownCols = max(i, 1)
			break
		}
	}
	return lay
}

// writeRows writes at most maxRows numbered rows, each only if it fits the
// budget with the last line, and returns how many it wrote, how many of
// their values were cut and the longest cut value's length.
func writeRows(b *strings.Builder, rows [][]any, lay resultLayout, maxRows, budget int) (shown, cutCells, maxCellLen int) {
	var line []byte // one row, kept only if it fits
	for i, r := range rows[:min(len(rows), maxRows)] {
		line = strconv.AppendInt(line[:0], int64(i+1), 10)
		line = append(line, ". "...)
		rowCut, rowMax := 0, 0
		for j, v := range r[:min(len(r), lay.shownCols)] {
			if j > 0 {
				line = append(line, " | "...)
			}
			c := cell(v, lay.cellWidth)
			if c.cut {
				rowCut++
				rowMax = max(rowMax, c.full)
			}
			line = append(line, c.text...)
		}
		line = append(line, '\n')
		if budget > 0 && b.Len()+len(line)+noteRoom > budget {
			break
		}
		b.Write(line)
		shown++
		cutCells += rowCut
		maxCellLen = max(maxCellLen, rowMax)
	}
	return shown, cutCells, maxCellLen
}

// shownCell is a value as a result shows it.
type shownCell struct {
	text string
	cut  bool // text is the first characters of a longer value
	full int  // the value's length shown in full (characters, or bytes of a blob)
}

// cell renders one value or column name on one line, at most width
// characters (0: any), unambiguously (see renderRows). It formats no more of
// a long string or blob than it shows: a value of a megabyte costs a few
// hundred bytes to render.
func cell(v any, width int) shownCell {
	var s string
	blob := false // a text blob's length is given in bytes
	switch x := v.(type) {
	case string:
		s = x
	case []byte:
		if !utf8.Valid(x) || hasControl(string(x)) {
			n := len(x)
			if width > 0 && 2*n+3 > width {
				return shownCell{text: hexBlob(x[:max(width/2-2, 1)]) + "…", cut: true, full: n}
			}
			return shownCell{text: hexBlob(x)}
		}
		s, blob = string(x), true
	default:
		return shownCell{text: answer.FormatValue(v)}
	}
	quoted := needsQuotes(s)
	full := 0
	if width > 0 && len(s) > width {
		full = utf8.RuneCountInString(s)
		if blob {
			full = len(s)
		}
		if full > width {
			s = prefixRunes(s, width-1)
		} else {
			full = 0
		}
	}
	s = escapeCell(s)
	if quoted {
		s = "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	if full > 0 {
		return shownCell{text: s + "…", cut: true, full: full}
	}
	return shownCell{text: s}
}

// needsQuotes reports whether a text would read as something else unquoted:
// NULL (any case), a blob literal (x'…'), or a text that starts with a
// quote (so that quoted cells are told from texts that have quotes).
// Such texts are shown as SQL string literals, quotes inside doubled: the
// text NULL as 'NULL'.
func needsQuotes(s string) bool {
	return strings.EqualFold(s, "NULL") || strings.HasPrefix(s, "'") ||
		len(s) >= 2 && (s[0] == 'x' || s[0] == 'X') && s[1] == '\''
}

// hexBlob is a blob as an SQL literal, x'0A1B…', as answer.FormatValue
// shows blobs that are not text.
func hexBlob(b []byte) string { return "x'" + strings.ToUpper(hex.EncodeToString(b)) + "'" }

// hasControl reports whether s has a control character (C0 or DEL).
func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return true
		}
	}
	return false
}

// escapeCell shows what would not read as itself on one line as escapes:
// a backslash as "\\" (so that an escape is told from a text that spells
// it), "|" as "\|", line breaks and tabs as \n, \r, \t, other C0 and C1
// controls and DEL as \x00, bytes that are not UTF-8 as \xff, and the
// characters that break or reorder lines or cannot be seen (Unicode's line
// and paragraph separators and format characters: zero-width spaces,
// bidirectional overrides, the byte-order mark) as \u{2028}.
func escapeCell(s string) string {
	plain := true
	for i := 0; i < len(s) && plain; i++ {
		c := s[i]
		plain = c >= 0x20 && c < 0x7f && c != '|' && c != '\\'
	}
	if plain {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '|':
			b.WriteString(`\|`)
		case r == '\\':
			b.WriteString(`\\`)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp):
			fmt.Fprintf(&b, `\u{%04X}`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// prefixUTF8 returns at most n bytes of s, cut at the start of a character.
func prefixUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// prefixRunes returns the first n characters of s.
func prefixRunes(s string, n int) string {
	i := 0
	for k := range s {
		if i == n {
			return s[:k]
		}
		i++
	}
	return s
}

// oneLine puts an action's argument on one line (line breaks and tabs
// become spaces) and caps it at width characters, for history lines: they
// are not split into cells, so nothing else is escaped.
func oneLine(s string, width int) string {
	if strings.ContainsAny(s, "\n\r\t") {
		s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "\t", " ").Replace(s)
	}
	if width > 0 && len(s) > width && utf8.RuneCountInString(s) > width {
		s = prefixRunes(s, width-1) + "…"
	}
	return s
}

// renderDescribe renders DESCRIBE's result.
func renderDescribe(t sqlitedb.Table) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Table %s (%d rows)\nColumns:\n", t.Name, t.RowCount)
	refs := map[string]sqlitedb.ForeignKey{}
	for _, fk := range t.ForeignKeys {
		refs[strings.ToLower(fk.Column)] = fk
	}
	for _, c := range t.Columns {
		fmt.Fprintf(&b, "- %s", c.Name)
		if c.Type != "" {
			fmt.Fprintf(&b, " %s", c.Type)
		}
		if c.PrimaryKey {
			b.WriteString(", primary key")
		}
		if fk, ok := refs[strings.ToLower(c.Name)]; ok {
			if fk.RefColumn != "" {
				fmt.Fprintf(&b, ", references %s.%s", fk.RefTable, fk.RefColumn)
			} else {
				fmt.Fprintf(&b, ", references %s", fk.RefTable)
			}
		}
		b.WriteByte('\n')
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// schemaInfoPrefix starts the first line of SchemaInfo.
const schemaInfoPrefix = "Tables: "

// renderSchema renders SchemaInfo: all table names, then the columns of the
// tables described so far (in the order they were described).
func renderSchema(db *sqlitedb.DB, described []string) string {
	var b strings.Builder
	b.WriteString(schemaInfoPrefix)
	b.WriteString(strings.Join(db.TableNames(), ", "))
	if len(described) > 0 {
		b.WriteString("\nDescribed tables:")
		for _, name := range described {
			t, _ := db.Table(name)
			cols := make([]string, len(t.Columns))
			for i, c := range t.Columns {
				cols[i] = strings.TrimSpace(c.Name + " " + c.Type)
			}
			fmt.Fprintf(&b, "\n- %s(%s)", t.Name, strings.Join(cols, ", "))
		}
	}
	return b.String()
}

// TableNames reads the table names from an observation's SchemaInfo.
func TableNames(schemaInfo string) []string {
	first, _, _ := strings.Cut(schemaInfo, "\n")
	list, ok := strings.CutPrefix(first, schemaInfoPrefix)
	if !ok || strings.TrimSpace(list) == "" {
		return nil
	}
	names := strings.Split(list, ", ")
	for i := range names {
		names[i] = strings.TrimSpace(names[i])
	}
	return names
}

// splitCells splits a rendered line into its cells, with "\|" back to "|"
// and "\\" to "\".
func splitCells(line string) []string {
	cells := strings.Split(line, " | ")
	for i, c := range cells {
		if !strings.Contains(c, `\`) {
			continue
		}
		var b strings.Builder
		for j := 0; j < len(c); j++ {
			if c[j] == '\\' && j+1 < len(c) && (c[j+1] == '|' || c[j+1] == '\\') {
				j++
			}
			b.WriteByte(c[j])
		}
		cells[i] = b.String()
	}
	return cells
}

// ParseResult reads back a result rendered by the environment (QUERY or
// SAMPLE): the header's column names and the cells of each shown row (as
// shown: escapes other than "\|" are kept, cut values end with "…").
func ParseResult(result string) (columns []string, rows [][]string) {
	lines := strings.Split(result, "\n")
	if len(lines) < 2 {
		return nil, nil
	}
	columns = splitCells(lines[0])
	for _, line := range lines[1:] {
		num, rest, ok := strings.Cut(line, ". ")
		if !ok || num == "" || strings.Trim(num, "0123456789") != "" {
			continue
		}
		rows = append(rows, splitCells(rest))
	}
	return columns, rows
}

// EstimateTokens is about how many tokens of Qwen's tokenizer chars
// characters of a result take: 2.0 characters a token, measured on the
// QUERY and SAMPLE results of 174 bundled questions (74,216 characters,
// 37,082 tokens); results are mostly numbers and short names.
func EstimateTokens(chars int) int { return (chars + 1) / 2 }
