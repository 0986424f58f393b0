package answer

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// The natural forms Check accepts beyond the main rules, where the meaning
// is not in doubt:
//
//   - JSON: a value, {"answer": value}, an array of items, an array of rows
//     (arrays, or objects whose keys name the columns);
//   - numbers with currency signs or codes ("$19,500", "19,500 USD"), spaces
//     as thousands separators ("4 141"), magnitudes ("19.5k", "1.2 million"),
//     or in words ("six", "twenty-one", "none" and "no" for 0);
//   - units and short sentences around one answer: "6 singers", "There are 6
//     singers.", "The airline is United Airlines." — accepted when every
//     other word appears in the question (Expected.Question) or is a
//     function word (functionWords); without the question, never;
//   - dates in common formats compared as dates ("2007-09-24", "September
//     24, 2007", "24 September 2007", "9/24/2007", ISO with a time);
//     day/month/year only where the day is over 12 (else the US month/day
//     reading alone);
//   - NULL written as None, N/A, null, nil or (in a table cell) nothing;
//   - a number for a TEXT gold that holds a number ("9.0" for '9');
//   - lists joined with "and" or "&" (Oxford comma too);
//   - table columns in another order, when the rows match under that order.

// functionWords may surround an answer in a sentence.
var functionWords = map[string]bool{
	"a": true, "an": true, "the": true, "there": true, "is": true, "are": true, "was": true, "were": true,
	"in": true, "of": true, "answer": true, "it": true, "they": true, "has": true, "have": true,
	"had": true, "with": true, "for": true, "s": true, "its": true, "their": true, "be": true, "by": true,
	"exactly": true, "only": true, "all": true, "and": true, "to": true, "on": true, "at": true,
	"that": true, "which": true, "who": true, "whose": true, "these": true, "those": true,
}

// nullWords are ways of writing SQL NULL.
var nullWords = map[string]bool{"null": true, "none": true, "n/a": true, "na": true, "nil": true, "(null)": true, "<null>": true}

// natural reports whether p (cleaned by Normalize) is a correct answer in one
// of the natural forms above, or states the gold's values in prose (prose.go).
func (e Expected) natural(p string) bool {
	return e.naturalForm(p) || e.statesGold(p)
}

// naturalForm reports whether p is a correct answer in one of the natural
// forms above.
func (e Expected) naturalForm(p string) bool {
	if alt, ok := fromJSON(p); ok && alt != p {
		if e.Check(alt) {
			return true
		}
	}
	switch e.Type {
	case Integer, Float:
		g, ok := parseNumber(e.Text)
		if !ok {
			return false
		}
		if e.Type == Float && g != math.Trunc(g) { // an approximate value is what the 1 % tolerance is for
			p = approximately.ReplaceAllString(p, "")
		}
		for _, v := range e.numbersIn(p) {
			if e.Type == Integer && v == math.Round(v) && v == math.Round(g) ||
				e.Type == Float && closeTo(v, g) {
				return true
			}
		}
		return false
	case List:
		gold := goldItems(e.Text, e.Rows)
		if rest, ok := e.afterLeadIn(p); ok {
			p = trimSentenceEnd(rest)
		}
		for _, alt := range andSplits(p) {
			if items := splitItems(alt); sameItems(items, gold) && e.inOrder(items, gold) {
				return true
			}
		}
		return false
	case Table:
		return e.permutedColumns(p)
	}
	// String (and anything else).
	g := strings.TrimSpace(e.Text)
	if isGoldNull(e) {
		return nullWords[foldText(p)]
	}
	if gv, ok := parseNumber(g); ok {
		if v, ok := parseNumber(p); ok && v == gv {
			return true
		}
	}
	if gd, ok := parseDate(g); ok {
		if pd, ok := parseDate(trimSentenceEnd(p)); ok && pd.Equal(gd) {
			return true
		}
	}
	return e.inSentence(p, g)
}

