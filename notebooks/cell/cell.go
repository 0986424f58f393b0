// Package cell is what every notebook cell needs, and nothing more, so
// that a cell which only shows data links small and fast: display helpers
// over GoNB's gonbui, a clean stop on error, the notebooks' folder, and
// JSON files that carry values from one cell to the next (every GoNB cell
// is a separate program).
package cell

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/janpfeifer/gonb/gonbui"
)

// Dir is a path under the notebooks' directory ($GONB_DIR when running in
// GoNB, else the working directory).
func Dir(elems ...string) string {
	base := os.Getenv("GONB_DIR")
	if base == "" {
		base, _ = os.Getwd()
	}
	return filepath.Join(append([]string{base}, elems...)...)
}

// HTML displays HTML in the notebook (a no-op outside GoNB). Like every
// display helper here, it returns once GoNB has the display, so that a cell
// which ends right after it loses nothing.
func HTML(h string) {
	gonbui.DisplayHTML(h)
	flush()
}

// PNG displays a PNG image in the notebook.
func PNG(b []byte) {
	gonbui.DisplayPNG(b)
	flush()
}

// Markdown displays Markdown in the notebook.
func Markdown(md string) {
	gonbui.DisplayMarkdown(md)
	flush()
}

// Update replaces the HTML of the display named id (from
// gonbui.UniqueId), or shows it the first time: a block updated in place,
// such as a progress report.
func Update(id, h string) {
	gonbui.UpdateHTML(id, h)
	flush()
}

// flushWait bounds how long flush waits for GoNB's acknowledgement.
const flushWait = 10 * time.Second

// flush waits until GoNB has read every display sent so far. Displays
// travel to GoNB through a pipe that GoNB stops reading as soon as the
// cell's program exits, so on a busy machine the last displays of a cell
// were lost (seen: 128 of 200 shown). gonbui.Sync's request goes through
// the same pipe, after them, and GoNB answers it only once it has read
// them. The wait is bounded: a GoNB that stopped answering must not hang
// the cell.
func flush() {
	if !gonbui.IsNotebook {
		return
	}
	done := make(chan struct{})
	go func() {
		gonbui.Sync()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(flushWait):
	}
}

// Must stops a cell with the error: it prints "error: …" (no goroutine
// dump: the message is for a person, not a stack) and exits with status 1,
// which GoNB shows as the cell's failure.
func Must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// After checks that the files an earlier section of a notebook writes
// exist, so that a cell run before that section stops with an error naming
// the section to run first (instead of "no such file").
func After(section string, paths ...string) error {
	for _, p := range paths {
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s does not exist yet: run %s first", p, section)
		} else if err != nil {
			return err
		}
	}
	return nil
}

// Save writes v as JSON to path.
func Save(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// Load reads JSON written by Save into v; the error says which cell to run
// first when the file is missing.
func Load(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s not found: run the earlier cells first (%w)", path, err)
	}
	return json.Unmarshal(b, v)
}
