package answer

import (
	"math"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Prose: a prediction read as the values it states.
//
// Models write result tables in prose ("Maximum 29, minimum 0", "Love
// (2016)", "Stark's Park has 1 concert, Somerset Park has 2"), as JSON
// objects keyed by column, or as sentences that repeat the question's
// numbers ("There are 6 concerts in 2014 or 2015."). statesGold reads such
// a prediction as a sequence of values — the gold's text values found as
// written, numbers, dates, NULL words — among words that cannot change its
// meaning, and accepts it when the values are exactly the gold's cells, row
// after row.
//
// A word may stand beside the values only when it is a function word, a
// word of the question or of a column's name (compared by stem: "released"
// for "release"), a label (an aggregate's name: "average" for avg(age)), a
// unit that does not contradict the question's ("13.5 minutes" is refused
// when it asks in seconds), or a hedge before an approximate float. A number
// that is not a gold value must appear in the question; a phrase copied from
// the question is allowed whole ("students older than 20"), even when it
// holds a gold value ("2014 or 2015" states nothing). A label binds the one
// value of its clause to its column, and the value must be that column's;
// unlabelled numbers keep the gold's column order (which of "24 | 10.5" is
// the average cannot be told), while text values, which identify
// themselves, may come in any order.

// maxProseBytes bounds the predictions read as prose (a verifier's cost).
const maxProseBytes = 4096

// tokenKind is what a token of a prediction is.
type tokenKind int

const (
	tokWord   tokenKind = iota // a word
	tokNumber                  // a number (a value when it is the gold's)
	tokText                    // one of the gold's text values, as written
	tokDate                    // a date or date and time
	tokNull                    // a NULL word, where the gold has NULL
)

// proseToken is one token of a prediction read as prose.
type proseToken struct {
	kind   tokenKind
	text   string   // lower-cased, as written
	words  []string // the words it is made of, to compare with the question
	cell   cell     // the value, for numbers, texts, dates and NULL
	seg    int      // the clause it is in
	filler bool     // part of a phrase copied from the question
}

// isValue reports whether t can be a value of the answer.
func (t proseToken) isValue() bool { return t.kind != tokWord }

// proseReader reads predictions against one gold answer.
type proseReader struct {
	e          Expected
	gold       [][]cell
	texts      []goldText     // the gold's text values, longest first
	numeric    []bool         // per column: the gold's cells are numbers
	labels     map[string]int // a stem that names one column → that column; -1: several
	words      map[string]bool
	qnums      map[string]bool // numbers as written in the question
	qwords     []string        // the question's words and numbers, in order
	hasNull    bool
	hasDate    bool
	approx     bool            // the gold holds a float that is not a whole number
	zeroGold   bool            // the gold is the one number 0: "no", "none" state it
	counted    []string        // the stems of what the question counts ("how many department heads"), or none
	fractions  bool            // every number of the gold is from 0 to 1: "87.5%" is 0.875
	namedUnits map[string]bool // the units the question or the columns name ("second"), and the usual units of the quantities they name ("degree")
	namedKinds map[string]bool // the kinds of unit they name ("time")
	colTokens  map[string]bool // the tokens of the column names, digits too ("t1")
	ages       bool            // the question or the columns speak of age
	scale      float64         // a magnitude the question counts in ("in millions"): 1e6, or 0
}

// statesGold reports whether p, read as prose, states exactly the gold's
// values (see above).
func (e Expected) statesGold(p string) bool {
	if len(p) > maxProseBytes || strings.TrimSpace(e.Question) == "" {
		return false // without the question, no word may surround an answer
	}
	gold := goldTable(e.Text, e.Rows)
	if len(gold) == 0 || len(gold[0]) == 0 || len(gold[0]) > 6 {
		return false
	}
	if e.statesRows(p, gold) {
		return true
	}
	// A text of names joined by commas ("Steven Melching, Michael
	// Jelenic") may be stated as a list of them.
	if len(gold) == 1 && len(gold[0]) == 1 && !gold[0][0].isNum && strings.Contains(e.Text, ", ") {
		var parts [][]cell
		for _, part := range strings.Split(e.Text, ", ") {
			if len(strings.Fields(part)) < 2 {
				return false
			}
			parts = append(parts, []cell{textCell(part)})
		}
		return e.statesRows(p, parts)
	}
	return false
}

// statesRows reports whether p states the rows gold.
func (e Expected) statesRows(p string, gold [][]cell) bool {
	r := newProseReader(e, gold)
	toks := r.tokenize(normalizeProse(p))
	r.markQuestionPhrases(toks)
	values, ok := r.values(toks)
	return ok && r.matches(values)
}

func newProseReader(e Expected, gold [][]cell) *proseReader {
	r := &proseReader{e: e, gold: gold, words: map[string]bool{}, qnums: map[string]bool{}}
	r.readGold()
	r.readColumns()
	r.readQuestion()
	return r
}

// readGold notes what the gold's cells are: its texts (and whether they
// hold dates), which columns are numbers, NULL, approximate floats.
func (r *proseReader) readGold() {
	gold := r.gold
	seen := map[string]bool{}
	r.numeric = make([]bool, len(gold[0]))
	for k := range r.numeric {
		r.numeric[k] = true
	}
	r.fractions = true
	for _, row := range gold {
		for k, c := range row {
			if k < len(r.numeric) && !c.isNum {
				r.numeric[k] = false
			}
			r.approx = r.approx || (c.isNum && !c.integer && c.num != math.Trunc(c.num))
			r.fractions = r.fractions && (!c.isNum || c.num >= 0 && c.num <= 1)
			switch {
			case c.null:
				r.hasNull = true
			case !c.isNum && c.text != "" && !seen[c.text]:
				seen[c.text] = true
				r.texts = append(r.texts, goldText{c.text, wordPattern.FindAllString(c.text, -1)})
				if _, ok := parseDate(c.text); ok {
					r.hasDate = true
				}
			}
		}
	}
	slices.SortFunc(r.texts, func(a, b goldText) int { return len(b.text) - len(a.text) })
	r.zeroGold = len(gold) == 1 && len(gold[0]) == 1 && gold[0][0].isNum && gold[0][0].num == 0
}

// readColumns notes what the column names say (with the question): their
// labels, years that identify themselves, units, age, and their tokens.
func (r *proseReader) readColumns() {
	e := r.e
	r.labels = labelColumns(e.Columns)
	for k := range r.numeric {
		if r.numeric[k] && yearColumn(r.gold, e.Columns, k) {
			r.numeric[k] = false // years tell themselves from counts: "2 in 2002"
		}
	}
	r.colTokens, r.namedUnits, r.namedKinds = map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, w := range wordsOf(e.Question + " " + strings.Join(e.Columns, " ")) {
		r.ages = r.ages || ageQuestionWords[w]
		if u, ok := units[w]; ok {
			if w != "in" && w != "s" && w != "m" && w != "g" && w != "h" {
				r.namedUnits[u[1]] = true
			}
			if len(w) > 2 {
				r.namedKinds[u[0]] = true
			}
		}
		if unit, ok := unitKindWords[w]; ok {
			r.namedUnits[unit] = true
		}
	}
	for _, c := range e.Columns {
		for _, w := range strings.FieldsFunc(strings.ToLower(c), func(c rune) bool { return !isWordRune(c) }) {
			r.colTokens[w] = true
		}
	}
}

// ageQuestionWords say that a question or a column is about age.
var ageQuestionWords = map[string]bool{"age": true, "ages": true, "old": true, "older": true, "oldest": true,
	"young": true, "younger": true, "youngest": true}

// readQuestion notes the question's words (by stem), numbers, the
// magnitude it counts in, what it counts, and the superlatives it allows.
func (r *proseReader) readQuestion() {
	e := r.e
	if m := countedNoun.FindStringSubmatch(strings.ToLower(e.Question)); m != nil && len(r.gold) == 1 && len(r.gold[0]) == 1 {
		r.counted = []string{stem(m[1])}
		if w := m[2]; w != "" && strings.HasSuffix(w, "s") && !functionWords[w] {
			r.counted = append(r.counted, stem(w)) // "department heads"
		}
	}
	qwords := questionTokens.FindAllString(strings.ToLower(e.Question), -1)
	for i, w := range qwords {
		r.qwords = append(r.qwords, w)
		switch {
		case w[0] >= '0' && w[0] <= '9':
			r.qnums[w] = true
		case aggregateWords[w] && r.isLabel(w) && i+1 < len(qwords) && r.isLabel(qwords[i+1]):
			// "the last name": a word of a column's name here, not a
			// superlative the answer may repeat ("registered last").
		case !negations[w]:
			r.words[stem(strings.TrimSuffix(w, "'s"))] = true
		}
		if m, ok := countingScales[w]; ok {
			r.scale = m
		}
	}
	// A superlative of the question or of an aggregate column allows the
	// other words of its group ("largest" where it asks for the highest).
	aggregates := map[string]bool{}
	for _, c := range e.Columns {
		if m := aggregateColumn.FindStringSubmatch(c); m != nil {
			for _, w := range aggregateLabels[strings.ToLower(m[1])] {
				aggregates[w] = true
			}
		}
	}
	for _, group := range superlatives {
		used := false
		for _, w := range group {
			used = used || r.words[stem(w)] || aggregates[w]
		}
		for _, w := range group {
			if used {
				r.words[stem(w)] = true
			}
		}
	}
}

// countingScales are the magnitudes a question may count in ("how many
// viewers, in millions").
var countingScales = map[string]float64{"thousands": 1e3, "millions": 1e6, "billions": 1e9}

// yearColumn reports whether column k of gold holds years that cannot be
// taken for another numeric column's values: its name says year, its values
// are whole numbers from 1000 to 2999, and no other column's are.
func yearColumn(gold [][]cell, columns []string, k int) bool {
	if k >= len(columns) || !strings.Contains(strings.ToLower(columns[k]), "year") {
		return false
	}
	isYear := func(c cell) bool { return c.isNum && c.num == math.Trunc(c.num) && c.num >= 1000 && c.num < 3000 }
	for _, row := range gold {
		for j, c := range row {
			if (j == k) != isYear(c) && (j == k || c.isNum) {
				return false
			}
		}
	}
	return true
}

// isQuestionWord reports whether w is a word of the question: the same
// stem, or stems of six letters or more of which one starts the other
// ("departures" for "depart").
func (r *proseReader) isQuestionWord(w string) bool {
	st := stem(w)
	if r.words[st] {
		return true
	}
	if len(st) < 6 {
		return false
	}
	for q := range r.words {
		if len(q) >= 6 && (strings.HasPrefix(st, q) || strings.HasPrefix(q, st)) {
			return true
		}
	}
	return false
}

// isLabel reports whether w names a column of the gold (alone or with
// other columns).
func (r *proseReader) isLabel(w string) bool {
	_, ok := r.labels[stem(w)]
	return ok
}

// aggregateWords are the words of aggregates and superlatives: beside an
// answer they claim what it is, so they must be the question's or name one
// of the gold's columns ("the total earnings" is not their average).
var aggregateWords = map[string]bool{}

func init() {
	for _, group := range superlatives {
		for _, w := range group {
			aggregateWords[w] = true
		}
	}
	for _, ws := range aggregateLabels {
		for _, w := range ws {
			aggregateWords[w] = true
		}
	}
	delete(aggregateWords, "number") // "the number of singers" names no aggregate
}

var questionTokens = regexp.MustCompile(`\d+(?:\.\d+)?|\p{L}+(?:'\p{L}+)*`)

// negations never stand beside an answer, even when the question has them.
var negations = map[string]bool{"not": true, "no": true, "nor": true, "or": true, "never": true, "except": true,
	"without": true, "neither": true, "either": true, "but": true, "maybe": true, "perhaps": true, "unknown": true}

// fillerWords may stand beside the values of any answer: pronouns,
// prepositions and verbs that state without qualifying.
var fillerWords = map[string]bool{
	"he": true, "she": true, "his": true, "her": true, "them": true, "from": true, "as": true, "per": true, "each": true,
	"following": true, "result": true, "value": true, "values": true, "respectively": true, "here": true, "list": true,
	"come": true, "comes": true, "came": true, "held": true, "located": true, "belong": true, "belongs": true,
	"includes": true, "include": true, "named": true, "called": true, "recorded": true, "listed": true,
	"we": true, "database": true, "table": true, "records": true, "record": true, "rows": true, "row": true,
	"entries": true, "entry": true, "data": true, "both": true, "across": true, "among": true, "people": true,
	"contains": true, "contain": true, "query": true, "returns": true, "return": true, "returned": true,
	"results": true, "output": true,
}

// qualifiers may come before the first value only ("only 2", "exactly
// 6"); after a value they restrict a claim about it ("Seychelles speaks
// only French").
var qualifiers = map[string]bool{"only": true, "exactly": true, "just": true}

// ageWords may follow an age when the question or the columns speak of
// age ("25 years old", "aged 25").
var ageWords = map[string]bool{"year": true, "years": true, "old": true, "aged": true, "age": true, "yrs": true}

// superlatives are groups of words of one meaning; a word of a group may
// stand beside an answer when the question or a column label uses the group.
var superlatives = [][]string{
	{"max", "maximum", "highest", "largest", "greatest", "biggest", "most", "top", "heaviest", "longest", "richest"},
	{"min", "minimum", "lowest", "smallest", "least", "fewest", "shortest", "lightest", "poorest"},
	{"earliest", "first", "oldest"},
	{"latest", "last", "newest", "youngest"},
	{"avg", "average", "mean"},
	{"sum", "total"},
}

// lemmas are irregular forms of words questions use, mapped to one form
// ("born" for "birth", "taught" for "teach").
var lemmas = map[string]string{
	"born": "birth", "died": "death", "dead": "death", "sold": "sale", "sell": "sale", "bought": "buy",
	"made": "make", "built": "build", "won": "win", "winner": "win", "lost": "lose", "loser": "lose",
	"taught": "teach", "teacher": "teach", "written": "write", "wrote": "write", "writer": "write",
	"spoken": "speak", "spoke": "speak", "speaks": "speak", "held": "hold", "gave": "give", "given": "give",
	"got": "get", "began": "begin", "begun": "begin", "ran": "run", "paid": "pay", "weigh": "weight",
	"weighs": "weight", "heavy": "weight", "located": "location", "live": "life", "lives": "life",
}

// hedges may stand before an approximate float.
var hedges = map[string]bool{"approximately": true, "approx": true, "about": true, "around": true, "roughly": true,
	"nearly": true, "almost": true, "circa": true, "average": true, "on": true}

// units are unit words, each with its kind and the unit it names ("secs"
// is "second", a time). A unit may follow a value only when the question or
// the columns name that unit ("13.5 s" where it asks in seconds): a unit it
// does not name is a claim the checker cannot verify ("50 months" for a
// life expectancy).
var units = map[string][2]string{}

func init() {
	for kind, byUnit := range map[string]map[string][]string{
		"time": {"millisecond": {"ms", "msec", "millisecond", "milliseconds"}, "second": {"s", "sec", "secs", "second", "seconds"}, "minute": {"min", "mins", "minute", "minutes"},
			"hour": {"h", "hr", "hrs", "hour", "hours"}, "day": {"day", "days"}, "week": {"week", "weeks"},
			"month": {"month", "months"}},
		"mass": {"kilogram": {"kg", "kgs", "kilogram", "kilograms"}, "gram": {"g", "gram", "grams"},
			"pound": {"lb", "lbs", "pound", "pounds"}, "ton": {"ton", "tons", "tonne", "tonnes"}},
		"length": {"kilometre": {"km", "kilometer", "kilometers", "kilometre", "kilometres"},
			"metre": {"m", "meter", "meters", "metre", "metres"}, "centimetre": {"cm"}, "millimetre": {"mm"},
			"mile": {"mile", "miles", "mi"}, "foot": {"ft", "foot", "feet"}, "inch": {"in", "inch", "inches"}},
		"temperature": {"degree": {"degree", "degrees"}, "celsius": {"celsius"}, "fahrenheit": {"fahrenheit"}},
		"share":       {"percent": {"percent", "pct", "percentage"}},
		"power":       {"horsepower": {"hp", "bhp", "horsepower"}},
	} {
		for unit, words := range byUnit {
			for _, w := range words {
				units[w] = [2]string{kind, unit}
			}
		}
	}
}

// aggregateLabels are the words that name an aggregate's column.
var aggregateLabels = map[string][]string{
	"avg":   {"avg", "average", "mean"},
	"min":   {"min", "minimum", "lowest", "smallest", "least", "fewest"},
	"max":   {"max", "maximum", "highest", "largest", "greatest", "biggest", "most"},
	"sum":   {"sum", "total"},
	"count": {"count", "number", "total"},
}

var aggregateColumn = regexp.MustCompile(`(?i)^\s*(avg|min|max|sum|count)\s*\((.*)\)\s*$`)

// columnLabels are the stems that name a column: the words of its name, and
// an aggregate's names ("average" for avg(age)).
func columnLabels(column string) []string {
	var out []string
	name := column
	if m := aggregateColumn.FindStringSubmatch(column); m != nil {
		for _, w := range aggregateLabels[strings.ToLower(m[1])] {
			out = append(out, stem(w))
		}
		name = m[2]
	}
	words := wordsOf(splitCamel(columnName(name)))
	if whole := wordsOf(columnName(name)); len(whole) < len(words) {
		words = append(words, whole...) // "LifeExpectancy": life, expectancy and lifeexpectancy
	}
	for _, w := range words {
		if !functionWords[w] {
			out = append(out, stem(w))
		}
	}
	return out
}

// splitCamel puts a space before each upper-case letter that follows a
// lower-case one ("ContId" → "Cont Id").
func splitCamel(s string) string {
	var b strings.Builder
	prev := ' '
	for _, c := range s {
		if unicode.IsUpper(c) && unicode.IsLower(prev) {
			b.WriteByte(' ')
		}
		b.WriteRune(c)
		prev = c
	}
	return b.String()
}

// stem maps an irregular form to its lemma and strips up to two common
// English suffixes, so that forms of a word compare equal ("released" and
// "release", "countries" and "country", "earnings" and "earn").
func stem(w string) string {
	if l, ok := lemmas[w]; ok {
		w = l
	}
	for range 2 {
		w = stemOnce(w)
	}
	return w
}

func stemOnce(w string) string {
	if strings.HasSuffix(w, "ies") && len(w) > 4 {
		return w[:len(w)-3] + "y"
	}
	for _, suf := range []string{"ing", "ed", "es", "s", "d", "e"} {
		if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 3 {
			return w[:len(w)-len(suf)]
		}
	}
	return w
}

var proseReplacer = strings.NewReplacer(
	"−", "-", "’", "'", "‘", "'", "«", " ", "»", " ", "‹", " ", "›", " ", "„", " ", "“", " ", "”", " ",
	"\"", " ", "`", " ", "*", " ", "_", " ", "°c", " degrees ", "℃", " degrees ", "°f", " degrees ", "°", " degrees ",
	"≈", " approximately ", "~", " approximately ", "\r", "",
)

// normalizeProse lower-cases p, unifies minus signs and apostrophes, drops
// quotes and Markdown emphasis, and removes list bullets and numbering.
func normalizeProse(p string) string {
	s := proseReplacer.Replace(strings.ToLower(p))
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = itemPrefix.ReplaceAllString(strings.TrimSpace(l), "")
	}
	return strings.Join(lines, "\n")
}