// isGoldNull reports whether the gold answer is one SQL NULL.
func isGoldNull(e Expected) bool {
	if e.Rows != nil {
		return len(e.Rows) == 1 && len(e.Rows[0]) == 1 && e.Rows[0][0] == nil
	}
	return e.Text == "NULL"
}

// numbersIn reads p as one number, in any of the natural forms, alone or
// with words around it that the unit rule allows.
func (e Expected) numbersIn(p string) []float64 {
	p = trimSentenceEnd(p)
	if v, ok := readNumber(p); ok {
		return []float64{v}
	}
	allowed := e.questionWords()
	if allowed == nil {
		return nil // no word may surround an answer
	}
	// One number among words: every other word must be allowed.
	words := strings.Fields(p)
	var found []float64
	for i := range words {
		for j := i + 1; j <= len(words) && j <= i+4; j++ {
			v, ok := readNumber(strings.Trim(strings.Join(words[i:j], " "), ",;:"))
			if ok && allowed.allow(append(slices.Clone(words[:i]), words[j:]...)) {
				found = append(found, v)
			}
		}
	}
	if len(found) > 0 && !allEqual(found) {
		return nil // several numbers: not one answer
	}
	return found
}

// readNumber reads s as one number in figures (currency, spaces,
// magnitudes allowed) or in words.
func readNumber(s string) (float64, bool) {
	if v, ok := parseLooseNumber(s); ok {
		return v, true
	}
	return parseNumberWords(foldText(s))
}

func allEqual(vs []float64) bool {
	for _, v := range vs[1:] {
		if v != vs[0] {
			return false
		}
	}
	return true
}

// wordSet is the words that may surround an answer besides functionWords:
// the question's, each also without a trailing "s".
type wordSet map[string]bool

// questionWords is the question's wordSet, nil without a question.
func (e Expected) questionWords() wordSet {
	if strings.TrimSpace(e.Question) == "" {
		return nil
	}
	q := wordSet{}
	for _, w := range wordsOf(e.Question) {
		q[w], q[strings.TrimSuffix(w, "s")] = true, true
	}
	return q
}

// allow reports whether words may surround an answer: each is a function
// word or in q (a trailing "s" aside), and none holds a digit. A nil set
// allows nothing.
func (q wordSet) allow(words []string) bool {
	if q == nil {
		return false
	}
	for _, w := range words {
		if strings.IndexFunc(w, unicode.IsDigit) >= 0 {
			return false
		}
		for _, part := range wordsOf(w) {
			if !functionWords[part] && !q[part] && !q[strings.TrimSuffix(part, "s")] {
				return false
			}
		}
	}
	return true
}

// wordsOf lower-cases s and splits it into words of letters.
func wordsOf(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) })
}

// inSentence reports whether p is a short sentence that states gold: gold at
// its end (or start), every other word allowed by the unit rule.
func (e Expected) inSentence(p, gold string) bool {
	p, g := foldText(trimSentenceEnd(p)), foldText(gold)
	if g == "" || p == g {
		return false
	}
	var rest string
	switch {
	case strings.HasSuffix(p, " "+g):
		rest = strings.TrimSuffix(p, " "+g)
	case strings.HasPrefix(p, g+" "):
		rest = strings.TrimPrefix(p, g+" ")
	default:
		return false
	}
	rest = strings.TrimSuffix(strings.TrimSpace(rest), ":")
	return rest != "" && e.questionWords().allow(strings.Fields(rest))
}

// leadIn is the verb or colon that ends a sentence's lead-in to a list.
var leadIn = regexp.MustCompile(`(?i)(\s+(are|is|were|was|include|includes)\s+|:\s*)`)

// afterLeadIn returns what follows a lead-in made of allowed words ("The
// cities are Oslo, Lima and Pune." → "Oslo, Lima and Pune.").
func (e Expected) afterLeadIn(p string) (string, bool) {
	loc := leadIn.FindStringIndex(p)
	if loc == nil || loc[0] == 0 {
		return "", false
	}
	if !e.questionWords().allow(strings.Fields(p[:loc[0]])) {
		return "", false
	}
	return p[loc[1]:], true
}

