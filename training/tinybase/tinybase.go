// Package tinybase ships the tiny preset's pre-trained base model: a small
// Qwen3 (training.TinyModelConfig with training.TinyPretrainHeads attention
// heads, 0.7 M parameters) with its own byte-level BPE vocabulary,
// initialised at random and then trained by this project to imitate the
// environment's oracle, in Hugging Face's format (config.json,
// model.safetensors, tokenizer.json), embedded in the binary.
//
// Its pre-training questions come from 160 redrawn instances of the bundled
// `university` database (bundled.GenerateInstance: the same schema and
// question templates, rows and words redrawn, so every name, number and
// answer changes from one instance to the next): memorising constants
// cannot work there, and the model learned to copy a question's constants
// into its SQL and a result into its answer. It therefore answers questions
// of the bundled database it never saw (BENCHMARKS.md, "Pre-training on
// redrawn instances"). The questions the training pipeline trains on, holds
// out and evaluates on were left out of its pre-training
// (Provenance.SeenSQL lets a run check that); the evaluation databases
// were never read. model/provenance.json records the command and commit
// that made it, settings, data, machine and time.
package tinybase

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

//go:embed model
var files embed.FS

// ModelDir is the folder of this package's source that holds the model's
// files (the pretrain command writes them there).
const ModelDir = "model"

// ProvenanceFile is the name of the file that records how the model was made.
const ProvenanceFile = "provenance.json"

// Provenance records how the base model was made.
type Provenance struct {
	// Command is the command line that rebuilds the model, run from the
	// module's root.
	Command string `json:"command"`
	// GitCommit is the commit of the code that trained it ("" if unknown).
	GitCommit string `json:"git_commit"`
	// Created is the time training ended (RFC 3339).
	Created string `json:"created"`
	// Machine describes the computer that trained it (CPU, threads).
	Machine string `json:"machine"`
	// WallSeconds is the whole command's wall time.
	WallSeconds float64 `json:"wall_seconds"`
	// Databases are the databases of its pre-training questions.
	Databases []string `json:"databases"`
	// Difficulties are the difficulty levels of its pre-training questions.
	Difficulties []string `json:"difficulties"`
	// Instances is the number of redrawn instances of each database, and
	// PerInstance the questions taken from each (0: all).
	Instances   int `json:"instances"`
	PerInstance int `json:"per_instance"`
	// Renamed: each instance was seen as a renamed copy (tables and
	// columns under other names); Reworded: its questions were reworded.
	Renamed  bool `json:"renamed,omitempty"`
	Reworded bool `json:"reworded,omitempty"`
	// RenamedCopies is the number of renamed copies of each instance, its
	// questions asked on them in turn (0 in earlier provenance: one).
	RenamedCopies int `json:"renamed_copies,omitempty"`
	// Loss names the tokens trained on: "text" (every token of each oracle
	// turn) or "actions" (the oracle's actions only).
	Loss string `json:"loss"`
	// Questions and Samples count the pre-training questions and the oracle
	// turns made of them (one sample per action).
	Questions int `json:"questions"`
	Samples   int `json:"samples"`
	// Epochs, LearningRate, BatchSize and Seed are the training settings.
	Epochs       int     `json:"epochs"`
	LearningRate float64 `json:"learning_rate"`
	BatchSize    int     `json:"batch_size"`
	Seed         int64   `json:"seed"`
	// LengthGroupBatches is the runs of batches sorted by sample length
	// together (sft_length_group_batches; 0: plain shuffled batches).
	LengthGroupBatches int `json:"length_group_batches"`
	// Parameters is the model's parameter count.
	Parameters int64 `json:"parameters"`
	// FinalLoss is the mean token NLL of the last epoch.
	FinalLoss float64 `json:"final_loss"`
	// Excluded describes the questions left out of pre-training.
	Excluded string `json:"excluded"`
	// Evaluation is the base model's success on the tiny preset's training
	// and held-out questions when it was made.
	Evaluation string `json:"evaluation"`
	// SeenSQL holds SQLKey of the gold SQL of every pre-training question,
	// sorted: a run checks its held-out and evaluation questions against it.
	SeenSQL []string `json:"seen_sql"`
}

// SQLKey is the fingerprint of a gold SQL query kept in Provenance.SeenSQL:
// the first 16 hex digits of the SHA-256 of the query with runs of white
// space folded to one space and the ends trimmed.
func SQLKey(sql string) string {
	sum := sha256.Sum256([]byte(strings.Join(strings.Fields(sql), " ")))
	return hex.EncodeToString(sum[:8])
}

// Seen reports whether a question with this gold SQL was among the
// pre-training questions.
func (p Provenance) Seen(goldSQL string) bool {
	k := SQLKey(goldSQL)
	i := sort.SearchStrings(p.SeenSQL, k)
	return i < len(p.SeenSQL) && p.SeenSQL[i] == k
}

