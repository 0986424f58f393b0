// Package atomicfile writes a file whole or not at all: readers, and a run
// that continues after the writer was killed, see the old contents or the new
// ones, never part of them.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write writes data to a temporary file next to path, syncs it and renames
// it to path (mode 0644). On error the temporary file is removed and path is
// left as it was.
func Write(path string, data []byte) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Chmod(0o644); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
