package tokenizer

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func (m *bpe) byteSymbols(word string) []int32 {
	syms := make([]int32, len(word))
	for i := 0; i < len(word); i++ {
		syms[i] = m.byteIDs[word[i]]
	}
	return syms
}

// TestMergeQueueMatchesRescan: the priority-queue merge gives the same
// tokens as the rescan loop at every length (mergeAll uses the one or the
// other by length), on words trained into a small vocabulary
// (repeats, overlaps like "aaaa", ties) and, with the real Qwen vocabulary
// when present, on random words of every script, up to 5,000 bytes.
func TestMergeQueueMatchesRescan(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	check := func(t *testing.T, m *bpe, word string) {
		t.Helper()
		want := m.mergeRescan(m.byteSymbols(word))
		if got := m.mergeQueued(m.byteSymbols(word)); !slices.Equal(got, want) {
			t.Fatalf("word %q (%d bytes): queue %v, rescan %v", word[:min(len(word), 40)], len(word), got, want)
		}
	}
	t.Run("trained", func(t *testing.T) {
		corpus := strings.Fields(strings.Repeat("aaaa abab aabb banana bandana abba ", 20))
		tk, err := TrainBPE(corpus, TrainOptions{VocabSize: 300})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2000; i++ {
			var sb strings.Builder
			for n := rng.IntN(60); n >= 0; n-- {
				sb.WriteByte("abn d"[rng.IntN(5)])
			}
			check(t, tk.model, sb.String())
		}
	})
	t.Run("qwen", func(t *testing.T) {
		tk := qwen(t)
		alphabets := []string{"abcdefghijklmnopqrstuvwxyz", "的一是不了人我在有他这中大来上国个到说们", "абвгдежзийклмнопрстуфхцчшщъыьэюя", "0123456789", "()[];,.=<>*'\""}
		for i := 0; i < 3000; i++ {
			letters := []rune(alphabets[rng.IntN(len(alphabets))])
			var sb strings.Builder
			for n := 1 + rng.IntN(1+rng.IntN(2000)); n > 0; n-- {
				sb.WriteRune(letters[rng.IntN(len(letters))])
			}
			check(t, tk.model, sb.String())
		}
	})
}

// TestWordCacheDoesNotKeepInputs: encoding and dropping a hundred 1 MiB
// texts, each with one word the cache has not seen, leaves the cache's own
// copies of those words alive, not the texts (100 MiB).
func TestWordCacheDoesNotKeepInputs(t *testing.T) {
	tk, err := TrainBPE(strings.Fields(strings.Repeat("select from where group by order ", 50)), TrainOptions{VocabSize: 300})
	if err != nil {
		t.Fatal(err)
	}
	live := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	common := strings.Repeat("select name from city where id ", (1<<20)/31)
	tk.Encode(common)
	before := live()
	for i := 0; i < 100; i++ {
		text := []byte(common)
		text = fmt.Appendf(text, " unseen%c%c", 'a'+i/26, 'a'+i%26) // letters: one pre-token
		tk.Encode(string(text))
	}
	grown := int64(live()) - int64(before)
	runtime.KeepAlive(tk) // its cache is what is measured
	t.Logf("live heap grew by %.2f MiB", float64(grown)/(1<<20))
	if grown > 8<<20 {
		t.Errorf("live heap grew by %.1f MiB after encoding and dropping 100 MiB of text", float64(grown)/(1<<20))
	}
}

// BenchmarkEncodeLongWord encodes one unbroken word (Chinese characters,
// which Qwen's pre-tokenizer keeps together) of 10 KB and 100 KB: the merge
// loop's worst case.
func BenchmarkEncodeLongWord(b *testing.B) {
	tk := qwen(b)
	letters := []rune("的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正名定女问力机给等几很业最间新什打便位因重被走电四第门相次东政海口使教西再平真听世气信北少关并内加化由却代军产入先山五太水万市眼体别处总才场师书")
	for _, size := range []int{10_000, 100_000} {
		var sb strings.Builder
		rng := rand.New(rand.NewPCG(15, 16))
		for sb.Len() < size {
			sb.WriteRune(letters[rng.IntN(len(letters))])
		}
		word := sb.String()
		if n := len(tk.Encode(word)); n == 0 {
			b.Fatal("no tokens")
		}
		b.Run(fmt.Sprintf("%dKB", size/1000), func(b *testing.B) {
			b.SetBytes(int64(len(word)))
			for b.Loop() {
				tk.Encode(word)
			}
		})
	}
}
