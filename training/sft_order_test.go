package training

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSFTLengthGroupBatches: an epoch's batches are the seeded shuffle cut
// into sft_batch_size pieces, as before the option, when
// sft_length_group_batches is 0 or 1; above 1 they still hold every sample
// once, each batch is drawn from one run of that many batches of the
// shuffle, in which the batches are ordered by length, and the batches pad
// to fewer positions. The same epoch gives the same batches (a resumed run
// plays the same steps), another epoch others.
func TestSFTLengthGroupBatches(t *testing.T) {
	const n, bs, group = 203, 8, 4
	lengths := rand.New(rand.NewPCG(5, 6))
	samples := make([]Sample, n)
	for i := range samples {
		samples[i].IDs = make([]int32, 10+lengths.IntN(300))
	}
	trainer := func(group int) *SFTTrainer {
		cfg := DefaultGRPOConfig()
		cfg.Seed, cfg.SFTBatchSize, cfg.SFTLengthGroupBatches = 3, bs, group
		return &SFTTrainer{Config: cfg, Samples: samples}
	}
	// padded is the positions of an epoch's batches, each padded to its
	// longest sample.
	padded := func(batches [][]int) int {
		total := 0
		for _, b := range batches {
			longest := 0
			for _, i := range b {
				longest = max(longest, len(samples[i].IDs))
			}
			total += len(b) * longest
		}
		return total
	}
	for _, g := range []int{0, 1} {
		order := rand.New(rand.NewPCG(3, 1000+1)).Perm(n)
		var want [][]int
		for start := 0; start < n; start += bs {
			want = append(want, order[start:min(start+bs, n)])
		}
		if got := trainer(g).epochOrder(1); !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("sft_length_group_batches %d: the batches are not the plain shuffle's", g)
		}
	}
	plain, grouped := trainer(0).epochOrder(0), trainer(group).epochOrder(0)
	if len(grouped) != len(plain) {
		t.Fatalf("%d batches grouped, %d plain", len(grouped), len(plain))
	}
	shuffle := rand.New(rand.NewPCG(3, 1000)).Perm(n)
	runOf := make([]int, n) // the run of the shuffle each sample is in
	for k, i := range shuffle {
		runOf[i] = k / (group * bs)
	}
	seen := make([]int, n)
	for _, b := range grouped {
		if len(b) != bs && len(b) != n%bs {
			t.Fatalf("a batch of %d samples", len(b))
		}
		for _, i := range b {
			seen[i]++
			if runOf[i] != runOf[b[0]] {
				t.Fatalf("batch %v mixes runs %d and %d of the shuffle", b, runOf[b[0]], runOf[i])
			}
		}
	}
	for i, c := range seen {
		if c != 1 {
			t.Fatalf("sample %d is in %d batches of the epoch", i, c)
		}
	}
	// Within a run, one batch's samples are all at most as long as the next
	// longer batch's.
	byRun := map[int][][]int{}
	for _, b := range grouped {
		byRun[runOf[b[0]]] = append(byRun[runOf[b[0]]], b)
	}
	type span struct{ shortest, longest int }
	for r, batches := range byRun {
		spans := make([]span, len(batches))
		for k, b := range batches {
			spans[k] = span{1 << 30, 0}
			for _, i := range b {
				spans[k].shortest = min(spans[k].shortest, len(samples[i].IDs))
				spans[k].longest = max(spans[k].longest, len(samples[i].IDs))
			}
		}
		slices.SortFunc(spans, func(a, b span) int { return a.shortest - b.shortest })
		for k := 1; k < len(spans); k++ {
			if spans[k-1].longest > spans[k].shortest {
				t.Fatalf("run %d: batches of lengths %v and %v overlap", r, spans[k-1], spans[k])
			}
		}
	}
	if p, g := padded(plain), padded(grouped); g >= p {
		t.Fatalf("grouped batches pad to %d positions, plain ones to %d", g, p)
	} else {
		t.Logf("an epoch pads to %d positions grouped by length, %d plain (%d tokens)", g, p, func() (s int) {
			for _, x := range samples {
				s += len(x.IDs)
			}
			return s
		}())
	}
	if again := trainer(group).epochOrder(0); !slices.EqualFunc(again, grouped, slices.Equal) {
		t.Fatal("the same epoch gave other batches")
	}
	if next := trainer(group).epochOrder(1); slices.EqualFunc(next, grouped, slices.Equal) {
		t.Fatal("two epochs gave the same batches")
	}
}
