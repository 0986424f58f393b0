package sqlitedb

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mattn/go-sqlite3"
)

// RejectedError is returned for a statement the guard refuses to run. Reason
// is written for the agent: it says what was refused and what is allowed.
type RejectedError struct {
	Reason string
}

// Error is the reason, as the agent reads it.
func (e *RejectedError) Error() string { return e.Reason }

func rejectf(format string, args ...any) error {
	return &RejectedError{Reason: fmt.Sprintf(format, args...)}
}

// checkStatementText applies the textual checks that give clear messages
// before SQLite sees the statement: it must be non-empty, begin with SELECT or
// WITH and be a single statement. The authorizer and sqlite3_stmt_readonly
// enforce the same rules inside SQLite; this layer only explains them.
func checkStatementText(sqlText string) error {
	toks := scanStatements(sqlText)
	if len(toks) == 0 {
		return rejectf("empty query: write one SELECT statement")
	}
	first := toks[0]
	switch first.keyword {
	case "SELECT", "WITH":
	case "":
		return rejectf("only SELECT queries are allowed")
	default:
		if !slices.Contains(writeKeywords, first.keyword) {
			// Not a statement SQLite knows: most likely a typo.
			if near := nearestKeyword(first.keyword, "SELECT", "WITH"); near != "" {
				return rejectf("%s is not a SQL statement: did you mean %s? Write one SELECT query", first.keyword, near)
			}
			return rejectf("%s is not a SQL statement: write one SELECT query (it may start with WITH)", first.keyword)
		}
		return rejectf("only SELECT queries are allowed (got %s): the database is read-only", first.keyword)
	}
	if len(toks) > 1 {
		return rejectf("only one statement is allowed per query (found %d)", len(toks))
	}
	return nil
}

// statement is one statement of a SQL text as found by scanStatements.
type statement struct {
	keyword    string // first keyword, upper-cased; empty when it starts with a non-word
	start, end int    // byte range of the statement, without its semicolon
}

// scanStatements splits SQL text into statements at semicolons outside
// string literals, quoted identifiers and comments, and returns the non-empty
// ones. Its job is to explain refusals; it never decides what runs (only the
// first statement is ever prepared).
func scanStatements(s string) []statement {
	var out []statement
	started := false
	var cur statement
	flush := func(end int) {
		if started {
			cur.end = end
			out = append(out, cur)
		}
		started, cur = false, statement{}
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ';':
			flush(i)
			i++
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				i = len(s)
			} else {
				i += end + 4
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		default:
			if !started {
				started, cur.start = true, i
				j := i
				for j < len(s) && isWordByte(s[j]) {
					j++
				}
				if j > i {
					cur.keyword = upperKeyword(s[i:j])
					i = j
					continue
				}
			}
			i = skipToken(s, i)
		}
	}
	flush(len(s))
	return out
}

