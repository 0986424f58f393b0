package sqlenv

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gosqlenv/gosqlenv/sqlenv/answer"
	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
)

// renderRows renders a result for the agent: a header line of column names,
// then at most maxRows numbered rows "1. a | b", then a line stating how many
// rows there were. total is the row count when known exactly (else -1).
func renderRows(cols []string, rows [][]any, total int, truncated bool, maxRows, cellWidth int) string {
	var b strings.Builder
	for i, c := range cols {
		if i > 0 {
			b.WriteString(" | ")
		}
		b.WriteString(cellText(c, cellWidth))
	}
	b.WriteByte('\n')
	shown := min(len(rows), maxRows)
	var num [20]byte
	for i, r := range rows[:shown] {
		b.Write(strconv.AppendInt(num[:0], int64(i+1), 10))
		b.WriteString(". ")
		for j, v := range r {
			if j > 0 {
				b.WriteString(" | ")
			}
			b.WriteString(cellText(cellValue(v, cellWidth), cellWidth))
		}
		b.WriteByte('\n')
	}
	switch {
	case truncated:
		fmt.Fprintf(&b, "(showing %d of more than %d rows: the result is too large to read in full)", shown, len(rows))
	case total > shown:
		fmt.Fprintf(&b, "(showing %d of %d rows)", shown, total)
	case total == 1:
		b.WriteString("(1 row)")
	default:
		fmt.Fprintf(&b, "(%d rows)", total)
	}
	return b.String()
}

// cellText puts a value on one line and caps its width (in characters),
// cutting at a character boundary (callers bound the value's size: see
// cellValue).
func cellText(s string, width int) string {
	if strings.ContainsAny(s, "\n\r\t") {
		s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "\t", " ").Replace(s)
	}
	if width > 0 && len(s) > width { // a string of at most width bytes has at most width characters
		n, cut := 0, -1
		for i := range s {
			if n == width-1 {
				cut = i
			}
			if n == width {
				s = s[:cut] + "…"
				break
			}
			n++
		}
	}
	return s
}

// cellValue formats v as answer.FormatValue does, but formats no more of a
// long string or blob than a cell of width characters can show: a value of
// a megabyte costs a few hundred bytes to render, not megabytes of runes.
func cellValue(v any, width int) string {
	if width <= 0 {
		return answer.FormatValue(v)
	}
	limit := 4*width + 4 // bytes for width+1 characters of up to 4 bytes
	switch x := v.(type) {
	case string:
		if len(x) > limit {
			return prefixUTF8(x, limit)
		}
	case []byte:
		if len(x) > limit {
			if utf8.Valid(x) {
				return prefixUTF8(string(x[:limit]), limit)
			}
			return answer.FormatValue(x[:width/2+1]) // hex: more than width characters, so cut
		}
	}
	return answer.FormatValue(v)
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

// ParseResult reads back a result rendered by the environment (QUERY or
// SAMPLE): the header's column names and the cells of each shown row.
func ParseResult(result string) (columns []string, rows [][]string) {
	lines := strings.Split(result, "\n")
	if len(lines) < 2 {
		return nil, nil
	}
	columns = strings.Split(lines[0], " | ")
	for _, line := range lines[1:] {
		num, rest, ok := strings.Cut(line, ". ")
		if !ok || num == "" || strings.Trim(num, "0123456789") != "" {
			continue
		}
		rows = append(rows, strings.Split(rest, " | "))
	}
	return columns, rows
}
