package qwen3

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/gomlx/go-huggingface/hub"

	"github.com/gosqlenv/gosqlenv/training/hfhub"
	"github.com/gosqlenv/gosqlenv/training/internal/atomicfile"
)

// HubOptions says where models come from. Zero values take the defaults
// that Python's huggingface_hub uses.
type HubOptions struct {
	// Revision is the branch, tag or commit hash; default "main".
	Revision string
	// Token authenticates downloads (needed for gated or private models);
	// default $HF_TOKEN, then $HUGGING_FACE_HUB_TOKEN, then the token file
	// `huggingface-cli login` writes ($HF_TOKEN_PATH, else $HF_HOME/token,
	// else ~/.cache/huggingface/token).
	Token string
	// Offline forbids network access: only the cache is used. It is also
	// true when $HF_HUB_OFFLINE is "1", "true", "yes" or "on".
	Offline bool
	// Endpoint is the hub's URL; default $HF_ENDPOINT, else
	// https://huggingface.co.
	Endpoint string
	// CacheDir is the hub cache; default hfhub.CacheDir() ($HF_HUB_CACHE,
	// else $HF_HOME/hub, else ~/.cache/huggingface/hub).
	CacheDir string
	// Verbose prints download progress to stdout.
	Verbose bool
}

// ModelLoadError says a model could not be found or fetched; its message
// names the model id and what to do.
type ModelLoadError struct {
	ModelID string
	Reason  string // what went wrong and what to do
	Err     error  // the underlying error, if any
}

// Error implements error.
func (e *ModelLoadError) Error() string {
	return "model " + e.ModelID + " " + e.Reason
}

// Unwrap returns the underlying error.
func (e *ModelLoadError) Unwrap() error { return e.Err }

// withDefaults fills the zero fields of o from the environment.
func (o HubOptions) withDefaults() HubOptions {
	if o.Revision == "" {
		o.Revision = "main"
	}
	if o.Token == "" {
		o.Token = hubTokenFromEnv()
	}
	if !o.Offline {
		switch strings.ToLower(strings.TrimSpace(os.Getenv("HF_HUB_OFFLINE"))) {
		case "1", "true", "yes", "on":
			o.Offline = true
		}
	}
	if o.Endpoint == "" {
		o.Endpoint = os.Getenv("HF_ENDPOINT")
	}
	if o.Endpoint == "" {
		o.Endpoint = "https://huggingface.co"
	}
	o.Endpoint = strings.TrimRight(o.Endpoint, "/")
	if o.CacheDir == "" {
		o.CacheDir = hfhub.CacheDir()
	}
	return o
}

// hubTokenFromEnv finds the token the way huggingface_hub does.
func hubTokenFromEnv() string {
	for _, v := range []string{"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"} {
		if t := strings.TrimSpace(os.Getenv(v)); t != "" {
			return t
		}
	}
	path := os.Getenv("HF_TOKEN_PATH")
	if path == "" {
		if home := os.Getenv("HF_HOME"); home != "" {
			path = filepath.Join(home, "token")
		} else if h, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(h, ".cache", "huggingface", "token")
		}
	}
	if path != "" {
		if b, err := os.ReadFile(path); err == nil {
			return strings.TrimSpace(string(b))
		}
	}
	return ""
}

// Files of a model repository that ResolveModel fetches.
const (
	fileGenerationConfig = "generation_config.json"
	fileTokenizerJSON    = "tokenizer.json"
	fileTokenizerConfig  = "tokenizer_config.json"
	fileVocabJSON        = "vocab.json"
	fileMergesTXT        = "merges.txt"
)