// segmentBreaks end a clause.
const segmentBreaks = "\n,;|()[]{}.!?—–/"

var proseNumber = regexp.MustCompile(`^[-+]?(?:(?:usd|eur|gbp|jpy|cad|aud|chf|cny|inr)\s?)?(?:[$€£¥]\s?)?(?:\d+(?:[,  ]\d{3})*(?:\.\d+)?|\.\d+)(?:\s?(?:k|mn|bn|thousand|million|billion)\b)?(?:\s?(?:usd|eur|gbp|jpy|cad|aud|chf|cny|inr|dollars?|euros?)\b)?(?:\s?%)?`)

// tokenize splits s into tokens: the gold's texts and dates first, then
// numbers, number words and words; other characters separate them, some
// ending a clause.
func (r *proseReader) tokenize(s string) []proseToken {
	var toks []proseToken
	seg := 0
	for i := 0; i < len(s); {
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == ' ' || c == '\t' || c == '\u00a0' {
			i += size
			continue
		}
		atWord := i == 0 || !isWordRune(lastRune(s[:i]))
		if atWord {
			if t, n, ok := r.valueAt(s[i:]); ok {
				t.seg = seg
				toks = append(toks, t)
				i += n
				continue
			}
		}
		switch {
		case isWordRune(c):
			j := i
			for j < len(s) {
				d, n := utf8.DecodeRuneInString(s[j:])
				if !isWordRune(d) && !(d == '\'' && j+n < len(s) && isWordRune(firstRune(s[j+n:]))) {
					break
				}
				j += n
			}
			w := s[i:j]
			if w == "and" {
				seg++
			}
			toks = append(toks, proseToken{kind: tokWord, text: w, words: []string{w}, seg: seg})
			i = j
		case c == '-' && (i+1 >= len(s) || s[i+1] == ' ' || s[i+1] == '-' || s[i+1] == '\n') && (i == 0 || s[i-1] == ' ' || s[i-1] == '-' || s[i-1] == '|'):
			seg++ // a dash between spaces, or a rule: "Park - 1", "|---|"
			i += size
		case c == '&' || strings.ContainsRune(segmentBreaks, c):
			seg++
			i += size
		default:
			i += size
		}
	}
	return toks
}

