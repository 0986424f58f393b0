package qwen3

import (
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/gomlx/compute"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/gobackend"
	"github.com/gomlx/go-xla/compute/xla"
)

// DefaultBackend is the backend used when neither the caller nor
// $GOMLX_BACKEND names one: the pure-Go CPU backend, which needs no runtime
// files. XLA is never tried silently.
const DefaultBackend = gobackend.BackendName

func init() {
	// Plugins are never downloaded at run time: they come with the machine's
	// JAX installation or PJRT_PLUGIN_LIBRARY_PATH (see README, GPU).
	xla.EnableAutoInstall(false)
}

// NewBackend returns the compute backend named by spec, in GoMLX's
// "<name>[:<config>]" form: "go" (pure Go, CPU; "go:parallelism=2"),
// "xla:cuda" (a PJRT plugin named pjrt_c_api_cuda_plugin.so on
// PJRT_PLUGIN_LIBRARY_PATH) or "xla:/path/to/plugin.so". An empty spec
// means $GOMLX_BACKEND, then DefaultBackend. A failure names the backend and
// plugin that were tried.
func NewBackend(spec string) (compute.Backend, error) {
	source := "argument"
	if spec == "" {
		spec, source = os.Getenv(compute.ConfigEnvVar), "$"+compute.ConfigEnvVar
	}
	if spec == "" {
		spec, source = DefaultBackend, "default"
	}
	name, config, _ := strings.Cut(spec, ":")
	var (
		b   compute.Backend
		err error
	)
	switch name {
	case gobackend.BackendName:
		b, err = gobackend.New(GoBackendConfig(config))
	case xla.BackendName:
		os.Setenv("XLA_FLAGS", XLAFlags(os.Getenv("XLA_FLAGS")))
		b, err = xla.New(config)
		if err != nil {
			return nil, fmt.Errorf("backend %q (from %s): XLA/PJRT plugin %q could not be loaded: %w; "+
				"for CUDA point GOMLX_BACKEND at the plugin of a JAX installation "+
				"(xla:<site-packages>/jax_plugins/xla_cuda13/xla_cuda_plugin.so) and LD_LIBRARY_PATH at its nvidia/*/lib "+
				"directories (README, GPU), or use GOMLX_BACKEND=go for the CPU", spec, source, config, err)
		}
	default:
		return nil, fmt.Errorf("backend %q (from %s): unknown backend %q: use \"go\" (CPU) or \"xla:<plugin>\"", spec, source, name)
	}
	if err != nil {
		return nil, fmt.Errorf("backend %q (from %s): %w", spec, source, err)
	}
	return b, nil
}

// DefaultXLAFlags are the XLA flags NewBackend adds to $XLA_FLAGS for an
// XLA backend, each unless $XLA_FLAGS already sets that flag.
//
// --xla_gpu_enable_triton_gemm=false: XLA's Triton matrix-product kernels
// are autotuned at every compilation. On an H200 (2026-11-28, BENCHMARKS.md
// "GPU") the first call of a tiny training step took 14.3 s with them and
// 7.1 s without (autotuning off altogether: 7.5 s, with slower steps), the
// compiled step as fast (3.0 vs 3.4 ms); the notebook's preset spent 67 s
// of its 128 s compiling 13 programs. cuBLAS serves the products instead.
// Set XLA_FLAGS=--xla_gpu_enable_triton_gemm=true to get XLA's default.
var DefaultXLAFlags = []string{"--xla_gpu_enable_triton_gemm=false"}

// XLAFlags returns flags (the value of $XLA_FLAGS) with each of
// DefaultXLAFlags appended unless flags already sets it.
func XLAFlags(flags string) string {
	set := map[string]bool{}
	for _, f := range strings.Fields(flags) {
		name, _, _ := strings.Cut(strings.TrimLeft(f, "-"), "=")
		set[name] = true
	}
	out := strings.TrimSpace(flags)
	for _, f := range DefaultXLAFlags {
		name, _, _ := strings.Cut(strings.TrimLeft(f, "-"), "=")
		if !set[name] {
			out = strings.TrimSpace(out + " " + f)
		}
	}
	return out
}

// GoBackendConfig completes a pure-Go backend configuration: unless it
// sets num_executors, it sets it to GOMAXPROCS. The backend's worker pool
// has 2·GOMAXPROCS slots; by default a program keeps 7 executor goroutines
// (at most slots − 1) waiting for ready operations, and idle ones still hold
// their slots, so a matrix product finds one slot left and runs on one
// core (measured: 1.05–1.15 cores for a 1024×256 by 256×4096 product on 2
// cores). With GOMAXPROCS executors, independent operations still run
// side by side and each product splits over the cores: a training step of
// the benchmark shape went from 1.66 to 1.92 cores and 508 to 447 ms
// (BENCHMARKS.md).
func GoBackendConfig(config string) string {
	for _, opt := range strings.Split(config, ",") {
		if key, _, _ := strings.Cut(opt, "="); key == "num_executors" {
			return config
		}
	}
	executors := fmt.Sprintf("num_executors=%d", runtime.GOMAXPROCS(0))
	if config == "" {
		return executors
	}
	return executors + "," + config
}

// Precisions are the names DTypeForPrecision accepts.
var Precisions = []string{"auto", "float32", "bfloat16"}

// DTypeForPrecision resolves a precision name to the model's dtype on
// backend: "float32", "bfloat16", or "auto" (also ""), which is float32 on
// the pure-Go CPU backend — where bfloat16 saves memory but no time, and
// its matrix products are computed in float32 anyway (see CheckHalfMatMul)
// — and bfloat16 on the others (XLA: GPUs compute it natively).
func DTypeForPrecision(precision string, backend compute.Backend) (dtypes.DType, error) {
	switch precision {
	case "float32":
		return dtypes.Float32, nil
	case "bfloat16":
		return dtypes.BFloat16, nil
	case "auto", "":
		if halfProductsInFloat32(backend) {
			return dtypes.Float32, nil
		}
		return dtypes.BFloat16, nil
	}
	return dtypes.InvalidDType, fmt.Errorf("precision %q: want one of %v", precision, Precisions)
}

// IsGoBackend reports whether backend is the pure-Go CPU backend (which
// compiles a program in milliseconds; XLA takes seconds).
func IsGoBackend(backend compute.Backend) bool { return isGoBackend(backend) }

// isGoBackend reports whether backend is the pure-Go CPU backend.
func isGoBackend(backend compute.Backend) bool {
	// String is the registered name ("go"); this backend's Name is "Go Backend".
	return backend != nil && backend.String() == gobackend.BackendName
}