// upperKeyword upper-cases a statement's first word, without a copy for
// the common SELECT and WITH however they are written.
func upperKeyword(w string) string {
	for _, k := range []string{"SELECT", "WITH"} {
		if strings.EqualFold(w, k) {
			return k
		}
	}
	return strings.ToUpper(w)
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// skipToken advances past a quoted literal or identifier starting at i, or
// past one other byte.
func skipToken(s string, i int) int {
	var closer byte
	switch s[i] {
	case '\'', '"', '`':
		closer = s[i]
	case '[':
		closer = ']'
	default:
		return i + 1
	}
	for j := i + 1; j < len(s); j++ {
		if s[j] == closer {
			if closer != ']' && j+1 < len(s) && s[j+1] == closer {
				j++ // doubled quote inside the literal
				continue
			}
			return j + 1
		}
	}
	return len(s)
}

// SQLite authorizer action codes (sqlite3.h) the messages single out.
const (
	actionPragma   = 19
	actionRead     = 20
	actionFunction = 31
)

// allowedFunctions is the whitelist of SQL functions a query may call: SQLite's
// core scalar, aggregate, window, date/time, math and JSON functions. Anything
// else (load_extension, fts3_tokenizer, …) is refused.
var allowedFunctions = setOf(
	// core scalar
	"abs", "char", "coalesce", "concat", "concat_ws", "format", "glob", "hex", "ifnull", "iif", "if",
	"instr", "length", "like", "likelihood", "likely", "lower", "ltrim", "max", "min", "nullif",
	"octet_length", "printf", "quote", "random", "randomblob", "replace", "round", "rtrim", "sign",
	"soundex", "sqlite_version", "substr", "substring", "trim", "typeof", "unhex", "unicode",
	"unlikely", "upper", "zeroblob", "changes", "total_changes", "last_insert_rowid",
	// aggregate
	"avg", "count", "group_concat", "string_agg", "sum", "total", "median", "percentile",
	"percentile_cont", "percentile_disc",
	// window
	"row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag", "lead",
	"first_value", "last_value", "nth_value",
	// date and time
	"date", "time", "datetime", "julianday", "unixepoch", "strftime", "timediff",
	"current_date", "current_time", "current_timestamp",
	// math
	"acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "ceil", "ceiling", "cos", "cosh",
	"degrees", "exp", "floor", "ln", "log", "log10", "log2", "mod", "pi", "pow", "power", "radians",
	"sin", "sinh", "sqrt", "tan", "tanh", "trunc",
	// JSON
	"json", "jsonb", "json_array", "json_array_length", "json_extract", "json_insert", "json_object",
	"json_patch", "json_quote", "json_remove", "json_replace", "json_set", "json_type", "json_valid",
	"json_group_array", "json_group_object", "json_each", "json_tree", "json_error_position",
	"json_pretty", "->", "->>",
)

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// actionNames names the authorizer actions a guard refuses, for messages.
var actionNames = map[int]string{
	sqlite3.SQLITE_CREATE_INDEX: "CREATE INDEX", sqlite3.SQLITE_CREATE_TABLE: "CREATE TABLE",
	sqlite3.SQLITE_CREATE_TEMP_INDEX: "CREATE TEMP INDEX", sqlite3.SQLITE_CREATE_TEMP_TABLE: "CREATE TEMP TABLE",
	sqlite3.SQLITE_CREATE_TEMP_TRIGGER: "CREATE TEMP TRIGGER", sqlite3.SQLITE_CREATE_TEMP_VIEW: "CREATE TEMP VIEW",
	sqlite3.SQLITE_CREATE_TRIGGER: "CREATE TRIGGER", sqlite3.SQLITE_CREATE_VIEW: "CREATE VIEW",
	sqlite3.SQLITE_DELETE: "DELETE", sqlite3.SQLITE_DROP_INDEX: "DROP INDEX", sqlite3.SQLITE_DROP_TABLE: "DROP TABLE",
	sqlite3.SQLITE_DROP_TEMP_INDEX: "DROP TEMP INDEX", sqlite3.SQLITE_DROP_TEMP_TABLE: "DROP TEMP TABLE",
	sqlite3.SQLITE_DROP_TEMP_TRIGGER: "DROP TEMP TRIGGER", sqlite3.SQLITE_DROP_TEMP_VIEW: "DROP TEMP VIEW",
	sqlite3.SQLITE_DROP_TRIGGER: "DROP TRIGGER", sqlite3.SQLITE_DROP_VIEW: "DROP VIEW", sqlite3.SQLITE_INSERT: "INSERT",
	sqlite3.SQLITE_PRAGMA: "PRAGMA", sqlite3.SQLITE_TRANSACTION: "transactions", sqlite3.SQLITE_UPDATE: "UPDATE",
	sqlite3.SQLITE_ATTACH: "ATTACH", sqlite3.SQLITE_DETACH: "DETACH", sqlite3.SQLITE_ALTER_TABLE: "ALTER TABLE",
	sqlite3.SQLITE_REINDEX: "REINDEX", sqlite3.SQLITE_ANALYZE: "ANALYZE", sqlite3.SQLITE_CREATE_VTABLE: "CREATE VIRTUAL TABLE",
	sqlite3.SQLITE_DROP_VTABLE: "DROP VIRTUAL TABLE", sqlite3.SQLITE_SAVEPOINT: "SAVEPOINT",
}

// The authorizer itself is gs_authorize in conn.go, in C: it allows reads,
// SELECT, recursive CTEs and the functions of allowedFunctions, refuses
// reads of SQLite's own tables and virtual tables that list the schema or
// its storage (sqlite_schema and its aliases sqlite_master,
// sqlite_temp_master and sqlite_temp_schema, sqlite_stat*, sqlite_sequence,
// sqlite_dbpage, dbstat: the agent learns the schema only through
// DESCRIBE), and refuses every other action; refusal turns the first
// refusal into the agent's message.

// writeKeywords are the first keywords of SQLite's other statements, which
// the guard refuses because the database is read-only.
var writeKeywords = strings.Fields(`ALTER ANALYZE ATTACH BEGIN COMMIT CREATE DELETE DETACH DROP END EXPLAIN INSERT
PRAGMA REINDEX RELEASE REPLACE ROLLBACK SAVEPOINT UPDATE UPSERT VACUUM VALUES`)

// nearestKeyword returns the keyword of keywords within two edits of word
// (upper case), the nearest first; "" when none is.
func nearestKeyword(word string, keywords ...string) string {
	best, bestD := "", 3
	for _, k := range keywords {
		if d := editDistance(word, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