// ResolveModel returns a local directory holding the model's files
// (config.json, tokenizer files, safetensors weights):
//
//   - modelID itself when it is an existing local directory (a path-like
//     modelID, starting with "/", "." or "~", must exist);
//   - else the snapshot directory in the Hugging Face cache, without any
//     network access, when the files of modelID at the revision are complete
//     there;
//   - else, unless offline, it downloads them through go-huggingface into the
//     cache (the layout Python's huggingface_hub uses, refs included) and
//     returns the snapshot directory.
//
// Every failure is a *ModelLoadError naming the model and what to do;
// nothing falls back to another model or source.
func ResolveModel(ctx context.Context, modelID string, opts HubOptions) (dir string, err error) {
	if modelID == "" {
		return "", &ModelLoadError{ModelID: `""`, Reason: fmt.Sprintf("is empty: give a local model directory or a Hugging Face model id such as %s", DefaultModelID)}
	}
	if st, err := os.Stat(modelID); err == nil {
		if !st.IsDir() {
			return "", &ModelLoadError{ModelID: modelID, Reason: "is a file, not a directory: give a model directory (with config.json and safetensors) or a Hugging Face model id"}
		}
		return modelID, nil
	}
	if looksLikePath(modelID) {
		return "", &ModelLoadError{ModelID: modelID, Reason: "is not an existing local directory"}
	}
	if org, name, ok := strings.Cut(modelID, "/"); !ok || org == "" || name == "" || strings.Contains(name, "/") {
		return "", &ModelLoadError{ModelID: modelID, Reason: fmt.Sprintf("is neither a local directory nor a Hugging Face model id of the form <org>/<name> (e.g. %s)", DefaultModelID)}
	}
	opts = opts.withDefaults()

	snap, missing := cachedSnapshot(opts.CacheDir, modelID, opts.Revision)
	if len(missing) == 0 {
		return snap, nil
	}
	inCache := fmt.Sprintf("not found in the Hugging Face cache (%s, revision %s)", opts.CacheDir, opts.Revision)
	if snap != "" {
		inCache = fmt.Sprintf("is incomplete in the Hugging Face cache (%s lacks %s)", snap, strings.Join(missing, ", "))
	}
	if opts.Offline {
		return "", &ModelLoadError{ModelID: modelID, Reason: fmt.Sprintf(
			"%s and HF_HUB_OFFLINE is set (offline mode): download it with `huggingface-cli download %s` or pass a local directory",
			inCache, modelID)}
	}
	if err := ctx.Err(); err != nil {
		return "", &ModelLoadError{ModelID: modelID, Reason: fmt.Sprintf("%s and the download was cancelled: %v", inCache, err), Err: err}
	}
	return downloadModel(ctx, modelID, opts)
}

func looksLikePath(s string) bool {
	return filepath.IsAbs(s) || s == "." || s == ".." || strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") || strings.HasPrefix(s, "~")
}

// cachedSnapshot finds the model's snapshot directory in the cache and lists
// the files it lacks; snap is "" when there is no snapshot at all.
func cachedSnapshot(cacheDir, modelID, revision string) (snap string, missing []string) {
	snap, err := hfhub.SnapshotDir(cacheDir, modelID, revision)
	if err != nil {
		// A cache filled by go-huggingface alone has no refs/<revision>, but
		// its info/<revision> file names the commit.
		snap = snapshotFromGoHFInfo(cacheDir, modelID, revision)
		if snap == "" {
			return "", []string{"everything"}
		}
	}
	return snap, missingModelFiles(snap)
}

func snapshotFromGoHFInfo(cacheDir, modelID, revision string) string {
	repoDir := filepath.Join(cacheDir, "models--"+strings.ReplaceAll(modelID, "/", "--"))
	b, err := os.ReadFile(filepath.Join(repoDir, "info", revision))
	if err != nil {
		return ""
	}
	var info struct {
		SHA string `json:"sha"`
	}
	if json.Unmarshal(b, &info) != nil || !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(info.SHA) {
		return ""
	}
	snap := filepath.Join(repoDir, "snapshots", info.SHA)
	if st, err := os.Stat(snap); err != nil || !st.IsDir() {
		return ""
	}
	return snap
}

// missingModelFiles lists what a model directory lacks: config.json,
// tokenizer_config.json, tokenizer.json (or vocab.json and merges.txt), and
// model.safetensors or else the index with all its shards. Files are checked
// through symlinks, so a snapshot entry whose blob is gone counts as missing.
func missingModelFiles(dir string) []string {
	exists := func(name string) bool {
		st, err := os.Stat(filepath.Join(dir, name))
		return err == nil && st.Mode().IsRegular()
	}
	var missing []string
	for _, f := range []string{fileConfig, fileTokenizerConfig} {
		if !exists(f) {
			missing = append(missing, f)
		}
	}
	if !exists(fileTokenizerJSON) && !(exists(fileVocabJSON) && exists(fileMergesTXT)) {
		missing = append(missing, fileTokenizerJSON)
	}
	switch {
	case exists(fileSafetensors): // takes precedence, as in LoadWeights
	case exists(fileSTIndex):
		shards, err := indexShards(filepath.Join(dir, fileSTIndex))
		if err != nil {
			missing = append(missing, fileSTIndex+" (unreadable)")
		}
		for _, s := range shards {
			if !exists(s) {
				missing = append(missing, s)
			}
		}
	default:
		missing = append(missing, fileSafetensors)
	}
	return missing
}