// valueAt reads a value at the start of s: a gold date or text, a number,
// a number in words or a NULL word; n is its length in bytes.
func (r *proseReader) valueAt(s string) (proseToken, int, bool) {
	if r.hasDate && mayStartDate(s) {
		if t, n, ok := dateAt(s); ok {
			return proseToken{kind: tokDate, text: s[:n], cell: cell{text: s[:n], dated: true, when: t}}, n, true
		}
	}
	for _, v := range r.texts {
		if n := wordsPrefix(s, v.words); n > 0 {
			return proseToken{kind: tokText, text: v.text, words: strings.Fields(v.text), cell: textCell(v.text)}, n, true
		}
	}
	if m := proseNumber.FindString(s); m != "" {
		if v, ok := parseLooseNumber(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(m), "%"))); ok {
			lit := strings.TrimSpace(m)
			if m := magnitudeOf(lit); r.scale > 0 && (m == r.scale || m == 0 && math.Abs(v) >= r.scale) {
				v /= r.scale // "5.96 million" or "5,960,000" where it asks in millions
			}
			if strings.HasSuffix(lit, "%") && r.fractions {
				v /= 100 // "87.5%" for .875
			}
			return proseToken{kind: tokNumber, text: lit, words: []string{digitsOf(lit)}, cell: cell{text: lit, num: v, isNum: true}}, len(m), true
		}
	}
	if t, n, ok := numberWordsAt(s); ok {
		return t, n, true
	}
	if r.zeroGold {
		for w := range zeroWords {
			if strings.HasPrefix(s, w) && (len(s) == len(w) || !isWordRune(firstRune(s[len(w):]))) {
				return proseToken{kind: tokNumber, text: w, words: []string{w}, cell: cell{text: w, isNum: true}}, len(w), true
			}
		}
	}
	if r.hasNull {
		for w := range nullWords {
			if strings.HasPrefix(s, w) && (len(s) == len(w) || !isWordRune(firstRune(s[len(w):]))) {
				return proseToken{kind: tokNull, text: w, words: []string{w}, cell: cell{text: "null"}}, len(w), true
			}
		}
	}
	return proseToken{}, 0, false
}

