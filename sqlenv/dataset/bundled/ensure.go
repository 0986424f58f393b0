package bundled

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// DataDirEnv names the environment variable that overrides where Ensure
// keeps the dataset.
const DataDirEnv = "GOSQLENV_DATA_DIR"

// Ensure returns the cached copy of the bundled dataset, generating it on
// first use. It lives in $GOSQLENV_DATA_DIR when that is set, else in
// os.UserCacheDir()/gosqlenv/bundled-v<Version>.
//
// A copy is complete when its COMPLETE marker (written last) names this
// Version; a complete copy is reused as is. Otherwise the dataset is
// generated into a temporary sibling directory and renamed into place, so a
// reader never sees a partial copy and concurrent callers (parallel test
// processes) are safe: when two generate at once, one rename wins and the
// other caller uses the winner's copy.
func Ensure(ctx context.Context) (Paths, error) {
	dir, err := cacheDir()
	if err != nil {
		return Paths{}, err
	}
	return ensureAt(ctx, dir)
}

// cacheDir is where Ensure keeps the dataset.
func cacheDir() (string, error) {
	if d := os.Getenv(DataDirEnv); d != "" {
		return filepath.Abs(d)
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("bundled dataset: no user cache directory (set %s): %w", DataDirEnv, err)
	}
	return filepath.Join(base, "gosqlenv", "bundled-v"+Version), nil
}

// EnsureAt is Ensure with the dataset kept in dir instead of the cache.
func EnsureAt(ctx context.Context, dir string) (Paths, error) { return ensureAt(ctx, dir) }

func ensureAt(ctx context.Context, dir string) (Paths, error) {
	if complete(dir) {
		return PathsIn(dir), nil
	}
	if err := emptyOrMissing(dir); err != nil {
		if complete(dir) { // another process has just put its copy in place
			return PathsIn(dir), nil
		}
		// Not ours, or another version's: never overwrite it.
		return Paths{}, fmt.Errorf("bundled dataset: %s is not a complete version %s dataset; remove it to regenerate: %w", dir, Version, err)
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return Paths{}, fmt.Errorf("bundled dataset: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return Paths{}, fmt.Errorf("bundled dataset: %w", err)
	}
	defer os.RemoveAll(tmp) // nothing is left there after a successful rename
	if err := os.Chmod(tmp, 0o755); err != nil {
		return Paths{}, fmt.Errorf("bundled dataset: %w", err)
	}
	if _, err := Generate(ctx, tmp); err != nil {
		return Paths{}, fmt.Errorf("generate bundled dataset: %w", err)
	}
	if err := moveInto(tmp, dir); err != nil {
		if complete(dir) { // another process won the race
			return PathsIn(dir), nil
		}
		return Paths{}, fmt.Errorf("bundled dataset: cannot put the generated copy in place at %s: %w", dir, err)
	}
	return PathsIn(dir), nil
}

// moveInto renames the generated directory tmp to dir. rename(2) replaces
// a missing or empty dir atomically; where the system refuses to replace an
// empty directory, it is removed (os.Remove removes only empty ones) and
// the rename tried once more.
func moveInto(tmp, dir string) error {
	err := os.Rename(tmp, dir)
	if err != nil && !complete(dir) && os.Remove(dir) == nil {
		err = os.Rename(tmp, dir)
	}
	return err
}

// complete reports whether dir holds a finished dataset of this Version.
func complete(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, markerFile))
	return err == nil && bytes.Equal(b, []byte(markerText()))
}