// indexShards lists the shard files of a model.safetensors.index.json.
func indexShards(path string) ([]string, error) {
	idx, err := readIndex(path)
	if err != nil {
		return nil, err
	}
	return idx.shards(path)
}

// readIndex reads a model.safetensors.index.json.
func readIndex(path string) (safetensorsIndex, error) {
	var idx safetensorsIndex
	data, err := os.ReadFile(path)
	if err != nil {
		return idx, err
	}
	if err := json.Unmarshal(data, &idx); err != nil {
		return idx, fmt.Errorf("%s is not valid JSON: %w", path, err)
	}
	return idx, nil
}

// shards lists the shard files of the index read from path, sorted,
// refusing names that would leave the model directory.
func (idx safetensorsIndex) shards(path string) ([]string, error) {
	var shards []string
	for _, s := range idx.WeightMap {
		if s == "" || filepath.IsAbs(s) || strings.Contains(s, "..") {
			return nil, fmt.Errorf("%s names an invalid shard file %q", path, s)
		}
		if !slices.Contains(shards, s) {
			shards = append(shards, s)
		}
	}
	if len(shards) == 0 {
		return nil, fmt.Errorf("%s has an empty weight_map", path)
	}
	slices.Sort(shards)
	return shards, nil
}

// downloadModel fetches the model's files into the cache and returns the
// snapshot directory.
func downloadModel(ctx context.Context, modelID string, opts HubOptions) (string, error) {
	repo := hub.New(modelID).
		WithEndpoint(opts.Endpoint).
		WithCacheDir(opts.CacheDir).
		WithRevision(opts.Revision).
		WithAuth(opts.Token).
		WithProgressBar(false)
	repo.Verbosity = 0
	if opts.Verbose {
		repo.Verbosity = 1
	}
	// Always ask the hub which commit the revision is now: a cached info
	// file may name an older commit.
	if err := repo.DownloadInfo(true); err != nil {
		return "", downloadError(ctx, modelID, opts, "the repository information", err)
	}
	info := repo.Info()
	if info == nil || info.CommitHash == "" {
		return "", &ModelLoadError{ModelID: modelID, Reason: fmt.Sprintf("could not be resolved on %s: the hub's answer for revision %s has no commit hash", opts.Endpoint, opts.Revision)}
	}
	has := make(map[string]bool)
	for _, s := range info.Siblings {
		has[s.Name] = true
	}
	files, sharded, err := filesToDownload(modelID, opts, has)
	if err != nil {
		return "", err
	}

	// One file per call: go-huggingface's parallel downloader updates its
	// progress counters without a lock.
	var indexPath string
	for _, f := range files {
		p, err := repo.DownloadFileCtx(ctx, f)
		if err != nil {
			return "", downloadError(ctx, modelID, opts, f, err)
		}
		if f == fileSTIndex {
			indexPath = p
		}
	}
	if sharded {
		shards, err := indexShards(indexPath)
		if err != nil {
			return "", &ModelLoadError{ModelID: modelID, Reason: fmt.Sprintf("has an invalid %s on %s: %v", fileSTIndex, opts.Endpoint, err), Err: err}
		}
		for _, s := range shards {
			if _, err := repo.DownloadFileCtx(ctx, s); err != nil {
				return "", downloadError(ctx, modelID, opts, s, err)
			}
		}
	}

	// Record the revision's commit as huggingface_hub does, so the cache is
	// found again offline (by this package and by Python).
	repoDir, err := repo.CacheDir()
	if err != nil {
		return "", &ModelLoadError{ModelID: modelID, Reason: fmt.Sprintf("could not use the cache %s: %v", opts.CacheDir, err), Err: err}
	}
	if opts.Revision != info.CommitHash {
		refs := filepath.Join(repoDir, "refs", filepath.FromSlash(opts.Revision))
		if err := os.MkdirAll(filepath.Dir(refs), 0o755); err == nil {
			err = atomicfile.Write(refs, []byte(info.CommitHash))
		}
		if err != nil {
			return "", &ModelLoadError{ModelID: modelID, Reason: fmt.Sprintf("was downloaded but its revision could not be recorded in %s: %v", repoDir, err), Err: err}
		}
	}
	snap := filepath.Join(repoDir, "snapshots", info.CommitHash)
	if missing := missingModelFiles(snap); len(missing) > 0 {
		return "", &ModelLoadError{ModelID: modelID, Reason: fmt.Sprintf("was downloaded from %s but %s still lacks %s", opts.Endpoint, snap, strings.Join(missing, ", "))}
	}
	return snap, nil
}