var wordPattern = regexp.MustCompile(`[\p{L}\p{N}]+(?:'[\p{L}\p{N}]+)*`)

// goldText is a text value of the gold, folded, and its words.
type goldText struct {
	text  string
	words []string
}

// wordsPrefix returns the length of the prefix of s that holds words, in
// order, with nothing but punctuation and white space between them ("4745
// Emerson Stravenue Suite 829\nSouth Garrettton" for "…Suite 829, South
// Garrettton"), and a plural "s" after a single word ("cats" for cat); 0
// when s does not start so.
func wordsPrefix(s string, words []string) int {
	if len(words) == 0 {
		return 0
	}
	i := 0
	for k, w := range words {
		if k > 0 {
			for i < len(s) && !isWordRune(firstRune(s[i:])) {
				_, n := utf8.DecodeRuneInString(s[i:])
				i += n
			}
		}
		if !strings.HasPrefix(s[i:], w) {
			return 0
		}
		i += len(w)
	}
	if len(words) == 1 && !unicode.IsDigit(lastRune(words[0])) {
		for _, plural := range []string{"es", "s"} {
			if strings.HasPrefix(s[i:], plural) && (i+len(plural) == len(s) || !isWordRune(firstRune(s[i+len(plural):]))) {
				return i + len(plural)
			}
		}
	}
	if i < len(s) && isWordRune(firstRune(s[i:])) {
		return 0
	}
	return i
}

