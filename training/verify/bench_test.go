package verify

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"
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
func benchTests(b *testing.B, workers int, sandboxed bool) { benchNTests(b, workers, sandboxed, 10) }

func benchNTests(b *testing.B, workers int, sandboxed bool, nTests int) {
	needGPP(b)
	opts := []Option{WithCacheDir(b.TempDir()), WithMaxWorkers(workers)}
	if !sandboxed {
		opts = append(opts, WithoutSandbox())
	}
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

// The same with 40 tests: (time with 40 − time with 10) / 30 is the cost of
// one more test, without the per-program setup (the jail is set up once per
// program and worker).
func BenchmarkTests40SandboxedSequential(b *testing.B)   { benchNTests(b, 1, true, 40) }
func BenchmarkTests40UnsandboxedSequential(b *testing.B) { benchNTests(b, 1, false, 40) }

// The per-command fallback (root, no bubblewrap), with 10 and 40 tests.
func BenchmarkTestsFallbackSequential(b *testing.B)   { benchFallback(b, 10) }
func BenchmarkTests40FallbackSequential(b *testing.B) { benchFallback(b, 40) }

func benchFallback(b *testing.B, nTests int) {
	if os.Geteuid() != 0 {
		b.Skip("the fallback runs only as root")
	}
	jailUnavailable = true
	defer func() { jailUnavailable = false }()
	benchNTests(b, 1, true, nTests)
}

// mixedBatch is 200 distinct programs of the kinds a policy writes: correct
// (100), wrong (40), partly right (20), not compiling (20), crashing after
// the right output (12), printing far too much (4), looping until the
// timeout (4).
func mixedBatch() []string {
	kinds := []struct {
		n    int
		code string
	}{
		{100, squareSrc},
		{40, `#include <iostream>
int main(){ long long x; std::cin >> x; std::cout << x+x << "\n"; }`},
		{20, partialSrc},
		{20, `int main(){ return undefined_name; }`},
		{12, `#include <iostream>
#include <cstdlib>
int main(){ long long x; std::cin >> x; std::cout << x*x << std::endl; abort(); }`},
		{4, `#include <cstdio>
int main(){ for(long i=0;i<20000000;i++) fputs("yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\n", stdout); }`},
		{4, `int main(){ volatile unsigned long x=0; for(;;) x++; }`},
	}
	var codes []string
	for _, k := range kinds {
		for i := range k.n {
			codes = append(codes, k.code+"\n// variant "+strconv.Itoa(len(codes))+" "+strconv.Itoa(i))
		}
	}
	return codes
}

// benchMixed verifies the mixed 200-program batch with 5 tests each (1 s
// run timeout), 2 candidates at a time: compiling every program (cached
// false) or with every binary already in the cache (cached true).
func benchMixed(b *testing.B, sandboxed, cached bool) {
	needGPP(b)
	codes := mixedBatch()
	var cache string
	opts := []Option{WithRunTimeout(time.Second)}
	if !sandboxed {
		opts = append(opts, WithoutSandbox())
	}
	if cached {
		cache = b.TempDir()
		VerifyBatch(context.Background(), NewGCCExecutionVerifier(sqTests(5), append(opts, WithCacheDir(cache))...), codes, 2)
		opts = append(opts, WithCacheDir(cache))
	}
	v := NewGCCExecutionVerifier(sqTests(5), opts...)
	b.ResetTimer()
	for b.Loop() {
		rs := VerifyBatch(context.Background(), v, codes, 2)
		if rs[0].Reward != 1 || rs[165].Reward != 0 {
			b.Fatalf("rewards %v %v: %s %s", rs[0].Reward, rs[165].Reward, rs[0].Error, rs[165].Error)
		}
	}
	b.ReportMetric(float64(len(codes)*b.N)/b.Elapsed().Seconds(), "verifications/s")
}

func BenchmarkMixed200Sandboxed(b *testing.B)         { benchMixed(b, true, false) }
func BenchmarkMixed200Unsandboxed(b *testing.B)       { benchMixed(b, false, false) }
func BenchmarkMixed200CachedSandboxed(b *testing.B)   { benchMixed(b, true, true) }
func BenchmarkMixed200CachedUnsandboxed(b *testing.B) { benchMixed(b, false, true) }