// filesToDownload picks the files of a model repository that has the files
// has: configuration, tokenizer, weights (the index only, when sharded: its
// shards come after it). A repository that lacks any of them is an error
// saying what is missing.
func filesToDownload(modelID string, opts HubOptions, has map[string]bool) ([]string, bool, error) {
	files := []string{fileConfig, fileTokenizerConfig}
	for _, f := range files {
		if !has[f] {
			return nil, false, &ModelLoadError{ModelID: modelID, Reason: fmt.Sprintf("on %s (revision %s) has no %s: it is not a Hugging Face transformers model this package can load", opts.Endpoint, opts.Revision, f)}
		}
	}
	switch {
	case has[fileTokenizerJSON]:
		files = append(files, fileTokenizerJSON)
	case has[fileVocabJSON] && has[fileMergesTXT]:
	default:
		return nil, false, &ModelLoadError{ModelID: modelID, Reason: fmt.Sprintf("on %s (revision %s) has no tokenizer (neither %s nor %s and %s)", opts.Endpoint, opts.Revision, fileTokenizerJSON, fileVocabJSON, fileMergesTXT)}
	}
	for _, f := range []string{fileGenerationConfig, fileVocabJSON, fileMergesTXT} {
		if has[f] {
			files = append(files, f)
		}
	}
	sharded := !has[fileSafetensors] && has[fileSTIndex]
	switch {
	case has[fileSafetensors]:
		files = append(files, fileSafetensors)
	case sharded:
		files = append(files, fileSTIndex)
	default:
		hint := ""
		if has["pytorch_model.bin"] || has["pytorch_model.bin.index.json"] {
			hint = " (it only has PyTorch pytorch_model.bin weights: convert them to safetensors, e.g. with transformers' save_pretrained)"
		}
		return nil, false, &ModelLoadError{ModelID: modelID, Reason: fmt.Sprintf("on %s (revision %s) has no safetensors weights (%s or %s)%s", opts.Endpoint, opts.Revision, fileSafetensors, fileSTIndex, hint)}
	}
	return files, sharded, nil
}

var httpStatusRE = regexp.MustCompile(`(?:status code |following message: ")(401|403|404)\b`)

// downloadError turns a go-huggingface failure into a *ModelLoadError with
// guidance matched to the HTTP status when there is one.
func downloadError(ctx context.Context, modelID string, opts HubOptions, what string, err error) *ModelLoadError {
	if cerr := ctx.Err(); cerr != nil {
		return &ModelLoadError{ModelID: modelID, Reason: fmt.Sprintf("download of %s from %s was cancelled: %v", what, opts.Endpoint, cerr), Err: errors.Join(cerr, err)}
	}
	status := ""
	if m := httpStatusRE.FindStringSubmatch(err.Error()); m != nil {
		status = m[1]
	}
	tokenNote := "no token was given (set HF_TOKEN)"
	if opts.Token != "" {
		tokenNote = "a token was given but it lacks access"
	}
	var reason string
	switch status {
	case "401":
		reason = fmt.Sprintf("could not be downloaded from %s: HTTP 401 Unauthorized fetching %s (%v): the model does not exist, or it is private or gated and %s; check the model id, accept the model's license on its page if it is gated, and set HF_TOKEN to a token with access",
			opts.Endpoint, what, err, tokenNote)
	case "403":
		reason = fmt.Sprintf("could not be downloaded from %s: HTTP 403 Forbidden fetching %s (%v): %s; accept the model's license on its page (gated models) and use a token with read access in HF_TOKEN",
			opts.Endpoint, what, err, tokenNote)
	case "404":
		reason = fmt.Sprintf("could not be downloaded from %s: HTTP 404 Not Found fetching %s at revision %s (%v): check the model id and the revision, or pass a local directory",
			opts.Endpoint, what, opts.Revision, err)
	default:
		reason = fmt.Sprintf("could not download %s from %s: %v; check the network, HF_ENDPOINT, and HF_TOKEN for gated models (or pass a local directory, or download it with `huggingface-cli download %s`)",
			what, opts.Endpoint, err, modelID)
	}
	return &ModelLoadError{ModelID: modelID, Reason: reason, Err: err}
}