// namesCounted reports whether the words at the start of toks name what the
// question counts: its whole phrase ("department heads") or its last noun
// ("heads"), not another word of it ("departments").
func (r *proseReader) namesCounted(toks []proseToken) bool {
	if stem(toks[0].text) == r.counted[len(r.counted)-1] {
		return true
	}
	for k, c := range r.counted {
		if k >= len(toks) || toks[k].kind != tokWord || stem(toks[k].text) != c {
			return false
		}
	}
	return true
}

// countedNoun finds what a question counts: "how many pets", "the
// number of people".
var countedNoun = regexp.MustCompile(`\b(?:how many|number of|count of)\s+(?:the\s+|distinct\s+|different\s+|unique\s+)?(\p{L}+)(?:\s+(\p{L}+))?`)

// currencyWords name currencies in questions and column names.
var currencyWords = map[string]string{"dollar": "usd", "dollars": "usd", "usd": "usd", "euro": "eur", "euros": "eur",
	"eur": "eur", "pound": "gbp", "pounds": "gbp", "gbp": "gbp", "sterling": "gbp", "yen": "jpy", "jpy": "jpy"}

// currencySigns are the currencies of signs and codes written with numbers.
var currencySigns = map[string]string{"$": "usd", "usd": "usd", "€": "eur", "eur": "eur", "£": "gbp", "gbp": "gbp",
	"¥": "jpy", "jpy": "jpy", "dollar": "usd", "dollars": "usd", "euro": "eur", "euros": "eur"}

