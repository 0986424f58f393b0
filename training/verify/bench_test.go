package verify

import (
	"context"
	"testing"
)

func benchBatch(b *testing.B, workers int) {
	needGPP(b)
	dir := b.TempDir()
	v := NewGCCExecutionVerifier(sqTests(10), WithCacheDir(dir))
	codes := make([]string, 4)
	for i := range codes {
		codes[i] = squareSrc + "\n// variant " + string(rune('a'+i))
	}
	VerifyBatch(context.Background(), v, codes, workers) // compile into the cache
	b.ResetTimer()
	n := 0
	for i := 0; i < b.N; i++ {
		rs := VerifyBatch(context.Background(), v, codes, workers)
		for _, r := range rs {
			if r.Reward != 1 || r.Metadata["cached"] != true {
				b.Fatalf("reward %v cached %v: %s", r.Reward, r.Metadata["cached"], r.Error)
			}
		}
		n += len(codes)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "verifications/s")
}

// Binaries come from the cache (compiled before the timer starts); workers is
// VerifyBatch's parallelism across candidates.
func BenchmarkVerifySequential(b *testing.B) { benchBatch(b, 1) }
func BenchmarkVerifyWorkers2(b *testing.B)   { benchBatch(b, 2) }

func benchNoCache(b *testing.B, workers int) {
	needGPP(b)
	v := NewGCCExecutionVerifier(sqTests(10))
	codes := []string{squareSrc, squareSrc}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		VerifyBatch(context.Background(), v, codes, workers)
	}
	b.ReportMetric(float64(2*b.N)/b.Elapsed().Seconds(), "verifications/s")
}

// Every verification compiles.
func BenchmarkVerifyNoCacheSequential(b *testing.B) { benchNoCache(b, 1) }
func BenchmarkVerifyNoCacheWorkers2(b *testing.B)   { benchNoCache(b, 2) }

// benchTests measures running the 10 tests of one cached program, in the
// sandbox or without it (WithoutSandbox), with the verifier's MaxWorkers
// tests at a time.
func benchTests(b *testing.B, workers int, sandboxed bool) {
	needGPP(b)
	opts := []Option{WithCacheDir(b.TempDir()), WithMaxWorkers(workers)}
	if !sandboxed {
		opts = append(opts, WithoutSandbox())
	}
	const nTests = 10
	v := NewGCCExecutionVerifier(sqTests(nTests), opts...)
	ctx := context.Background()
	if r := v.Verify(ctx, squareSrc); r.Reward != 1 { // compile into the cache
		b.Fatalf("warm-up: reward %v: %s", r.Reward, r.Error)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := v.Verify(ctx, squareSrc)
		if r.Reward != 1 || r.Metadata["cached"] != true {
			b.Fatalf("reward %v cached %v: %s", r.Reward, r.Metadata["cached"], r.Error)
		}
	}
	s := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N)/s, "verifications/s")
	b.ReportMetric(1000*s/float64(b.N*nTests), "ms/test")
}

// The sandbox's cost: the same cached program and 10 tests, sandboxed
// (prlimit, unprivileged uid and namespaces when root) vs WithoutSandbox.
func BenchmarkTestsSandboxedSequential(b *testing.B)   { benchTests(b, 1, true) }
func BenchmarkTestsUnsandboxedSequential(b *testing.B) { benchTests(b, 1, false) }
func BenchmarkTestsSandboxedWorkers2(b *testing.B)     { benchTests(b, 2, true) }
func BenchmarkTestsUnsandboxedWorkers2(b *testing.B)   { benchTests(b, 2, false) }