// trimSentenceEnd drops a final period or exclamation mark.
func trimSentenceEnd(s string) string {
	s = strings.TrimSpace(s)
	return strings.TrimSpace(strings.TrimRight(s, ".!"))
}

var (
	approximately = regexp.MustCompile(`(?i)^(~|≈|about\s+|approximately\s+|approx\.?\s+|around\s+|roughly\s+)`)
	currencyCode  = regexp.MustCompile(`(?i)^(usd|eur|gbp|jpy|cad|aud|chf|cny|inr)\s*|\s*(usd|eur|gbp|jpy|cad|aud|chf|cny|inr|dollars?|euros?|pounds?)$`)
	spacedDigits  = regexp.MustCompile(`^[+-]?\d{1,3}([  ]\d{3})+(\.\d+)?$`)
	magnitude     = regexp.MustCompile(`(?i)^([+-]?\d+(?:\.\d+)?)\s*(k|thousand|m|mn|million|b|bn|billion)$`)
)

var magnitudes = map[string]float64{"k": 1e3, "thousand": 1e3, "m": 1e6, "mn": 1e6, "million": 1e6, "b": 1e9, "bn": 1e9, "billion": 1e9}

// parseLooseNumber reads a number with a currency sign or code, spaces as
// thousands separators, or a magnitude.
func parseLooseNumber(s string) (float64, bool) {
	if strings.IndexFunc(s, unicode.IsDigit) < 0 {
		return 0, false
	}
	s = strings.TrimSpace(s)
	neg := false
	if strings.HasPrefix(s, "-") {
		neg, s = true, strings.TrimSpace(s[1:])
	}
	s = strings.TrimLeft(s, "$€£¥")
	s = strings.TrimSpace(currencyCode.ReplaceAllString(s, ""))
	s = strings.TrimRight(s, "$€£¥")
	if spacedDigits.MatchString(s) {
		s = strings.NewReplacer(" ", "", " ", "").Replace(s)
	}
	v, ok := parseNumber(s)
	if !ok {
		m := magnitude.FindStringSubmatch(s)
		if m == nil {
			return 0, false
		}
		f, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			return 0, false
		}
		v, ok = f*magnitudes[strings.ToLower(m[2])], true
	}
	if neg {
		v = -v
	}
	return v, ok
}

