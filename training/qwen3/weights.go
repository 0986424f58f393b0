package qwen3

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/dtypes/bfloat16"
	"github.com/gomlx/compute/dtypes/float16"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gosqlenv/gosqlenv/training/internal/atomicfile"
)

// File names of a Hugging Face model directory.
const (
	fileConfig      = "config.json"
	fileSafetensors = "model.safetensors"
	fileSTIndex     = "model.safetensors.index.json"
)

// Weights holds a model's named tensors in host memory (gomlx
// *tensors.Tensor), keyed by Hugging Face names (see Config.Weights for the
// names and shapes).
type Weights struct {
	Config  Config
	Tensors map[string]*tensors.Tensor
}

// Names lists the weight names in Config.Weights() order.
func (w *Weights) Names() []string {
	specs := w.Config.Weights()
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	return names
}

// check verifies that Tensors holds exactly the weights of Config with
// their shapes.
func (w *Weights) check() error {
	specs := w.Config.Weights()
	want := make(map[string]bool, len(specs))
	for _, s := range specs {
		want[s.Name] = true
		t, ok := w.Tensors[s.Name]
		if !ok || t == nil {
			return fmt.Errorf("qwen3 weights: tensor %q is missing", s.Name)
		}
		if !slices.Equal(t.Shape().Dimensions, s.Shape) {
			return fmt.Errorf("qwen3 weights: tensor %q has shape %v, want %v", s.Name, t.Shape().Dimensions, s.Shape)
		}
	}
	for name := range w.Tensors {
		if !want[name] {
			return fmt.Errorf("qwen3 weights: unexpected tensor %q (not a weight of this configuration)", name)
		}
	}
	return nil
}

// randomIsNormScale says whether a weight is an RMSNorm scale (initialised to 1).
func randomIsNormScale(name string) bool {
	return strings.HasSuffix(name, "norm.weight")
}

// RandomWeights makes deterministic random weights for cfg: projections,
// embeddings and biases are normal(0, 0.02), RMSNorm scales
// 1 + uniform(-0.1, 0.1) (not exactly 1, so tests exercise them). Each
// weight's values are drawn in float32 from its own math/rand/v2 PCG stream
// (seeded with seed and the weight's index in Config.Weights()), so tensors
// are filled in parallel — billions of values in seconds for Qwen3-1.7B
// shapes — and a seed gives the same weights whatever the parallelism, and
// in every dtype up to rounding to dtype (float32, bfloat16 or float16;
// nearest even).
func RandomWeights(cfg Config, seed uint64, dtype dtypes.DType) (*Weights, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("qwen3 random weights: %w", err)
	}
	if _, err := stDTypeName(dtype); err != nil {
		return nil, fmt.Errorf("qwen3 random weights: %w", err)
	}
	specs := cfg.Weights()
	out := make([]*tensors.Tensor, len(specs))
	errs := make([]error, len(specs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, s := range specs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15+uint64(i)))
			next := func() float32 { return float32(0.02 * rng.NormFloat64()) }
			if randomIsNormScale(s.Name) {
				next = func() float32 { return float32(1 + 0.2*(rng.Float64()-0.5)) }
			}
			t := tensors.FromShape(shapes.Make(dtype, s.Shape...))
			errs[i] = t.MutableFlatData(func(flat any) {
				switch v := flat.(type) {
				case []float32:
					for j := range v {
						v[j] = next()
					}
				case []bfloat16.BFloat16:
					for j := range v {
						v[j] = bfloat16.FromFloat32(next())
					}
				case []float16.Float16:
					for j := range v {
						v[j] = float16.FromFloat32(next())
					}
				}
			})
			out[i] = t
		}()
	}
	wg.Wait()
	w := &Weights{Config: cfg, Tensors: make(map[string]*tensors.Tensor, len(specs))}
	for i, s := range specs {
		if errs[i] != nil {
			return nil, fmt.Errorf("qwen3 random weights: tensor %q: %w", s.Name, errs[i])
		}
		w.Tensors[s.Name] = out[i]
	}
	return w, nil
}

// ignoredExtra says whether an unexpected tensor in a checkpoint is one that
// transformers ignores too: lm_head.weight of a tied model (sometimes saved
// anyway) and rotary inv_freq buffers.
func ignoredExtra(cfg Config, name string) bool {
	return (name == "lm_head.weight" && cfg.TieWordEmbeddings) || strings.HasSuffix(name, "inv_freq")
}

