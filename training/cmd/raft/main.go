// Command raft runs rejection-sampling fine-tuning (training/raft) of a Qwen3
// model on prompts scored by a verifier — the reference system's RAFT on code
// tasks, with the sandboxed C++ verifier of training/verify:
//
//	raft -prompts prompts.jsonl -verifier verifier.yaml [-config raft.yaml] [-model Qwen/Qwen3-1.7B]
//	     [-backend xla:…] [-precision bfloat16] [-system "…"] [-output_dir dir] [-resume]
//
// prompts.jsonl holds one JSON object per line, {"id": "square", "prompt":
// "Read n and print n squared.\nExample: input=5, output=25"}; examples
// written in a prompt become that prompt's test cases (verify.ExtractTestCases),
// else the verifier's own test_cases apply. verifier.yaml is training/verify's
// configuration (verifier: {type: execution, match_mode: …, test_cases: …});
// raft.yaml is training/raft's Config (samples_per_prompt, num_cycles, …).
// Each cycle is logged to the terminal and to output_dir/raft_log.jsonl, and
// checkpointed to output_dir/cycle-N (Hugging Face safetensors with the
// tokenizer files). For RAFT on the SQL environment, see `train … raft`.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/gosqlenv/gosqlenv/training"
	"github.com/gosqlenv/gosqlenv/training/qwen3"
	"github.com/gosqlenv/gosqlenv/training/raft"
	"github.com/gosqlenv/gosqlenv/training/verify"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "raft:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	prompts, verifier, config, model, backend, precision, system, outputDir string
	resume                                                                  bool
}

func parse(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("raft", flag.ContinueOnError)
	fs.StringVar(&o.prompts, "prompts", "", "JSON-lines file of prompts, {\"id\": …, \"prompt\": …} per line (required)")
	fs.StringVar(&o.verifier, "verifier", "", "verifier configuration, YAML or JSON (training/verify; required)")
	fs.StringVar(&o.config, "config", "", "RAFT configuration, YAML or JSON (training/raft.Config; default: the reference setup)")
	fs.StringVar(&o.model, "model", qwen3.DefaultModelID, "Qwen3 model: a Hugging Face id or a local directory")
	fs.StringVar(&o.backend, "backend", "", `compute backend ("go", "xla:/path/plugin.so"); empty: $GOMLX_BACKEND, then "go"`)
	fs.StringVar(&o.precision, "precision", "", "model dtype: auto (float32 on the CPU, bfloat16 on GPU), bfloat16 or float32 (default: the RAFT config's precision)")
	fs.StringVar(&o.system, "system", "", "system prompt opening every chat (default: none)")
	fs.StringVar(&o.outputDir, "output_dir", "", "output directory (default: the RAFT config's output_dir)")
	fs.BoolVar(&o.resume, "resume", false, "continue the run in output_dir after its last completed cycle")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.prompts == "" || o.verifier == "" {
		return o, errors.New("-prompts and -verifier are required (see -h)")
	}
	return o, nil
}

func run(ctx context.Context, args []string, progress io.Writer) error {
	o, err := parse(args)
	if err != nil {
		return err
	}
	cfg := raft.DefaultConfig()
	if o.config != "" {
		if cfg, err = raft.LoadConfig(o.config); err != nil {
			return err
		}
	}
	if o.outputDir != "" {
		cfg.OutputDir = o.outputDir
	}
	if o.precision != "" {
		cfg.Precision = o.precision
	}
	cfg.Resume = cfg.Resume || o.resume
	if err := cfg.Validate(); err != nil {
		return err
	}
	prompts, err := readPrompts(o.prompts)
	if err != nil {
		return err
	}
	v, err := verify.LoadConfig(o.verifier)
	if err != nil {
		return err
	}
	backend, err := qwen3.NewBackend(o.backend)
	if err != nil {
		return err
	}
	dtype, err := qwen3.DTypeForPrecision(cfg.Precision, backend)
	if err != nil {
		return err
	}
	model, tok, dir, err := training.LoadModelAndTokenizer(ctx, backend, o.model, dtype)
	if err != nil {
		return fmt.Errorf("model %q: %w", o.model, err)
	}
	src := &raft.PromptSource{Model: model, Tokenizer: tok, Prompts: prompts, Verifier: v, SystemPrompt: o.system,
		LengthBucket: cfg.LengthBucket}
	tr, err := raft.New(cfg, model, src)
	if err != nil {
		return err
	}
	tr.TokenizerDir, tr.Progress = dir, progress
	fmt.Fprintf(progress, "RAFT of %s (%d parameters) on %s: %d cycles of %d prompts × %d samples, keep reward ≥ %g then the top %g (%s)\n",
		o.model, model.Config.NumParameters(), backend.Name(), cfg.NumCycles, len(prompts), cfg.SamplesPerPrompt,
		cfg.RewardThreshold, cfg.KeepTopFraction, cfg.Selection)
	if _, err := tr.Run(ctx); err != nil {
		return err
	}
	fmt.Fprintf(progress, "cycle log: %s/%s\n", cfg.OutputDir, raft.LogFile)
	return nil
}

// readPrompts reads a JSON-lines prompt file; blank lines are skipped.
func readPrompts(path string) ([]raft.Prompt, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("prompts: %w", err)
	}
	defer f.Close()
	var out []raft.Prompt
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var rec struct {
			ID     string `json:"id"`
			Prompt string `json:"prompt"`
		}
		dec := json.NewDecoder(strings.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rec); err != nil {
			return nil, fmt.Errorf("prompts %s line %d: %w", path, line, err)
		}
		if strings.TrimSpace(rec.Prompt) == "" {
			return nil, fmt.Errorf("prompts %s line %d: empty \"prompt\"", path, line)
		}
		if rec.ID == "" {
			rec.ID = fmt.Sprint(len(out))
		}
		out = append(out, raft.Prompt{ID: rec.ID, Text: rec.Prompt})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("prompts %s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("prompts %s: no prompts", path)
	}
	return out, nil
}