var smallNumbers = map[string]float64{
	"zero": 0, "none": 0, "no": 0, "nothing": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
	"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
	"fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30,
	"forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}

// parseNumberWords reads a whole number written in English words: "six",
// "twenty-one", "one hundred and five", "two thousand three hundred"; "none"
// and "no" are 0.
func parseNumberWords(s string) (float64, bool) {
	words := strings.Fields(strings.ReplaceAll(s, "-", " "))
	if len(words) == 0 {
		return 0, false
	}
	total, part, seen := 0.0, 0.0, false
	for _, w := range words {
		switch {
		case w == "and" && seen:
		case w == "hundred" && seen:
			part *= 100
		case (w == "thousand" || w == "million" || w == "billion") && seen:
			total += part * magnitudes[w]
			part = 0
		default:
			v, ok := smallNumbers[w]
			if !ok {
				return 0, false
			}
			part += v
			seen = true
		}
	}
	return total + part, seen
}

// dateLayouts are the date forms compared as dates.
var dateLayouts = []string{
	"2006-01-02", "2006-01-02T15:04:05", "2006-01-02T15:04:05Z07:00", "2006-01-02 15:04:05", "2006-01-02 15:04",
	"2006/01/02", "January 2, 2006", "January 2 2006", "Jan 2, 2006", "Jan 2 2006", "2 January 2006",
	"2 Jan 2006", "January 2nd, 2006", "1/2/2006", "01/02/2006", "Monday, January 2, 2006", "Monday January 2 2006",
	"2 January 2006 15:04:05", "2 January 2006 15:04", "January 2 2006 15:04:05", "January 2 2006 15:04",
	"2 Jan 2006 15:04:05", "Jan 2 2006 15:04:05", "January 2 2006 3:04:05 PM", "2 January 2006 3:04:05 PM",
	"January 2 2006 3:04 PM", "2 January 2006 3:04 PM", "2006-01-02 3:04:05 PM", "1/2/2006 15:04:05", "1/2/2006 3:04:05 PM",
	"Monday January 2 2006 15:04:05", "Monday January 2 2006 3:04:05 PM", "Monday 2 January 2006", "Jan 2 2006 3:04:05 PM",
}

var andSeparator = regexp.MustCompile(`(?i),?\s+(and|&)\s+`)

var ordinalSuffix = regexp.MustCompile(`(?i)(\d)(st|nd|rd|th)\b`)

// parseDate reads s in one of dateLayouts (day-first d/m/y too when the day
// is over 12), as a date and time.
func parseDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(ordinalSuffix.ReplaceAllString(s, "$1"))
	if len(s) < 8 || strings.IndexFunc(s, unicode.IsDigit) < 0 {
		return time.Time{}, false
	}
	for _, l := range dateLayouts {
		if t, err := time.Parse(strings.ReplaceAll(l, "2nd", "2"), s); err == nil {
			return t.UTC(), true
		}
	}
	if t, err := time.Parse("2/1/2006", s); err == nil && t.Day() > 12 {
		return t, true
	}
	return time.Time{}, false
}

// andSplits are p with its last "and"/"&" (and then every one) read as a
// list separator; the first is p itself.
func andSplits(p string) []string {
	out := []string{p}
	locs := andSeparator.FindAllStringIndex(p, -1)
	if len(locs) == 0 {
		return out
	}
	last := locs[len(locs)-1]
	out = append(out, p[:last[0]]+", "+p[last[1]:])
	if len(locs) > 1 {
		out = append(out, andSeparator.ReplaceAllString(p, ", "))
	}
	return out
}

// inOrder reports, for an Ordered answer, whether pred lists the gold items
// in the gold order (always true otherwise).
func (e Expected) inOrder(pred, gold []cell) bool {
	if !e.Ordered {
		return true
	}
	pred, gold = dedupe(pred), dedupe(gold)
	if len(pred) != len(gold) {
		return false
	}
	for i := range gold {
		if !gold[i].matches(pred[i]) {
			return false
		}
	}
	return true
}

// rowsInOrder reports, for an Ordered answer, whether pred has the gold rows
// in the gold order.
func (e Expected) rowsInOrder(pred, gold [][]cell) bool {
	if !e.Ordered {
		return true
	}
	if len(pred) == len(gold)+1 {
		pred = pred[1:] // a header line (sameRows decided it is one)
	}
	if len(pred) != len(gold) {
		return false
	}
	for i := range gold {
		if !rowMatches(pred[i], gold[i]) {
			return false
		}
	}
	return true
}

// permutedColumns reports whether p's rows match the gold rows with its
// columns in another order (up to 6 columns).
func (e Expected) permutedColumns(p string) bool {
	pred, gold := parseTable(p), goldTable(e.Text, e.Rows)
	if len(gold) == 0 || len(gold[0]) < 2 || len(gold[0]) > 6 {
		return false
	}
	n := len(gold[0])
	for _, r := range pred {
		if len(r) != n {
			return false
		}
	}
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	numeric := numericColumns(gold)
	// The identity is the main rule's; the others follow it.
	for nextPermutation(perm) {
		permuted := make([][]cell, len(pred))
		for i, r := range pred {
			permuted[i] = make([]cell, n)
			for k := range n {
				permuted[i][perm[k]] = r[k]
			}
		}
		// Which of two numbers is which cannot be told from the numbers:
		// columns of numbers keep their order unless a header names them.
		headed := len(pred) == len(gold)+1
		if !headed && !keepsOrder(perm, numeric) {
			continue
		}
		if sameRows(permuted, gold, e.Columns) && e.rowsInOrder(permuted, gold) {
			return true
		}
	}
	return false
}