// safetensorsIndex is model.safetensors.index.json.
type safetensorsIndex struct {
	Metadata  map[string]any    `json:"metadata"`
	WeightMap map[string]string `json:"weight_map"`
}

// LoadWeights reads a Hugging Face Qwen3 model directory: config.json and
// either model.safetensors or model.safetensors.index.json with its shards.
// Tensors stored as BF16, F16 or F32 are converted to dtype (float32,
// bfloat16 or float16; widening is exact, narrowing rounds to nearest even).
// Every weight of the configuration must be present with exactly its shape;
// lm_head.weight of a tied model and rotary inv_freq buffers are ignored,
// any other extra tensor is an error.
func LoadWeights(dir string, dtype dtypes.DType) (*Weights, error) {
	if _, err := stDTypeName(dtype); err != nil {
		return nil, fmt.Errorf("qwen3 weights: loading %s: %w", dir, err)
	}
	cfgPath := filepath.Join(dir, fileConfig)
	if _, err := os.Stat(cfgPath); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("qwen3 weights: %s has no %s (want a Hugging Face model directory with %s and %s or %s): %w", dir, fileConfig, fileConfig, fileSafetensors, fileSTIndex, err)
		}
		return nil, fmt.Errorf("qwen3 weights: %w", err)
	}
	cfg, err := ReadConfig(cfgPath)
	if err != nil {
		return nil, fmt.Errorf("qwen3 weights: %w", err)
	}

	files, where, source, err := locateTensors(dir)
	if err != nil {
		return nil, err
	}
	specs := cfg.Weights()
	if err := checkTensors(cfg, specs, where, cfgPath, source); err != nil {
		return nil, err
	}
	return readTensors(cfg, specs, files, where, dtype)
}

// locateTensors finds the safetensors files of dir and which file holds each
// tensor; source is the file that lists the tensors (model.safetensors or
// the index). Like transformers, a single model.safetensors takes
// precedence over an index (Save writes model.safetensors next to possibly
// older shards).
func locateTensors(dir string) (files []*stFile, where map[string]*stFile, source string, err error) {
	where = make(map[string]*stFile)
	indexPath := filepath.Join(dir, fileSTIndex)
	singlePath := filepath.Join(dir, fileSafetensors)
	_, singleErr := os.Stat(singlePath)
	_, indexErr := os.Stat(indexPath)
	switch {
	case singleErr == nil || !errors.Is(singleErr, fs.ErrNotExist):
		sf, err := stReadHeader(singlePath)
		if err != nil {
			return nil, nil, "", fmt.Errorf("qwen3 weights: %w", err)
		}
		for name := range sf.tensors {
			where[name] = sf
		}
		return []*stFile{sf}, where, singlePath, nil
	case indexErr == nil || !errors.Is(indexErr, fs.ErrNotExist):
		files, where, err := locateSharded(dir, indexPath)
		return files, where, indexPath, err
	}
	hint := ""
	if _, err := os.Stat(filepath.Join(dir, "pytorch_model.bin")); err == nil {
		hint = " (it has pytorch_model.bin: convert it to safetensors first)"
	}
	return nil, nil, "", fmt.Errorf("qwen3 weights: %s has neither %s nor %s%s: %w", dir, fileSafetensors, fileSTIndex, hint, singleErr)
}

// locateSharded reads model.safetensors.index.json and its shards' headers.
func locateSharded(dir, indexPath string) ([]*stFile, map[string]*stFile, error) {
	idx, err := readIndex(indexPath)
	if err != nil {
		return nil, nil, fmt.Errorf("qwen3 weights: %w", err)
	}
	shardNames, err := idx.shards(indexPath)
	if err != nil {
		return nil, nil, fmt.Errorf("qwen3 weights: %w", err)
	}
	var files []*stFile
	where := make(map[string]*stFile)
	byName := make(map[string]*stFile)
	for _, s := range shardNames {
		sf, err := stReadHeader(filepath.Join(dir, s))
		if err != nil {
			return nil, nil, fmt.Errorf("qwen3 weights: shard %s of %s: %w", s, indexPath, err)
		}
		files = append(files, sf)
		byName[s] = sf
	}
	for name, s := range idx.WeightMap {
		sf := byName[s]
		if _, ok := sf.tensors[name]; !ok {
			return nil, nil, fmt.Errorf("qwen3 weights: %s maps tensor %q to %s, which does not contain it", indexPath, name, sf.path)
		}
		where[name] = sf
	}
	// Tensors in a shard but not in the weight map are loaded by
	// transformers too: treat them like any other extra tensor.
	for _, sf := range files {
		for name := range sf.tensors {
			if _, mapped := idx.WeightMap[name]; mapped {
				continue
			}
			if other, ok := where[name]; ok {
				return nil, nil, fmt.Errorf("qwen3 weights: tensor %q is in both %s and %s", name, other.path, sf.path)
			}
			where[name] = sf
		}
	}
	return files, where, nil
}

