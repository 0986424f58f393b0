package sqlenv

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// goldProfile is the precomputed view of a gold result that progress
// scoring compares against; it is built once per question and shared.
type goldProfile struct {
	rows    int
	values  map[string]struct{} // canonical flattened values
	numbers []float64           // distinct numeric values
}

func profileOf(rows [][]any) *goldProfile {
	g := &goldProfile{rows: len(rows), values: map[string]struct{}{}}
	for _, r := range rows {
		for _, v := range r {
			g.values[valueKey(v)] = struct{}{}
			if f, ok := numericValue(v); ok {
				g.numbers = append(g.numbers, f)
			}
		}
	}
	slices.Sort(g.numbers)
	g.numbers = slices.Compact(g.numbers)
	return g
}

// maxNumbersCompared bounds the numeric-proximity work on large results.
const maxNumbersCompared = 256

// Progress scores how close the rows of a query are to the gold result, in
// [0, 1]: the weighted mean of
//   - cardinality: 1 − |p − g| / max(p, g) over row counts (1 when both are
//     empty, 0 when exactly one is);
//   - value overlap: Jaccard similarity of the sets of all values;
//   - numeric proximity: for each gold number, the best 1 − |ln(1+|x|) − ln(1+|g|)| / ln 10
//     (signed) over the result's numbers, clipped at 0, averaged; left out of
//     the mean when the gold result has no numbers.
func Progress(rows, gold [][]any, cfg RewardConfig) float64 {
	return profileOf(gold).progress(rows, cfg)
}

func (g *goldProfile) progress(rows [][]any, cfg RewardConfig) float64 {
	var card float64
	switch p := len(rows); {
	case p == 0 && g.rows == 0:
		card = 1
	case p == 0 || g.rows == 0:
		card = 0
	default:
		card = 1 - math.Abs(float64(p-g.rows))/float64(max(p, g.rows))
	}
	// The distinct values of the result: sorted keys, no map to build.
	var keyBuf [64]string
	keys := keyBuf[:0]
	var numbers []float64
	for _, r := range rows {
		for _, v := range r {
			keys = append(keys, valueKey(v))
			if f, ok := numericValue(v); ok {
				numbers = append(numbers, f)
			}
		}
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	inter := 0
	for _, k := range keys {
		if _, ok := g.values[k]; ok {
			inter++
		}
	}
	var overlap float64
	if union := len(keys) + len(g.values) - inter; union > 0 {
		overlap = float64(inter) / float64(union)
	} else {
		overlap = 1
	}
	score := cfg.CardinalityWeight*card + cfg.OverlapWeight*overlap
	weights := cfg.CardinalityWeight + cfg.OverlapWeight
	if len(g.numbers) > 0 {
		score += cfg.NumericWeight * numericProximity(numbers, g.numbers)
		weights += cfg.NumericWeight
	}
	if weights <= 0 {
		return 0
	}
	return score / weights
}

// numericProximity averages, over (at most maxNumbersCompared) gold numbers,
// the proximity of the closest result number.
func numericProximity(pred, gold []float64) float64 {
	if len(pred) == 0 {
		return 0
	}
	slices.Sort(pred)
	n := min(len(gold), maxNumbersCompared)
	total := 0.0
	for _, g := range gold[:n] {
		i, _ := slices.BinarySearch(pred, g)
		best := 0.0
		for _, j := range []int{i - 1, i} {
			if j >= 0 && j < len(pred) {
				best = math.Max(best, proximity(pred[j], g))
			}
		}
		total += best
	}
	return total / float64(n)
}

func proximity(p, g float64) float64 {
	slog := func(x float64) float64 { return math.Copysign(math.Log1p(math.Abs(x)), x) }
	return math.Max(0, 1-math.Abs(slog(p)-slog(g))/math.Ln10)
}

func numericValue(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	}
	return 0, false
}

// valueKey is a value's canonical form for overlap: numbers by value (so 3
// and 3.0 agree), text folded (without a copy when it is already trimmed
// and lower-case ASCII).
func valueKey(v any) string {
	switch x := v.(type) {
	case nil:
		return "\x00null"
	case int64:
		return "#" + strconv.FormatInt(x, 10)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return "#" + strconv.FormatInt(int64(x), 10)
		}
		return "#" + strconv.FormatFloat(x, 'g', 10, 64)
	case []byte:
		return foldKey(string(x))
	case string:
		return foldKey(x)
	}
	return "?"
}

// foldKey trims and lower-cases s, returning s itself when nothing changes.
func foldKey(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || ('A' <= c && c <= 'Z') {
			return strings.ToLower(strings.TrimSpace(s))
		}
	}
	if len(s) > 0 && (isASCIISpace(s[0]) || isASCIISpace(s[len(s)-1])) {
		return strings.TrimSpace(s)
	}
	return s
}

func isASCIISpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}