// numericColumns reports, per column, whether all gold cells in it are numbers.
func numericColumns(gold [][]cell) []bool {
	numeric := make([]bool, len(gold[0]))
	for k := range numeric {
		numeric[k] = true
		for _, row := range gold {
			if k >= len(row) || !row[k].isNum {
				numeric[k] = false
			}
		}
	}
	return numeric
}

// keepsOrder reports whether perm (predicted column k → gold column
// perm[k]) keeps the order of the numeric columns.
func keepsOrder(perm []int, numeric []bool) bool {
	for k := range perm {
		for k2 := k + 1; k2 < len(perm); k2++ {
			if numeric[perm[k]] && numeric[perm[k2]] && perm[k] > perm[k2] {
				return false
			}
		}
	}
	return true
}

// nextPermutation steps perm to the next permutation in lexicographic order;
// false after the last.
func nextPermutation(perm []int) bool {
	i := len(perm) - 2
	for i >= 0 && perm[i] >= perm[i+1] {
		i--
	}
	if i < 0 {
		return false
	}
	j := len(perm) - 1
	for perm[j] <= perm[i] {
		j--
	}
	perm[i], perm[j] = perm[j], perm[i]
	slices.Reverse(perm[i+1:])
	return true
}

// fromJSON renders a JSON answer as the plain text the main rules read: a
// value, the value of {"answer": …}, items one per line, rows one per line
// with cells separated by " | " (the values of objects, by key).
func fromJSON(p string) (string, bool) {
	p = strings.TrimSpace(p)
	if p == "" || (p[0] != '[' && p[0] != '{') {
		return "", false
	}
	d := json.NewDecoder(bytes.NewReader([]byte(p)))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil || d.More() {
		return "", false
	}
	if m, ok := v.(map[string]any); ok && len(m) == 1 {
		for _, x := range m {
			v = x
		}
	}
	if hasWideObject(v) {
		// Objects of several keys are rows keyed by column, or values
		// keyed by value ({"2014": 2, "2015": 4}): the prose reader reads
		// them with their keys; in an order of keys alone, which value
		// is which would be lost.
		return "", false
	}
	switch x := v.(type) {
	case []any:
		lines := make([]string, 0, len(x))
		for _, item := range x {
			switch r := item.(type) {
			case []any:
				cells := make([]string, len(r))
				for k, c := range r {
					cells[k] = jsonScalar(c)
				}
				lines = append(lines, strings.Join(cells, CellSeparator))
			case map[string]any:
				lines = append(lines, objectRow(r))
			default:
				lines = append(lines, jsonScalar(r))
			}
		}
		return strings.Join(lines, "\n"), true
	case map[string]any:
		return objectRow(x), true
	default:
		return jsonScalar(x), true
	}
}

// hasWideObject reports whether v is, or is an array holding, an object of
// more than one key.
func hasWideObject(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		return len(x) > 1
	case []any:
		for _, item := range x {
			if m, ok := item.(map[string]any); ok && len(m) > 1 {
				return true
			}
		}
	}
	return false
}

// objectRow is an object's values as one row, in the order of its keys.
func objectRow(m map[string]any) string {
	keys := slices.Sorted(maps.Keys(m))
	cells := make([]string, len(keys))
	for i, k := range keys {
		cells[i] = jsonScalar(m[k])
	}
	return strings.Join(cells, CellSeparator)
}

// jsonScalar renders a JSON scalar (null as NULL).
func jsonScalar(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		if x {
			return "1"
		}
		return "0"
	}
	b, _ := json.Marshal(v)
	return string(b)
}