// checkTensors checks names and shapes before any data is read: every
// weight of the configuration present with its shape, nothing else but
// what transformers ignores too.
func checkTensors(cfg Config, specs []WeightSpec, where map[string]*stFile, cfgPath, source string) error {
	want := make(map[string]bool, len(specs))
	var missing []string
	for _, s := range specs {
		want[s.Name] = true
		sf, ok := where[s.Name]
		if !ok {
			missing = append(missing, s.Name)
			continue
		}
		if e := sf.tensors[s.Name]; !slices.Equal(e.Shape, s.Shape) {
			return fmt.Errorf("qwen3 weights: tensor %q in %s has shape %v, but config.json implies %v", s.Name, sf.path, e.Shape, s.Shape)
		}
	}
	if len(missing) > 0 {
		shown := missing
		if len(shown) > 5 {
			shown = shown[:5]
		}
		return fmt.Errorf("qwen3 weights: %s is missing %d tensor(s) that %s implies: %s", source, len(missing), cfgPath, strings.Join(shown, ", "))
	}
	var extra []string
	for name := range where {
		if !want[name] && !ignoredExtra(cfg, name) {
			extra = append(extra, name)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return fmt.Errorf("qwen3 weights: unexpected tensor %q in %s (not a weight of Qwen3ForCausalLM with this config.json; %d unexpected in all)", extra[0], where[extra[0]].path, len(extra))
	}
	return nil
}

// readTensors reads the weights' data, one file at a time, converted to dtype.
func readTensors(cfg Config, specs []WeightSpec, files []*stFile, where map[string]*stFile, dtype dtypes.DType) (*Weights, error) {
	w := &Weights{Config: cfg, Tensors: make(map[string]*tensors.Tensor, len(specs))}
	for _, sf := range files {
		f, err := os.Open(sf.path)
		if err != nil {
			return nil, fmt.Errorf("qwen3 weights: %w", err)
		}
		for _, s := range specs {
			if where[s.Name] != sf {
				continue
			}
			t, err := sf.readTensor(f, s.Name, dtype)
			if err != nil {
				_ = f.Close()
				return nil, fmt.Errorf("qwen3 weights: %w", err)
			}
			w.Tensors[s.Name] = t
		}
		_ = f.Close()
	}
	return w, nil
}

// Save writes the weights to dir (created if needed) as a Hugging Face model
// directory: config.json (the Config, with torch_dtype set to dtype's name
// and the keys transformers writes filled, see WithTransformersDefaults)
// and model.safetensors with every tensor converted to dtype (float32,
// bfloat16 or float16), which transformers' Qwen3ForCausalLM.from_pretrained
// and LoadWeights read. Each file is written to a temporary file and renamed.
func (w *Weights) Save(dir string, dtype dtypes.DType) error {
	torchName, err := stTorchDTypeName(dtype)
	if err != nil {
		return fmt.Errorf("qwen3 weights: saving to %s: %w", dir, err)
	}
	cfg := w.Config
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("qwen3 weights: saving to %s: %w", dir, err)
	}
	w2 := &Weights{Config: cfg, Tensors: w.Tensors}
	if err := w2.check(); err != nil {
		return fmt.Errorf("saving to %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("qwen3 weights: saving: %w", err)
	}
	if err := stWrite(filepath.Join(dir, fileSafetensors), w2.Names(), w.Tensors, dtype); err != nil {
		return fmt.Errorf("qwen3 weights: %w", err)
	}
	cfg = cfg.WithTransformersDefaults()
	cfg.TorchDtype = torchName
	if cfg.ModelType == "" {
		cfg.ModelType = "qwen3"
	}
	if len(cfg.Architectures) == 0 {
		cfg.Architectures = []string{"Qwen3ForCausalLM"}
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return fmt.Errorf("qwen3 weights: saving config: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(dir, fileConfig), append(data, '\n')); err != nil {
		return fmt.Errorf("qwen3 weights: %w", err)
	}
	return nil
}