// otherCurrency reports whether p writes an amount in a currency that the
// question and the columns do not name while they name others ("¥138" where
// it asks for prices in dollars, euros and pounds).
func (e Expected) otherCurrency(p string) bool {
	named := map[string]bool{}
	for _, w := range wordsOf(e.Question + " " + strings.Join(e.Columns, " ")) {
		if cur, ok := currencyWords[w]; ok {
			named[cur] = true
		}
	}
	if len(named) == 0 {
		return false
	}
	low := strings.ToLower(p)
	for sign, cur := range currencySigns {
		if !named[cur] && (len(sign) == 1 || !unicode.IsLetter(firstRune(sign)) || wordIn(low, sign)) && strings.Contains(low, sign) {
			return true
		}
	}
	return false
}

// wordIn reports whether w is a word of s.
func wordIn(s, w string) bool {
	for _, f := range strings.FieldsFunc(s, func(c rune) bool { return !unicode.IsLetter(c) }) {
		if f == w {
			return true
		}
	}
	return false
}

// magnitudeOf is the magnitude a number is written with ("1.2 million":
// 1e6), or 0.
func magnitudeOf(lit string) float64 {
	for _, f := range strings.Fields(strings.ToLower(lit)) {
		if m, ok := magnitudes[strings.TrimRight(f, ".")]; ok {
			return m
		}
	}
	if m := magnitude.FindStringSubmatch(lit); m != nil {
		return magnitudes[strings.ToLower(m[2])]
	}
	return 0
}

// numberWordsAt reads a whole number in words at the start of s ("six",
// "twenty-one"); the words for zero that are also ordinary words ("no",
// "none") are not read.
func numberWordsAt(s string) (proseToken, int, bool) {
	if end := strings.IndexFunc(s, func(c rune) bool { return !unicode.IsLetter(c) && c != ' ' && c != '-' }); end >= 0 {
		s = s[:end] // "three: Joe, …" reads "three"
	}
	fields := fieldSpans(s, 6)
	for n := len(fields); n >= 1; n-- {
		text := s[:fields[n-1][1]]
		words := strings.Fields(strings.ReplaceAll(text, "-", " "))
		if len(words) == 0 || words[len(words)-1] == "and" || !isWordRune(lastRune(text)) {
			continue
		}
		if v, ok := parseNumberWords(text); ok && !zeroWords[text] {
			return proseToken{kind: tokNumber, text: text, words: words, cell: cell{text: text, num: v, isNum: true}}, len(text), true
		}
	}
	return proseToken{}, 0, false
}

var zeroWords = map[string]bool{"no": true, "none": true, "nothing": true}

// fieldSpans returns the byte spans of the first (at most max) white-space
// separated fields of s.
func fieldSpans(s string, max int) [][2]int {
	var spans [][2]int
	i := 0
	for len(spans) < max {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) || s[i] == '\n' {
			break
		}
		j := i
		for j < len(s) && s[j] != ' ' && s[j] != '\t' && s[j] != '\n' {
			j++
		}
		spans = append(spans, [2]int{i, j})
		i = j
	}
	return spans
}

// dateAt reads a date, or a date and time, written in one of the common
// forms at the start of s ("9 march 2018 at 19:03:39", "14th of february
// 1968", "march 9, 2018, 7:03:39 pm").
func dateAt(s string) (time.Time, int, bool) {
	fields := fieldSpans(s, 8)
	for n := len(fields); n >= 1; n-- {
		end := fields[n-1][1]
		for end > 0 && strings.ContainsRune(".,;')]", rune(s[end-1])) {
			end--
		}
		if end == 0 {
			continue
		}
		var words []string
		for _, w := range strings.Fields(strings.ReplaceAll(s[:end], ",", " ")) {
			switch w = strings.TrimSuffix(w, "."); w { // "Sept. 24"
			case "at", "of", "the":
			case "sept":
				words = append(words, "sep")
			default:
				words = append(words, w)
			}
		}
		if t, ok := parseDate(strings.ToUpper(strings.Join(words, " "))); ok { // "PM" only in capitals
			return t, end, true
		}
	}
	return time.Time{}, 0, false
}

// mayStartDate reports whether a date can start s: a digit, or the first
// three letters of a month or a weekday.
func mayStartDate(s string) bool {
	if s == "" {
		return false
	}
	if s[0] >= '0' && s[0] <= '9' {
		return true
	}
	return len(s) >= 3 && dateWordStarts[s[:3]]
}

var dateWordStarts = map[string]bool{"jan": true, "feb": true, "mar": true, "apr": true, "may": true, "jun": true,
	"jul": true, "aug": true, "sep": true, "oct": true, "nov": true, "dec": true,
	"mon": true, "tue": true, "wed": true, "thu": true, "fri": true, "sat": true, "sun": true}

