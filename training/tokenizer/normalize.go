package tokenizer

import (
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Normalization as Hugging Face's tokenizers do it: the Unicode normal forms
// exactly as UAX #15 defines them. golang.org/x/text also applies the
// stream-safe text format (UAX #15 D4): after 30 non-starters in a row it
// inserts U+034F, which then becomes tokens and survives decoding, and it
// does not reorder or compose across it. Such runs are rare; where one
// occurs, its segment (the starter and its marks) is normalized here by the
// definition — decompose every character, put the marks in canonical order,
// compose — and the rest by x/text.

// maxNonStarters is x/text's run limit (norm's maxNonStarters).
const maxNonStarters = 30

// normalizer returns the normalizing function of form f, by the definition.
func normalizer(f norm.Form) func(string) string {
	return func(s string) string {
		// A string x/text finds normal has no run it would break (it would
		// insert U+034F there), so it is normal by the definition too.
		if f.IsNormalString(s) {
			return s
		}
		if !hasLongMarkRun(s) {
			return f.String(s)
		}
		var b strings.Builder
		start := 0 // of the text not yet written
		for i := 0; i < len(s); {
			seg, n := markRunAt(s, i)
			if n <= maxNonStarters {
				i += max(seg, 1)
				continue
			}
			// s[i:i+seg] is a starter (or nothing) and more than 30 marks.
			b.WriteString(f.String(s[start:i]))
			b.WriteString(normalizeSegment(f, s[i:i+seg]))
			i += seg
			start = i
		}
		b.WriteString(f.String(s[start:]))
		return b.String()
	}
}

// hasLongMarkRun reports whether s has more than maxNonStarters
// non-starters in a row (after decomposition, as x/text counts them).
func hasLongMarkRun(s string) bool {
	run := 0
	for i := 0; i < len(s); {
		p := norm.NFD.PropertiesString(s[i:])
		if p.Size() == 0 {
			i++
			run = 0
			continue
		}
		if p.CCC() == 0 && p.LeadCCC() == 0 {
			run = 0
		} else {
			run++
			if run > maxNonStarters {
				return true
			}
		}
		i += p.Size()
	}
	return false
}

// markRunAt returns the length in bytes of the segment at s[i:] — one
// character, then every non-starter after it — and how many non-starters it
// holds.
func markRunAt(s string, i int) (size, marks int) {
	j := i
	for j < len(s) {
		p := norm.NFD.PropertiesString(s[j:])
		if p.Size() == 0 {
			if j == i {
				return 1, 0
			}
			break
		}
		starter := p.CCC() == 0 && p.LeadCCC() == 0
		if j > i && starter {
			break
		}
		if !starter {
			marks++
		}
		j += p.Size()
	}
	return j - i, marks
}

// normalizeSegment normalizes one segment by the definition of form f.
func normalizeSegment(f norm.Form, seg string) string {
	decompose := norm.NFD
	if f == norm.NFKC || f == norm.NFKD {
		decompose = norm.NFKD
	}
	type char struct {
		r   rune
		ccc uint8
	}
	var cs []char
	for _, r := range seg {
		for _, d := range decompose.String(string(r)) {
			cs = append(cs, char{d, norm.NFD.PropertiesString(string(d)).CCC()})
		}
	}
	// Canonical ordering: marks between starters, stably by class.
	for i := 0; i < len(cs); {
		if cs[i].ccc == 0 {
			i++
			continue
		}
		j := i
		for j < len(cs) && cs[j].ccc != 0 {
			j++
		}
		slices.SortStableFunc(cs[i:j], func(a, b char) int { return int(a.ccc) - int(b.ccc) })
		i = j
	}
	if f == norm.NFD || f == norm.NFKD {
		var b strings.Builder
		for _, c := range cs {
			b.WriteRune(c.r)
		}
		return b.String()
	}
	// Canonical composition: each mark joins the last starter unless
	// blocked (a character between them of class 0, or of its class or more).
	out := cs[:0:0]
	starter := -1
	var last uint8 // class of the last character kept after the starter
	for _, c := range cs {
		if starter >= 0 && (last < c.ccc || (last == 0 && len(out)-1 == starter)) {
			if comp, ok := compose(out[starter].r, c.r); ok {
				out[starter].r = comp
				continue
			}
		}
		if c.ccc == 0 {
			starter, last = len(out), 0
		} else {
			last = c.ccc
		}
		out = append(out, c)
	}
	var b strings.Builder
	for _, c := range out {
		b.WriteRune(c.r)
	}
	return b.String()
}

// compose returns the primary composite of a and b, if there is one.
func compose(a, b rune) (rune, bool) {
	s := norm.NFC.String(string(a) + string(b))
	r, n := utf8.DecodeRuneInString(s)
	if n == len(s) && r != a {
		return r, true
	}
	return 0, false
}
