package training

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
)

// The evaluation splits, as named in eval_summary.json.
const (
	// SplitTrain is the questions the model is trained on: those GRPO plays
	// (the SFT warm-up saw them too).
	SplitTrain = "train"
	// SplitHeldout is held-out questions of the training databases: the same
	// kinds of questions with other constants (heldout_fraction).
	SplitHeldout = "heldout_questions"
	// SplitRenamed is the held-out questions on renamed copies of their
	// databases: every table and column under a name never used in
	// pre-training or training (reading_splits).
	SplitRenamed = "renamed_schema"
	// SplitParaphrased is the held-out questions in wordings never used in
	// pre-training or training (reading_splits).
	SplitParaphrased = "paraphrased_questions"
	// SplitUnseen is the questions of databases never trained on.
	SplitUnseen = "unseen_databases"
)

// Splits lists the evaluation splits in reporting order.
var Splits = []string{SplitTrain, SplitHeldout, SplitRenamed, SplitParaphrased, SplitUnseen}

// checkDatabases reports names in want that no question of qs uses.
func checkDatabases(path string, qs []dataset.QuestionRecord, want []string) error {
	have := map[string]bool{}
	for _, q := range qs {
		have[strings.ToLower(q.DatabaseName)] = true
	}
	var missing []string
	for _, d := range want {
		if !have[strings.ToLower(d)] {
			missing = append(missing, d)
		}
	}
	if len(missing) > 0 {
		names := slices.Sorted(func(yield func(string) bool) {
			for d := range have {
				if !yield(d) {
					return
				}
			}
		})
		return fmt.Errorf("train_databases: %s not in %s (it has %s)", strings.Join(missing, ", "), path, strings.Join(names, ", "))
	}
	return nil
}

// HoldOut splits questions into training and held-out questions: from each
// database, round(fraction × its questions) are held out, chosen by a hash
// of their ids, so the choice depends neither on the file order nor on the
// seed. Both results keep the input order.
func HoldOut(qs []dataset.QuestionRecord, fraction float64) (train, heldout []dataset.QuestionRecord) {
	if fraction <= 0 {
		return slices.Clone(qs), nil
	}
	byDB := map[string][]int{}
	for i, q := range qs {
		byDB[q.DatabaseName] = append(byDB[q.DatabaseName], i)
	}
	held := make([]bool, len(qs))
	for _, idx := range byDB {
		slices.SortFunc(idx, func(a, b int) int {
			return cmp.Or(cmp.Compare(idHash(qs[a].QuestionID), idHash(qs[b].QuestionID)), cmp.Compare(a, b))
		})
		n := int(math.Round(fraction * float64(len(idx))))
		for _, i := range idx[:min(n, len(idx))] {
			held[i] = true
		}
	}
	for i, q := range qs {
		if held[i] {
			heldout = append(heldout, q)
		} else {
			train = append(train, q)
		}
	}
	return train, heldout
}

// idHash places a question in the order the splits draw from (HoldOut,
// GeneratedHeldout, GeneratedTraining): the first 8 bytes of the SHA-256 of
// its id. A generator numbers its questions in the order of its templates
// (university_more_0400, _0401, …), and a cryptographic hash scatters such
// ids uniformly, so the first n questions in this order are a random sample
// of the templates. FNV-1a, used before, left ids that differ only in their
// last digits in almost their numeric order, and the generated held-out split
// was then 52 of 60 questions of two templates (BENCHMARKS.md, "Splits").
func idHash(id string) uint64 {
	sum := sha256.Sum256([]byte(id))
	return binary.BigEndian.Uint64(sum[:8])
}

// SpreadOverDatabases returns up to n questions (all if n <= 0) taken in
// turn from each database (databases in order of first appearance, each
// database's questions in order), so that a cap keeps every database's
// share instead of the first databases of the file.
func SpreadOverDatabases(qs []dataset.QuestionRecord, n int) []dataset.QuestionRecord {
	if n <= 0 || n >= len(qs) {
		return slices.Clone(qs)
	}
	var order []string
	byDB := map[string][]dataset.QuestionRecord{}
	for _, q := range qs {
		if _, ok := byDB[q.DatabaseName]; !ok {
			order = append(order, q.DatabaseName)
		}
		byDB[q.DatabaseName] = append(byDB[q.DatabaseName], q)
	}
	out := make([]dataset.QuestionRecord, 0, n)
	for k := 0; len(out) < n; k++ {
		for _, db := range order {
			if k < len(byDB[db]) && len(out) < n {
				out = append(out, byDB[db][k])
			}
		}
	}
	return out
}

// EvalSample returns up to n questions of qs (all if n <= 0) in the order of
// qs: as many of each database as SpreadOverDatabases takes, drawn from all
// of the database's questions in idHash order — a sample that is the same in
// every run and on every machine. A file or a generator lists its questions
// in the order of its templates, so its first questions, which a plain cap
// keeps, are its first templates.
func EvalSample(qs []dataset.QuestionRecord, n int) []dataset.QuestionRecord {
	if n <= 0 || n >= len(qs) {
		return slices.Clone(qs)
	}
	dbOrder := map[string]int{}
	for _, q := range qs {
		if _, ok := dbOrder[q.DatabaseName]; !ok {
			dbOrder[q.DatabaseName] = len(dbOrder)
		}
	}
	byHash := slices.Clone(qs)
	slices.SortStableFunc(byHash, func(a, b dataset.QuestionRecord) int {
		return cmp.Or(cmp.Compare(dbOrder[a.DatabaseName], dbOrder[b.DatabaseName]), cmp.Compare(idHash(a.QuestionID), idHash(b.QuestionID)))
	})
	chosen := map[string]bool{}
	for _, q := range SpreadOverDatabases(byHash, n) {
		chosen[q.QuestionID] = true
	}
	return slices.DeleteFunc(slices.Clone(qs), func(q dataset.QuestionRecord) bool { return !chosen[q.QuestionID] })
}

// QuestionIDs lists the ids of questions.
func QuestionIDs(qs []dataset.QuestionRecord) []string {
	ids := make([]string, len(qs))
	for i, q := range qs {
		ids[i] = q.QuestionID
	}
	return ids
}
