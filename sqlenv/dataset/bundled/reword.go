package bundled

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Rewordings: other wordings of a question with the same meaning and the
// same constants — a frame around it ("Tell me: …", "Do you know how
// many …"), other words for its phrases ("average" → "mean"), other first
// words and a sentence at the end. Like names (names.go), the rewordings come in two disjoint pools:
// pre-training draws from PretrainNames, the paraphrased evaluation split
// from HeldoutNames, so no wording of that split was seen in training.

// rewording is one pool.
type rewording struct {
	// frames wrap the question as it is (%s).
	frames []string
	// askFrames wrap a question that starts with a question word, its first
	// letter in lower case and its question mark kept.
	askFrames []string
	// orderFrames wrap an instruction ("List …", "Count …"), its first
	// letter in lower case.
	orderFrames []string
	// starts replace the question's first words.
	starts [][2]string
	// swaps replace lower-case phrases anywhere (whole words).
	swaps [][2]string
	// tails are sentences added at the end.
	tails []string
}

var rewordings = map[NameSet]rewording{
	PretrainNames: {
		frames:      []string{"Tell me: %s", "Question: %s", "I'd like to know: %s", "Find out: %s"},
		askFrames:   []string{"Can you tell me %s", "I want to know %s", "Please tell me %s"},
		orderFrames: []string{"Please %s", "Can you %s", "I need you to %s"},
		starts: [][2]string{{"What is", "What's"}, {"Which", "What"}, {"List", "Show"}, {"Give", "Provide"},
			{"How many", "What number of"}, {"Count", "Tally"}, {"Name", "Identify"}},
		swaps: [][2]string{{"highest", "largest"}, {"lowest", "smallest"}, {"average", "mean"}, {"number of", "count of"},
			{"earliest", "first"}, {"total", "overall"}, {"most", "largest number of"}},
		tails: []string{"Thanks.", "Answer briefly.", "Use the database.", "Thank you!"},
	},
	HeldoutNames: {
		frames:      []string{"Look this up for me: %s", "Quick question — %s", "Here is what I need: %s"},
		askFrames:   []string{"Do you know %s", "Could you find out %s", "I am curious %s"},
		orderFrames: []string{"Kindly %s", "Would you %s", "Go and %s"},
		starts: [][2]string{{"What is", "What would be"}, {"Which", "Tell me which"}, {"List", "Enumerate"},
			{"Give", "Return"}, {"How many", "Exactly how many"}, {"Count", "Work out the count of"}, {"Name", "Spell out"}},
		swaps: [][2]string{{"highest", "greatest"}, {"lowest", "least"}, {"average", "avg."}, {"number of", "quantity of"},
			{"earliest", "very first"}, {"total", "combined"}, {"most", "greatest count of"}},
		tails: []string{"Cheers!", "I need it for a report.", "Just the answer, please.", "Much appreciated."},
	},
}

var questionWord = regexp.MustCompile(`^(How|What|Which|Who|When|Where|In which)\b`)

// otherOpening matches the openings of questions that are neither a
// question word nor an instruction: they take a plain frame.
var otherOpening = regexp.MustCompile(`^(On average|Among|Considering|In the)\b`)

// Reword returns another wording of question drawn from the pool of set.
// With PretrainNames it may return the question unchanged (about a third
// of the time); with HeldoutNames it always changes it, by at least two of
// its kinds of change.
func Reword(question string, set NameSet, r *rand.Rand) string {
	pool, ok := rewordings[set]
	if !ok {
		return question
	}
	for {
		out, changes := reword(question, pool, r)
		if set == PretrainNames || (changes >= 2 && out != question) {
			return out
		}
	}
}

// reword applies each kind of change with probability 1/2 and counts
// those that changed the text.
func reword(q string, pool rewording, r *rand.Rand) (string, int) {
	changes := 0
	apply := func(f func(string) string) {
		if r.IntN(2) == 0 {
			if s := f(q); s != q {
				q, changes = s, changes+1
			}
		}
	}
	apply(func(s string) string {
		for _, sw := range pool.swaps {
			if re := wholeWords(sw[0]); re.MatchString(s) && r.IntN(2) == 0 {
				s = re.ReplaceAllLiteralString(s, sw[1])
			}
		}
		return s
	})
	apply(func(s string) string {
		for _, st := range shuffledPairs(pool.starts, r) {
			if strings.HasPrefix(s, st[0]+" ") {
				return st[1] + s[len(st[0]):]
			}
		}
		return s
	})
	apply(func(s string) string {
		switch {
		case questionWord.MatchString(s) && strings.HasSuffix(s, "?"):
			return frame(pool.askFrames[r.IntN(len(pool.askFrames))], lowerFirst(s))
		case !questionWord.MatchString(s) && !otherOpening.MatchString(s) && !strings.HasSuffix(s, "?"):
			return frame(pool.orderFrames[r.IntN(len(pool.orderFrames))], lowerFirst(s))
		}
		return frame(pool.frames[r.IntN(len(pool.frames))], s)
	})
	apply(func(s string) string { return s + " " + pool.tails[r.IntN(len(pool.tails))] })
	return q, changes
}

func frame(f, s string) string { return strings.Replace(f, "%s", s, 1) }

// shuffledPairs returns the pairs in a random order.
func shuffledPairs(xs [][2]string, r *rand.Rand) [][2]string {
	out := append([][2]string(nil), xs...)
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// lowerFirst lowers the first letter of s unless its first word is a name
// (all capitals, like GPA, or a capital after the first letter).
func lowerFirst(s string) string {
	first, size := utf8.DecodeRuneInString(s)
	word, _, _ := strings.Cut(s, " ")
	if len(word) > 1 && strings.ToUpper(word) == word {
		return s
	}
	return string(unicode.ToLower(first)) + s[size:]
}

// swapPatterns match each swap's phrase as whole words.
var swapPatterns = func() map[string]*regexp.Regexp {
	out := map[string]*regexp.Regexp{}
	for _, pool := range rewordings {
		for _, sw := range pool.swaps {
			out[sw[0]] = regexp.MustCompile(`\b` + regexp.QuoteMeta(sw[0]) + `\b`)
		}
	}
	return out
}()

// wholeWords matches phrase (a swap's) as whole words.
func wholeWords(phrase string) *regexp.Regexp { return swapPatterns[phrase] }
