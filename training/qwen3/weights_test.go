package qwen3

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/dtypes/bfloat16"
	"github.com/gomlx/compute/dtypes/float16"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/go-huggingface/hub"
	hfsafetensors "github.com/gomlx/go-huggingface/models/safetensors"
	"github.com/gomlx/gomlx/core/tensors"
)

// wtBiasedUntiedConfig is a tiny config with attention biases and an untied
// lm_head, so that every optional weight is exercised.
func wtBiasedUntiedConfig() Config {
	c := TinyConfig(512)
	c.AttentionBias = true
	c.TieWordEmbeddings = false
	c.NumHiddenLayers = 3
	c.IntermediateSize = 96
	return c
}

func wtConfigs() map[string]Config {
	return map[string]Config{"tiny": TinyConfig(512), "bias_untied": wtBiasedUntiedConfig()}
}

func wtRawBytes(t *testing.T, x *tensors.Tensor) []byte {
	t.Helper()
	var out []byte
	if err := x.ConstBytes(func(b []byte) { out = slices.Clone(b) }); err != nil {
		t.Fatal(err)
	}
	return out
}

func wtFloat32s(t *testing.T, x *tensors.Tensor) []float32 {
	t.Helper()
	var out []float32
	err := x.ConstFlatData(func(flat any) {
		switch v := flat.(type) {
		case []float32:
			out = slices.Clone(v)
		case []bfloat16.BFloat16:
			for _, e := range v {
				out = append(out, e.Float32())
			}
		case []float16.Float16:
			for _, e := range v {
				out = append(out, e.Float32())
			}
		default:
			t.Fatalf("unexpected flat type %T", flat)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// wtAssertSame checks both weight sets hold the same names, dtypes,
// shapes and bytes.
func wtAssertSame(t *testing.T, want, got *Weights) {
	t.Helper()
	if len(got.Tensors) != len(want.Tensors) {
		t.Fatalf("got %d tensors, want %d", len(got.Tensors), len(want.Tensors))
	}
	for _, name := range want.Names() {
		w, g := want.Tensors[name], got.Tensors[name]
		if g == nil {
			t.Fatalf("tensor %q missing", name)
		}
		if !w.Shape().Equal(g.Shape()) {
			t.Fatalf("tensor %q: shape %s, want %s", name, g.Shape(), w.Shape())
		}
		if !bytes.Equal(wtRawBytes(t, w), wtRawBytes(t, g)) {
			t.Fatalf("tensor %q: bytes differ", name)
		}
	}
}

func TestRandomWeights(t *testing.T) {
	for cname, cfg := range wtConfigs() {
		a, err := RandomWeights(cfg, 7, dtypes.Float32)
		if err != nil {
			t.Fatal(err)
		}
		b, err := RandomWeights(cfg, 7, dtypes.Float32)
		if err != nil {
			t.Fatal(err)
		}
		wtAssertSame(t, a, b)
		c, err := RandomWeights(cfg, 8, dtypes.Float32)
		if err != nil {
			t.Fatal(err)
		}
		name := "model.layers.0.self_attn.q_proj.weight"
		if bytes.Equal(wtRawBytes(t, a.Tensors[name]), wtRawBytes(t, c.Tensors[name])) {
			t.Errorf("%s: seeds 7 and 8 give the same %s", cname, name)
		}

		specs := cfg.Weights()
		if !slices.Equal(a.Names(), func() []string {
			var n []string
			for _, s := range specs {
				n = append(n, s.Name)
			}
			return n
		}()) {
			t.Errorf("%s: Names() is not in Config.Weights() order", cname)
		}
		if cfg.AttentionBias && !slices.Contains(a.Names(), "model.layers.2.self_attn.o_proj.bias") {
			t.Errorf("%s: biases missing from %v", cname, a.Names())
		}
		if !cfg.TieWordEmbeddings && !slices.Contains(a.Names(), "lm_head.weight") {
			t.Errorf("%s: lm_head.weight missing", cname)
		}

		for _, dt := range []dtypes.DType{dtypes.BFloat16, dtypes.Float16} {
			h, err := RandomWeights(cfg, 7, dt)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range specs {
				x := h.Tensors[s.Name]
				if x.DType() != dt || !slices.Equal(x.Shape().Dimensions, s.Shape) {
					t.Fatalf("%s %s: %s is %s, want %s %v", cname, dt, s.Name, x.Shape(), dt, s.Shape)
				}
				vals := wtFloat32s(t, x)
				ref := wtFloat32s(t, a.Tensors[s.Name])
				var sum, sumSq float64
				exactOnes := 0
				for i, v := range vals {
					sum += float64(v)
					sumSq += float64(v) * float64(v)
					if v == 1 {
						exactOnes++
					}
					// Same values as the float32 weights, rounded to nearest even.
					want := bfloat16.FromFloat32(ref[i]).Float32()
					if dt == dtypes.Float16 {
						want = float16.FromFloat32(ref[i]).Float32()
					}
					if v != want {
						t.Fatalf("%s %s: %s[%d] = %g, float32 weights have %g", cname, dt, s.Name, i, v, ref[i])
					}
				}
				n := float64(len(vals))
				mean, std := sum/n, math.Sqrt(sumSq/n-(sum/n)*(sum/n))
				if randomIsNormScale(s.Name) {
					lo, hi := slices.Min(vals), slices.Max(vals)
					if lo < 0.89 || hi > 1.11 || std < 0.02 || std > 0.1 || exactOnes == len(vals) {
						t.Errorf("%s %s: norm %s has values in [%.3f, %.3f], std %.3f, want 1 ± 0.1", cname, dt, s.Name, lo, hi, std)
					}
				} else if std < 0.015 || std > 0.025 || math.Abs(mean) > 0.01 {
					t.Errorf("%s %s: %s has mean %.4f std %.4f, want ~N(0, 0.02) (all zero is the bf16 RandomNormal pitfall)", cname, dt, s.Name, mean, std)
				}
			}
		}
	}

	moe := TinyConfig(512)
	moe.NumExperts = 8
	if _, err := RandomWeights(moe, 1, dtypes.Float32); err == nil || !strings.Contains(err.Error(), "mixture-of-experts") {
		t.Errorf("MoE config: err = %v", err)
	}
	if _, err := RandomWeights(TinyConfig(512), 1, dtypes.Int32); err == nil {
		t.Error("int32 weights: no error")
	}
}

// wtParseFile parses a safetensors file independently of the
// package's reader.
func wtParseFile(t *testing.T, path string) (header map[string]json.RawMessage, headerLen uint64, data []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	headerLen = binary.LittleEndian.Uint64(b)
	if err := json.Unmarshal(b[8:8+headerLen], &header); err != nil {
		t.Fatalf("%s: header: %v", path, err)
	}
	return header, headerLen, b[8+headerLen:]
}

func TestSaveLoadRoundTrip(t *testing.T) {
	for cname, cfg := range wtConfigs() {
		for _, dt := range []dtypes.DType{dtypes.Float32, dtypes.BFloat16, dtypes.Float16} {
			t.Run(fmt.Sprintf("%s_%s", cname, dt), func(t *testing.T) {
				w, err := RandomWeights(cfg, 3, dt)
				if err != nil {
					t.Fatal(err)
				}
				dir := filepath.Join(t.TempDir(), "new", "model") // Save creates it
				if err := w.Save(dir, dt); err != nil {
					t.Fatal(err)
				}
				got, err := LoadWeights(dir, dt)
				if err != nil {
					t.Fatal(err)
				}
				wtAssertSame(t, w, got)

				// config.json round-trips, with torch_dtype set and the keys
				// transformers writes filled.
				rc, err := ReadConfig(filepath.Join(dir, "config.json"))
				if err != nil {
					t.Fatal(err)
				}
				want := cfg.WithTransformersDefaults()
				if err := want.Validate(); err != nil {
					t.Fatal(err)
				}
				want.TorchDtype = map[dtypes.DType]string{dtypes.Float32: "float32", dtypes.BFloat16: "bfloat16", dtypes.Float16: "float16"}[dt]
				if !reflect.DeepEqual(rc, want) {
					t.Errorf("config.json round trip:\n got %+v\nwant %+v", rc, want)
				}
				if !reflect.DeepEqual(got.Config, want) {
					t.Errorf("LoadWeights config:\n got %+v\nwant %+v", got.Config, want)
				}

				// The file: 8-byte aligned header, metadata, sorted contiguous tensors.
				path := filepath.Join(dir, "model.safetensors")
				header, hlen, data := wtParseFile(t, path)
				if hlen%8 != 0 {
					t.Errorf("header length %d is not a multiple of 8", hlen)
				}
				if string(header["__metadata__"]) != `{"format":"pt"}` {
					t.Errorf("__metadata__ = %s", header["__metadata__"])
				}
				names := w.Names()
				slices.Sort(names)
				var offset int64
				stName := map[dtypes.DType]string{dtypes.Float32: "F32", dtypes.BFloat16: "BF16", dtypes.Float16: "F16"}[dt]
				for _, name := range names {
					var e stEntry
					if err := json.Unmarshal(header[name], &e); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					size := int64(w.Tensors[name].Size() * dt.Size())
					if e.DType != stName || !slices.Equal(e.Shape, w.Tensors[name].Shape().Dimensions) || e.DataOffsets != [2]int64{offset, offset + size} {
						t.Fatalf("%s: entry %+v, want %s %v [%d %d]", name, e, stName, w.Tensors[name].Shape().Dimensions, offset, offset+size)
					}
					if !bytes.Equal(data[offset:offset+size], wtRawBytes(t, w.Tensors[name])) {
						t.Fatalf("%s: data differs", name)
					}
					offset += size
				}
				if offset != int64(len(data)) || len(header) != len(names)+1 {
					t.Errorf("data section %d bytes, tensors %d; header has %d entries for %d tensors", len(data), offset, len(header), len(names))
				}
				entries, _ := os.ReadDir(dir)
				if len(entries) != 2 {
					t.Errorf("dir has %d entries (temp files left?): %v", len(entries), entries)
				}

				// An independent reader (go-huggingface's) reads the same tensors.
				m, err := hfsafetensors.New(hub.NewLocal(dir))
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for tn, err := range m.IterTensors(nil) {
					if err != nil {
						t.Fatal(err)
					}
					n++
					if !bytes.Equal(wtRawBytes(t, tn.Tensor), wtRawBytes(t, w.Tensors[tn.Name])) || tn.Tensor.DType() != dt {
						t.Fatalf("go-huggingface reads %s differently", tn.Name)
					}
				}
				if n != len(names) {
					t.Errorf("go-huggingface read %d tensors, want %d", n, len(names))
				}
			})
		}
	}
}

// wtWriteSharded saves w as two shards and an index in dir.
func wtWriteSharded(t *testing.T, w *Weights, dir string, dt dtypes.DType) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := w.Save(dir, dt); err != nil { // for config.json
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "model.safetensors")); err != nil {
		t.Fatal(err)
	}
	names := w.Names()
	half := len(names) / 2
	shards := map[string][]string{
		"model-00001-of-00002.safetensors": names[:half],
		"model-00002-of-00002.safetensors": names[half:],
	}
	weightMap := map[string]string{}
	var total int64
	for file, ns := range shards {
		if err := stWrite(filepath.Join(dir, file), ns, w.Tensors, dt); err != nil {
			t.Fatal(err)
		}
		for _, n := range ns {
			weightMap[n] = file
			total += int64(w.Tensors[n].Size() * dt.Size())
		}
	}
	idx, _ := json.MarshalIndent(map[string]any{"metadata": map[string]any{"total_size": total}, "weight_map": weightMap}, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "model.safetensors.index.json"), idx, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadSharded(t *testing.T) {
	w, err := RandomWeights(wtBiasedUntiedConfig(), 11, dtypes.BFloat16)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	wtWriteSharded(t, w, dir, dtypes.BFloat16)
	got, err := LoadWeights(dir, dtypes.BFloat16)
	if err != nil {
		t.Fatal(err)
	}
	wtAssertSame(t, w, got)

	// Save next to the shards: the new model.safetensors takes precedence,
	// as in transformers.
	w2, err := RandomWeights(wtBiasedUntiedConfig(), 12, dtypes.BFloat16)
	if err != nil {
		t.Fatal(err)
	}
	dir2 := t.TempDir()
	wtWriteSharded(t, w, dir2, dtypes.BFloat16)
	if err := w2.Save(dir2, dtypes.BFloat16); err != nil {
		t.Fatal(err)
	}
	if got, err = LoadWeights(dir2, dtypes.BFloat16); err != nil {
		t.Fatal(err)
	}
	wtAssertSame(t, w2, got)

	// An index that maps a tensor to the wrong shard.
	idxPath := filepath.Join(dir, "model.safetensors.index.json")
	var idx safetensorsIndex
	b, _ := os.ReadFile(idxPath)
	if err := json.Unmarshal(b, &idx); err != nil {
		t.Fatal(err)
	}
	idx.WeightMap["model.embed_tokens.weight"] = "model-00002-of-00002.safetensors"
	b, _ = json.Marshal(idx)
	if err := os.WriteFile(idxPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = LoadWeights(dir, dtypes.BFloat16)
	if err == nil || !strings.Contains(err.Error(), "model.embed_tokens.weight") || !strings.Contains(err.Error(), "model-00002-of-00002.safetensors") {
		t.Errorf("wrong shard: err = %v", err)
	}

	// A missing shard.
	idx.WeightMap["model.embed_tokens.weight"] = "model-00003-of-00002.safetensors"
	b, _ = json.Marshal(idx)
	if err := os.WriteFile(idxPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = LoadWeights(dir, dtypes.BFloat16)
	if err == nil || !strings.Contains(err.Error(), "model-00003-of-00002.safetensors") {
		t.Errorf("missing shard: err = %v", err)
	}
}

func TestLoadConverts(t *testing.T) {
	cfg := TinyConfig(512)
	w32, err := RandomWeights(cfg, 5, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	w16, err := RandomWeights(cfg, 5, dtypes.BFloat16)
	if err != nil {
		t.Fatal(err)
	}
	dirBF, dirF32 := t.TempDir(), t.TempDir()
	if err := w16.Save(dirBF, dtypes.BFloat16); err != nil {
		t.Fatal(err)
	}
	if err := w32.Save(dirF32, dtypes.Float32); err != nil {
		t.Fatal(err)
	}

	// BF16 file as F32: the exact widened values.
	got, err := LoadWeights(dirBF, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range w16.Names() {
		g := got.Tensors[name]
		if g.DType() != dtypes.Float32 {
			t.Fatalf("%s: dtype %s", name, g.DType())
		}
		gv := tensors.MustCopyFlatData[float32](g)
		wv := tensors.MustCopyFlatData[bfloat16.BFloat16](w16.Tensors[name])
		for i := range wv {
			if math.Float32bits(gv[i]) != uint32(wv[i])<<16 {
				t.Fatalf("%s[%d]: %g, want %g", name, i, gv[i], wv[i].Float32())
			}
		}
	}

	// F32 file as BF16: round to nearest even, i.e. what RandomWeights(bf16) gives.
	got, err = LoadWeights(dirF32, dtypes.BFloat16)
	if err != nil {
		t.Fatal(err)
	}
	wtAssertSame(t, w16, got)

	// F32 weights saved as BF16 (conversion on write) equal the bf16 weights.
	dir := t.TempDir()
	if err := w32.Save(dir, dtypes.BFloat16); err != nil {
		t.Fatal(err)
	}
	got, err = LoadWeights(dir, dtypes.BFloat16)
	if err != nil {
		t.Fatal(err)
	}
	wtAssertSame(t, w16, got)

	// F16 and BF16 conversion of a few edge values.
	vals := []float32{0, float32(math.Copysign(0, -1)), 1, -2.5, 1e-8, 65504, 3.14159, float32(math.Inf(1)), 1.00390625 /* bf16 tie */}
	raw := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	for _, dt := range []dtypes.DType{dtypes.BFloat16, dtypes.Float16} {
		x, err := stDecode(raw, dtypes.Float32, dt, []int{len(vals)})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := stEncode(&buf, x, dtypes.Float32); err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			got := math.Float32frombits(binary.LittleEndian.Uint32(buf.Bytes()[4*i:]))
			var want float32
			if dt == dtypes.BFloat16 {
				want = bfloat16.FromFloat32(v).Float32()
			} else {
				want = float16.FromFloat32(v).Float32()
			}
			if math.Float32bits(got) != math.Float32bits(want) {
				t.Errorf("%s: %g -> %g, want %g", dt, v, got, want)
			}
		}
	}
	if got := bfloat16.FromFloat32(1.00390625).Float32(); got != 1 {
		t.Errorf("bf16 rounding of a tie: %g, want 1 (round to nearest even)", got)
	}
}

// writeModel writes config.json and a model.safetensors with the given
// tensors (in whatever dtype they have).
func wtWriteModel(t *testing.T, dir string, cfg Config, ts map[string]*tensors.Tensor) {
	t.Helper()
	data, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	var names []string
	for n := range ts {
		names = append(names, n)
	}
	if err := stWrite(filepath.Join(dir, "model.safetensors"), names, ts, dtypes.Float32); err != nil {
		t.Fatal(err)
	}
}

func TestLoadErrors(t *testing.T) {
	cfg := wtBiasedUntiedConfig()
	w, err := RandomWeights(cfg, 1, dtypes.Float32)
	if err != nil {
		t.Fatal(err)
	}
	with := func(edit func(m map[string]*tensors.Tensor)) map[string]*tensors.Tensor {
		m := maps.Clone(w.Tensors)
		edit(m)
		return m
	}
	expectErr := func(t *testing.T, dir string, parts ...string) {
		t.Helper()
		_, err := LoadWeights(dir, dtypes.Float32)
		if err == nil {
			t.Fatalf("no error, want one mentioning %q", parts)
		}
		for _, p := range parts {
			if !strings.Contains(err.Error(), p) {
				t.Errorf("error %q does not mention %q", err, p)
			}
		}
	}

	t.Run("missing tensor", func(t *testing.T) {
		dir := t.TempDir()
		wtWriteModel(t, dir, cfg, with(func(m map[string]*tensors.Tensor) { delete(m, "model.layers.1.mlp.up_proj.weight") }))
		expectErr(t, dir, "model.layers.1.mlp.up_proj.weight", "missing", dir)
	})
	t.Run("wrong shape", func(t *testing.T) {
		dir := t.TempDir()
		wtWriteModel(t, dir, cfg, with(func(m map[string]*tensors.Tensor) {
			m["model.layers.0.self_attn.k_proj.weight"] = tensors.FromShape(shapes.Make(dtypes.Float32, 16, 64))
		}))
		expectErr(t, dir, "model.layers.0.self_attn.k_proj.weight", "[16 64]", "[32 64]", filepath.Join(dir, "model.safetensors"))
	})
	t.Run("unexpected tensor", func(t *testing.T) {
		dir := t.TempDir()
		wtWriteModel(t, dir, cfg, with(func(m map[string]*tensors.Tensor) {
			m["model.layers.0.mlp.extra_proj.weight"] = tensors.FromShape(shapes.Make(dtypes.Float32, 4))
		}))
		expectErr(t, dir, "unexpected", "model.layers.0.mlp.extra_proj.weight")
	})
	t.Run("ignored extras", func(t *testing.T) {
		tied := TinyConfig(512)
		wt, err := RandomWeights(tied, 2, dtypes.Float32)
		if err != nil {
			t.Fatal(err)
		}
		m := maps.Clone(wt.Tensors)
		m["lm_head.weight"] = wt.Tensors["model.embed_tokens.weight"]
		m["model.layers.0.self_attn.rotary_emb.inv_freq"] = tensors.FromShape(shapes.Make(dtypes.Float32, 8))
		dir := t.TempDir()
		wtWriteModel(t, dir, tied, m)
		got, err := LoadWeights(dir, dtypes.Float32)
		if err != nil {
			t.Fatal(err)
		}
		wtAssertSame(t, wt, got)
	})
	t.Run("truncated file", func(t *testing.T) {
		dir := t.TempDir()
		if err := w.Save(dir, dtypes.Float32); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "model.safetensors")
		st, _ := os.Stat(path)
		if err := os.Truncate(path, st.Size()-100); err != nil {
			t.Fatal(err)
		}
		expectErr(t, dir, "truncated", path)
	})
	t.Run("header length larger than file", func(t *testing.T) {
		dir := t.TempDir()
		if err := w.Save(dir, dtypes.Float32); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "model.safetensors")
		b, _ := os.ReadFile(path)
		binary.LittleEndian.PutUint64(b, uint64(len(b)))
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		expectErr(t, dir, "header length", "larger than the file", path)
	})
	t.Run("short file", func(t *testing.T) {
		dir := t.TempDir()
		if err := w.Save(dir, dtypes.Float32); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "model.safetensors")
		if err := os.WriteFile(path, []byte{1, 2, 3}, 0o644); err != nil {
			t.Fatal(err)
		}
		expectErr(t, dir, "too short", path)
	})
	t.Run("bad header JSON", func(t *testing.T) {
		dir := t.TempDir()
		if err := w.Save(dir, dtypes.Float32); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "model.safetensors")
		b, _ := os.ReadFile(path)
		b[8] = '['
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		expectErr(t, dir, "not valid JSON", path)
	})
	t.Run("unsupported stored dtype", func(t *testing.T) {
		dir := t.TempDir()
		if err := w.Save(dir, dtypes.Float32); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "model.safetensors")
		b, _ := os.ReadFile(path)
		// Retype lm_head.weight as I32 (same size, so the header stays valid).
		b = bytes.Replace(b, []byte(`"lm_head.weight":{"dtype":"F32"`), []byte(`"lm_head.weight":{"dtype":"I32"`), 1)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		expectErr(t, dir, "lm_head.weight", "I32")
	})
	t.Run("missing config.json", func(t *testing.T) {
		dir := t.TempDir()
		if err := w.Save(dir, dtypes.Float32); err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join(dir, "config.json"))
		expectErr(t, dir, dir, "config.json")
	})
	t.Run("no safetensors", func(t *testing.T) {
		dir := t.TempDir()
		if err := w.Save(dir, dtypes.Float32); err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join(dir, "model.safetensors"))
		expectErr(t, dir, dir, "model.safetensors", "model.safetensors.index.json")
	})
	t.Run("MoE config", func(t *testing.T) {
		dir := t.TempDir()
		if err := w.Save(dir, dtypes.Float32); err != nil {
			t.Fatal(err)
		}
		moe := cfg
		moe.Architectures = []string{"Qwen3MoeForCausalLM"}
		moe.ModelType = "qwen3_moe"
		moe.NumExperts = 128
		data, _ := json.Marshal(moe)
		os.WriteFile(filepath.Join(dir, "config.json"), data, 0o644)
		expectErr(t, dir, "mixture-of-experts", filepath.Join(dir, "config.json"))
	})
	t.Run("save checks tensors", func(t *testing.T) {
		bad := &Weights{Config: cfg, Tensors: with(func(m map[string]*tensors.Tensor) { delete(m, "model.norm.weight") })}
		if err := bad.Save(t.TempDir(), dtypes.Float32); err == nil || !strings.Contains(err.Error(), "model.norm.weight") {
			t.Errorf("Save with a missing tensor: err = %v", err)
		}
		bad = &Weights{Config: cfg, Tensors: with(func(m map[string]*tensors.Tensor) {
			m["model.norm.weight"] = tensors.FromShape(shapes.Make(dtypes.Float32, 3))
		})}
		if err := bad.Save(t.TempDir(), dtypes.Float32); err == nil || !strings.Contains(err.Error(), "model.norm.weight") {
			t.Errorf("Save with a wrong shape: err = %v", err)
		}
		if err := w.Save(t.TempDir(), dtypes.Int8); err == nil {
			t.Error("Save as int8: no error")
		}
	})
}