// ReadProvenance reads provenance.json of a model directory.
func ReadProvenance(dir string) (Provenance, error) {
	var p Provenance
	b, err := os.ReadFile(filepath.Join(dir, ProvenanceFile))
	if err != nil {
		return p, fmt.Errorf("tiny base model: %w", err)
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("tiny base model: %s: %w", filepath.Join(dir, ProvenanceFile), err)
	}
	return p, nil
}

// Embedded returns the provenance of the embedded model.
func Embedded() (Provenance, error) {
	var p Provenance
	b, err := files.ReadFile(ModelDir + "/" + ProvenanceFile)
	if err != nil {
		return p, fmt.Errorf("tiny base model: %w", err)
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("tiny base model: embedded %s: %w", ProvenanceFile, err)
	}
	return p, nil
}

// CacheDirEnv overrides where Dir writes the model's files.
const CacheDirEnv = "GOSQLENV_TINYBASE_DIR"

// Dir writes the embedded model's files to a folder named by their content
// hash under the user's cache directory (os.UserCacheDir()/gosqlenv, or
// $GOSQLENV_TINYBASE_DIR) unless they are there already, and returns that
// folder: a model directory qwen3.LoadModel and tokenizer.Load read. The
// files appear atomically (written to a temporary folder, then renamed), so
// concurrent callers are safe.
func Dir() (string, error) {
	names, digest, err := contents()
	if err != nil {
		return "", err
	}
	base := os.Getenv(CacheDirEnv)
	if base == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("tiny base model: no user cache directory (set %s): %w", CacheDirEnv, err)
		}
		base = filepath.Join(c, "gosqlenv")
	}
	dir := filepath.Join(base, "tinybase-"+digest[:16])
	if complete(dir, names) {
		return dir, nil
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", fmt.Errorf("tiny base model: %w", err)
	}
	tmp, err := os.MkdirTemp(base, ".tinybase-tmp-")
	if err != nil {
		return "", fmt.Errorf("tiny base model: %w", err)
	}
	defer os.RemoveAll(tmp)
	for _, n := range names {
		b, err := files.ReadFile(ModelDir + "/" + n)
		if err != nil {
			return "", fmt.Errorf("tiny base model: %w", err)
		}
		if err := os.WriteFile(filepath.Join(tmp, n), b, 0o644); err != nil {
			return "", fmt.Errorf("tiny base model: %w", err)
		}
	}
	err = os.Rename(tmp, dir)
	if err != nil && !complete(dir, names) {
		// An incomplete or altered copy is in the way (a rename cannot
		// replace a directory that has files): move it aside, then retry.
		if stale, serr := os.MkdirTemp(base, ".tinybase-stale-"); serr == nil {
			if os.Rename(dir, filepath.Join(stale, "old")) == nil {
				err = os.Rename(tmp, dir)
			}
			os.RemoveAll(stale)
		}
	}
	if err != nil {
		if complete(dir, names) { // another process put its copy in place first
			return dir, nil
		}
		return "", fmt.Errorf("tiny base model: %w", err)
	}
	return dir, nil
}

// contents lists the embedded files and hashes them (names and bytes).
func contents() ([]string, string, error) {
	entries, err := fs.ReadDir(files, ModelDir)
	if err != nil {
		return nil, "", fmt.Errorf("tiny base model: %w", err)
	}
	h := sha256.New()
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := files.ReadFile(ModelDir + "/" + e.Name())
		if err != nil {
			return nil, "", fmt.Errorf("tiny base model: %w", err)
		}
		fmt.Fprintf(h, "%s %d\n", e.Name(), len(b))
		h.Write(b)
		names = append(names, e.Name())
	}
	if len(names) == 0 {
		return nil, "", fmt.Errorf("tiny base model: no embedded files in %s", ModelDir)
	}
	return names, hex.EncodeToString(h.Sum(nil)), nil
}

// complete reports whether dir holds every one of names, each of the
// embedded file's size (a copy cut short is not complete).
func complete(dir string, names []string) bool {
	for _, n := range names {
		st, err := os.Stat(filepath.Join(dir, n))
		if err != nil {
			return false
		}
		b, err := files.ReadFile(ModelDir + "/" + n)
		if err != nil || st.Size() != int64(len(b)) {
			return false
		}
	}
	return true
}

// ErrSeen is returned by CheckUnseen when pre-training saw a question a run
// would evaluate on.
type ErrSeen struct {
	// QuestionIDs are the questions whose gold SQL was pre-trained on.
	QuestionIDs []string
}

// Error names the first questions seen and what to do instead.
func (e *ErrSeen) Error() string {
	return fmt.Sprintf("the tiny base model was pre-trained on the gold SQL of %d of the questions this run holds out or evaluates on (%s): "+
		"their success would measure memory, not skill. It suits the split it was built for (the tiny preset: train_databases [university], "+
		"difficulty easy and medium, any heldout_fraction); for other databases start from model_name tiny or rebuild it (go run ./training/cmd/pretrain)",
		len(e.QuestionIDs), strings.Join(e.QuestionIDs[:min(5, len(e.QuestionIDs))], ", "))
}
