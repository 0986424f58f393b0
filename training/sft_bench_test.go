package training

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/gosqlenv/gosqlenv/sqlenv/dataset/bundled"
	"github.com/gosqlenv/gosqlenv/training/optim"
)

// BenchmarkNLLStep times one supervised step (forward, backward, AdamW) of
// the shipped tiny base model on 16 oracle turns of the notebook preset's
// training questions, drawn as SFT draws them (a seeded shuffle of all
// turns): the step of the SFT warm-up and of pre-training, so that a
// machine's pre-training time can be told before starting one
// (training/tinybase/model/README.md gives its number of steps).
//
//	GOEXPERIMENT=simd go test ./training -run '^$' -bench NLLStep -benchtime 20x
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
	samples, err := p.oracleSamples(ctx, p.Train)
	if err != nil {
		b.Fatal(err)
	}
	const batchSize = 16 // the pretrain command's -batch_size
	order := rand.New(rand.NewPCG(1, 1000)).Perm(len(samples))
	l := NewLearner(p.Model, optim.AdamWConfig{MaxGradNorm: 1})
	step := func(s int) {
		batch := make([]Sample, 0, batchSize)
		for k := s * batchSize % len(order); len(batch) < batchSize; k = (k + 1) % len(order) {
			batch = append(batch, samples[order[k]])
		}
		if _, err := l.NLLStep(batch, 1, cfg.LengthBucket, 1e-4); err != nil {
			b.Fatal(err)
		}
	}
	step(0) // compiles the graphs
	s := 1
	for b.Loop() {
		step(s)
		s++
	}
	b.ReportMetric(float64(batchSize*b.N)/b.Elapsed().Seconds(), "samples/s")
}
