package qwen3

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
)

func TestNewBackend(t *testing.T) {
	t.Setenv("GOMLX_BACKEND", "")
	b, err := NewBackend("")
	if err != nil || b.Name() == "" {
		t.Fatalf("default backend: %v", err)
	}
	if !strings.Contains(strings.ToLower(b.Name()), "go") {
		t.Fatalf("default backend is %q, want the pure-Go one", b.Name())
	}
	t.Setenv("GOMLX_BACKEND", "tpu:fast")
	if _, err := NewBackend(""); err == nil || !strings.Contains(err.Error(), `backend "tpu:fast" (from $GOMLX_BACKEND): unknown backend "tpu"`) {
		t.Fatalf("unknown backend: %v", err)
	}
	_, err = NewBackend("xla:/nonexistent/pjrt_c_api_cuda_plugin.so")
	if err == nil || !strings.Contains(err.Error(), `XLA/PJRT plugin "/nonexistent/pjrt_c_api_cuda_plugin.so" could not be loaded`) || !strings.Contains(err.Error(), "GOMLX_BACKEND=go") {
		t.Fatalf("missing plugin: %v", err)
	}
}

// TestGoBackendConfig: the pure-Go backend gets one executor per GOMAXPROCS
// unless the configuration chooses, and the completed configurations are
// accepted by the backend.
func TestGoBackendConfig(t *testing.T) {
	p := runtime.GOMAXPROCS(0)
	for in, want := range map[string]string{
		"":                               fmt.Sprintf("num_executors=%d", p),
		"parallelism=2":                  fmt.Sprintf("num_executors=%d,parallelism=2", p),
		"num_executors=5":                "num_executors=5",
		"ops_sequential,num_executors=1": "ops_sequential,num_executors=1",
	} {
		if got := GoBackendConfig(in); got != want {
			t.Errorf("GoBackendConfig(%q) = %q, want %q", in, got, want)
		}
		if _, err := NewBackend("go:" + in); err != nil {
			t.Errorf("NewBackend(%q): %v", "go:"+in, err)
		}
	}
}

// TestDTypeForPrecision: auto is float32 on the pure-Go backend; names are
// checked.
func TestDTypeForPrecision(t *testing.T) {
	b, err := NewBackend("go")
	if err != nil {
		t.Fatal(err)
	}
	for precision, want := range map[string]dtypes.DType{"auto": dtypes.Float32, "": dtypes.Float32,
		"float32": dtypes.Float32, "bfloat16": dtypes.BFloat16} {
		if got, err := DTypeForPrecision(precision, b); err != nil || got != want {
			t.Errorf("DTypeForPrecision(%q, go) = %s, %v; want %s", precision, got, err, want)
		}
	}
	if _, err := DTypeForPrecision("fp16", b); err == nil || !strings.Contains(err.Error(), `precision "fp16"`) {
		t.Errorf("fp16: %v", err)
	}
}

func TestXLAFlags(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "--xla_gpu_enable_triton_gemm=false"},
		{"--xla_gpu_cuda_data_dir=/usr/local/cuda", "--xla_gpu_cuda_data_dir=/usr/local/cuda --xla_gpu_enable_triton_gemm=false"},
		{"--xla_gpu_enable_triton_gemm=true", "--xla_gpu_enable_triton_gemm=true"},
		{"  --xla_dump_to=/tmp/d   --xla_gpu_enable_triton_gemm=false ", "--xla_dump_to=/tmp/d   --xla_gpu_enable_triton_gemm=false"},
	} {
		if got := XLAFlags(c.in); got != c.want {
			t.Errorf("XLAFlags(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