// markQuestionPhrases marks as filler each run of two or more tokens of one
// clause copied from the question, when the run holds a word that is not a
// value ("in 2014 or 2015", "students older than 20").
func (r *proseReader) markQuestionPhrases(toks []proseToken) {
	type flat struct {
		word string
		tok  int
	}
	var words []flat
	for i, t := range toks {
		for _, w := range t.words {
			words = append(words, flat{w, i})
		}
	}
	for a := 0; a < len(words); {
		best := 0
		for q := range r.qwords {
			n := 0
			for a+n < len(words) && q+n < len(r.qwords) && words[a+n].word == r.qwords[q+n] &&
				toks[words[a+n].tok].seg == toks[words[a].tok].seg {
				n++
			}
			best = max(best, n)
		}
		// Only whole tokens count.
		for best > 0 && a+best < len(words) && words[a+best].tok == words[a+best-1].tok {
			best--
		}
		first, last := words[a].tok, words[max(a+best-1, a)].tok
		hasWord := false
		for i := first; i <= last && best >= 2; i++ {
			hasWord = hasWord || toks[i].kind == tokWord
		}
		if best >= 2 && hasWord && (a == 0 || words[a-1].tok != first) {
			for i := first; i <= last; i++ {
				toks[i].filler = true
			}
			a += best
			continue
		}
		a++
	}
}

// statedValue is a value of the prediction and the column a label binds it
// to (-1: none).
type statedValue struct {
	cell  cell
	label int
}

// values returns the values toks state, in order, each with its label; false
// when a word may not stand beside them or a number is neither a gold value
// nor the question's.
func (r *proseReader) values(toks []proseToken) ([]statedValue, bool) {
	var out []statedValue
	var segs []int
	labels := map[int]map[int]bool{} // clause → the columns its words name
	labelOnly := map[int]bool{}      // clauses whose aggregate words must be labels: a header or one labelled value
	for i, t := range toks {
		if r.countsOther(toks, i) {
			return nil, false
		}
		if t.kind == tokWord {
			if j, ok := r.labels[stem(t.text)]; ok && j >= 0 {
				if labels[t.seg] == nil {
					labels[t.seg] = map[int]bool{}
				}
				labels[t.seg][j] = true
			}
		}
		if t.filler {
			continue
		}
		switch t.kind {
		case tokWord:
			ok, onlyLabel := r.wordAllowed(t.text, len(out))
			if !ok {
				return nil, false
			}
			labelOnly[t.seg] = labelOnly[t.seg] || onlyLabel
		case tokNumber:
			if r.isGoldNumber(t.cell) {
				out, segs = append(out, statedValue{t.cell, -1}), append(segs, t.seg)
			} else if !r.qnums[digitsOf(t.text)] && !(len(r.gold) > 1 && t.cell.num == float64(len(r.gold))) {
				return nil, false
			}
		case tokNull:
			if n := len(out); n > 0 && segs[n-1] == t.seg && out[n-1].cell.text == "null" {
				continue // "none (null)": one NULL
			}
			out, segs = append(out, statedValue{t.cell, -1}), append(segs, t.seg)
		default:
			out, segs = append(out, statedValue{t.cell, -1}), append(segs, t.seg)
		}
	}
	if !r.bindLabels(toks, out, segs, labels, labelOnly) {
		return nil, false
	}
	return out, len(out) > 0
}

// countsOther reports whether toks[i] is a noun of the question that
// follows a gold count but is not what the question counts ("82
// perpetrators" where it counts the people they killed).
func (r *proseReader) countsOther(toks []proseToken, i int) bool {
	if len(r.counted) == 0 || i == 0 {
		return false
	}
	prev, t := toks[i-1], toks[i]
	if prev.kind != tokNumber || prev.filler || !r.isGoldNumber(prev.cell) || t.kind != tokWord || t.seg != prev.seg {
		return false
	}
	if _, unit := units[t.text]; unit || functionWords[t.text] || r.isLabel(t.text) || !r.isQuestionWord(t.text) {
		return false
	}
	return !r.namesCounted(toks[i:])
}

// wordAllowed reports whether a word may stand beside the values, after
// values of them; onlyLabel: it is an aggregate word allowed only as a
// label, so its clause must be a header or bind one value.
func (r *proseReader) wordAllowed(text string, values int) (ok, onlyLabel bool) {
	w := strings.TrimSuffix(text, "'s") // "the singer's song"
	_, label := r.labels[stem(w)]
	_, isUnit := units[w]
	ageWord := r.ages && (ageWords[w] || w == "youngest" || w == "oldest")
	switch {
	case r.colTokens[text] && strings.IndexFunc(w, unicode.IsDigit) >= 0: // "T1" of "sum(T1.Killed)" as a header
		return true, false
	case strings.IndexFunc(w, unicode.IsDigit) >= 0:
		return r.qnums[w], false
	case isUnit && !functionWords[w] || w == "s":
		return r.unitAllowed(w), false
	case aggregateWords[w] && !ageWord:
		if r.words[stem(w)] {
			return true, false
		}
		return label, true
	case qualifiers[w]:
		return values == 0, false
	}
	return functionWords[w] || fillerWords[w] || w == "and" || r.isQuestionWord(w) || label ||
		r.approx && hedges[w] || ageWord || defaultUnits[w] != "" && !r.namedKinds[defaultUnits[w]] || r.unitAllowed(w), false
}

