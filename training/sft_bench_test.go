package training

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/gosqlenv/gosqlenv/internal/cputime"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset/bundled"
	"github.com/gosqlenv/gosqlenv/training/optim"
)

// BenchmarkNLLStep times one supervised step (forward, backward, AdamW) of
// the shipped tiny base model on 16 oracle turns of the notebook preset's
// training questions, in an epoch's batches as SFT draws them — a seeded
// shuffle of all turns (shuffled), or with runs of 4 batches sorted by
// length (length_groups_4, sft_length_group_batches 4): the step of the SFT
// warm-up and of pre-training, so that a machine's pre-training time can be
// told before starting one (training/tinybase/model/README.md gives its
// number of steps). The graph of each padded length is compiled before
// the timing.
//
//	GOEXPERIMENT=simd go test ./training -run '^$' -bench NLLStep -benchtime 40x
func BenchmarkNLLStep(b *testing.B) {
	ctx := context.Background()
	cfg := DefaultGRPOConfig()
	TinyPreset(&cfg)
	cfg.OutputDir = b.TempDir()
	paths, err := bundled.EnsureAt(ctx, filepath.Join(b.TempDir(), "data"))
	if err != nil {
		b.Fatal(err)
	}
	cfg.QuestionsPath, cfg.EvalQuestionsPath, cfg.DBDir = paths.TrainQuestions, paths.EvalQuestions, paths.DBDir
	p, err := OpenData(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	if err := p.LoadModel(ctx); err != nil {
		b.Fatal(err)
	}
	samples, err := p.oracleSamples(ctx, p.Train, 0)
	if err != nil {
		b.Fatal(err)
	}
	const batchSize = 16 // the pretrain command's -batch_size
	for _, group := range []int{0, 4} {
		name := "shuffled"
		if group > 0 {
			name = fmt.Sprintf("length_groups_%d", group)
		}
		b.Run(name, func(b *testing.B) {
			c := cfg
			c.SFTBatchSize, c.SFTLengthGroupBatches = batchSize, group
			batches := (&SFTTrainer{Config: c, Samples: samples}).epochOrder(0)
			l := NewLearner(p.Model, optim.AdamWConfig{MaxGradNorm: 1})
			step := func(s int) {
				var batch []Sample
				for _, i := range batches[s%len(batches)] {
					batch = append(batch, samples[i])
				}
				if _, err := l.NLLStep(batch, 1, cfg.LengthBucket, 1e-4); err != nil {
					b.Fatal(err)
				}
			}
			// Compile the graph of each padded length the timed steps meet.
			compiled := map[int]bool{}
			for s := range min(b.N+1, len(batches)) {
				longest := 0
				for _, i := range batches[s] {
					longest = max(longest, len(samples[i].IDs))
				}
				if bucket := (longest + cfg.LengthBucket - 1) / cfg.LengthBucket; !compiled[bucket] {
					compiled[bucket] = true
					step(s)
				}
			}
			s := 0
			cpu := cputime.Process()
			for b.Loop() {
				step(s)
				s++
			}
			cputime.Report(b, cpu)
			b.ReportMetric(float64(batchSize*b.N)/b.Elapsed().Seconds(), "samples/s")
		})
	}
}
