package cell

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// After names the section to run when a file it writes is missing.
func TestAfterNamesTheSectionToRun(t *testing.T) {
	dir := t.TempDir()
	have, missing := filepath.Join(dir, "metrics.jsonl"), filepath.Join(dir, "eval_grpo.json")
	if err := os.WriteFile(have, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := After("section 6 (GRPO)", have); err != nil {
		t.Fatalf("file present: %v", err)
	}
	err := After("section 6 (GRPO)", have, missing)
	if err == nil || !strings.Contains(err.Error(), "run section 6 (GRPO) first") || !strings.Contains(err.Error(), missing) {
		t.Fatalf("file missing: %v, want an error naming %s and the section", err, missing)
	}
}