// bindLabels binds each value that is alone in its clause to the one
// column the clause's labels name; false when the labels contradict the
// values: a clause whose aggregate words must be labels neither binds one
// value nor is a header, or one value's clause names several columns.
func (r *proseReader) bindLabels(toks []proseToken, out []statedValue, segs []int, labels map[int]map[int]bool, labelOnly map[int]bool) bool {
	perSeg := map[int]int{}
	for _, s := range segs {
		perSeg[s]++
	}
	content := map[int]bool{} // clauses with words that are not labels or function words
	for _, t := range toks {
		if t.kind == tokWord && !functionWords[t.text] && !r.isLabel(t.text) && t.text != "and" {
			content[t.seg] = true
		}
	}
	for s, only := range labelOnly {
		if only && !(perSeg[s] == 1 || perSeg[s] == 0 && !content[s]) {
			return false
		}
	}
	for i, s := range segs {
		if perSeg[s] != 1 {
			continue
		}
		if len(labels[s]) > 1 {
			return false // "highest consider rate: 0.17" where it is the lowest: labels disagree
		}
		for j := range labels[s] {
			// "Continent 1": a text column's label does not bind a number.
			if j < len(r.numeric) && r.numeric[j] == out[i].cell.isNum {
				out[i].label = j
			}
		}
	}
	return true
}

// isGoldNumber reports whether the number c is one of the gold's cells.
func (r *proseReader) isGoldNumber(c cell) bool {
	for _, row := range r.gold {
		for _, g := range row {
			if g.isNum && g.matches(c) {
				return true
			}
		}
	}
	return false
}

// unitAllowed reports whether the unit word w may follow a value: the
// question or the columns name its unit.
func (r *proseReader) unitAllowed(w string) bool {
	u, ok := units[w]
	return ok && r.namedUnits[u[1]]
}

// defaultUnits are units that may follow a value unless the question or
// the columns name another unit of their kind: years are what durations and
// life expectancies are counted in when nothing else is said.
var defaultUnits = map[string]string{"year": "time", "years": "time", "yrs": "time"}

// unitKindWords name a quantity whose usual unit may follow its value
// without the question naming the unit: "-3.5 degrees" for a temperature.
var unitKindWords = map[string]string{"temperature": "degree", "temperatures": "degree", "percentage": "percent",
	"percent": "percent", "share": "percent", "rate": "percent"}

// matches reports whether the stated values are the gold's cells: a list's
// items (as a set unless Ordered), or a table's rows one after another,
// each row's values in an order its labels and kinds allow.
func (r *proseReader) matches(values []statedValue) bool {
	nCols := len(r.gold[0])
	if len(r.gold) == 1 && nCols == 1 {
		// One value, stated once or more ("None — zero flights").
		for _, v := range values {
			if v.label > 0 || !r.gold[0][0].matches(v.cell) {
				return false
			}
		}
		return true
	}
	if nCols == 1 {
		items := make([]cell, len(values))
		for i, v := range values {
			if v.label > 0 {
				return false
			}
			items[i] = v.cell
		}
		gold := make([]cell, len(r.gold))
		for i, row := range r.gold {
			gold[i] = row[0]
		}
		return sameItems(items, gold) && r.e.inOrder(items, gold)
	}
	if len(values) != len(r.gold)*nCols {
		return false
	}
	used := make([]bool, len(r.gold))
	for g := 0; g < len(r.gold); g++ {
		group := values[g*nCols : (g+1)*nCols]
		found := false
		for row := range r.gold {
			if used[row] || (r.e.Ordered && row != g) {
				continue
			}
			if r.groupIsRow(group, r.gold[row]) {
				used[row], found = true, true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// groupIsRow reports whether the values of one stated row are the gold
// row's cells under an order their labels and kinds allow.
func (r *proseReader) groupIsRow(group []statedValue, row []cell) bool {
	perm := make([]int, len(row))
	for i := range perm {
		perm[i] = i
	}
	for {
		if r.assignable(group, row, perm) {
			return true
		}
		if !nextPermutation(perm) {
			return false
		}
	}
}

// assignable reports whether value k may be the gold cell perm[k] for all
// k: it matches, its label (if any) names that column, and unlabelled
// numbers keep the order of their columns.
func (r *proseReader) assignable(group []statedValue, row []cell, perm []int) bool {
	for k, v := range group {
		if !row[perm[k]].matches(v.cell) || (v.label >= 0 && v.label != perm[k]) {
			return false
		}
	}
	for k := range group {
		for k2 := k + 1; k2 < len(group); k2++ {
			if group[k].label < 0 && group[k2].label < 0 && r.numeric[perm[k]] && r.numeric[perm[k2]] && perm[k] > perm[k2] {
				return false
			}
		}
	}
	return true
}

func isWordRune(c rune) bool { return unicode.IsLetter(c) || unicode.IsDigit(c) }

func firstRune(s string) rune {
	c, _ := utf8.DecodeRuneInString(s)
	return c
}

func lastRune(s string) rune {
	c, _ := utf8.DecodeLastRuneInString(s)
	return c
}

// digitsOf keeps the digits and decimal point of a number as written, to
// compare it with the question's numbers ("$2,014" → "2014").
func digitsOf(s string) string {
	var b strings.Builder
	for _, c := range s {
		if unicode.IsDigit(c) || c == '.' {
			b.WriteRune(c)
		}
	}
	return strings.TrimSuffix(b.String(), ".")
}
