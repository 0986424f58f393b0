package bundled

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
)

// Instances: a database of the bundled dataset redrawn from another seed.
//
// A model pre-trained on many questions of one database can learn them by
// heart — "enrolled in 2019" → `enrollment_year = 2022` — instead of copying
// the question's constants into its SQL. An instance has the same schema and
// question templates as its database, but its rows are drawn from another
// random stream and about half of the words of its text values (names,
// cities, titles, statuses) are replaced by made-up words, consistently
// across the whole database. Every name, number and answer changes from one
// instance to the next, so the only way to answer an instance's questions
// is to read the question and the observations.

// InstanceName is the database name of instance n of database: "<database>_i<n>".
func InstanceName(database string, n int) string { return fmt.Sprintf("%s_i%d", database, n) }

// renameFraction is the share of an instance's distinct words replaced by
// made-up ones; the rest keep their real form, so real words still appear
// in every kind of question.
const renameFraction = 0.5

// GenerateInstance writes instance n (n ≥ 1; instance 0 is the bundled
// database itself) of the bundled training database named database to
// dbDir/<InstanceName>/<InstanceName>.sqlite and returns every usable
// question its templates give at the difficulties (none: all), as
// MoreQuestions does for the bundled database: ids
// <InstanceName>_more_<k>, database name InstanceName. Deterministic: the
// same (database, n) always gives the same rows and questions, so an
// instance already in dbDir (its database and, beside it, its questions in
// questions.json, each written through a temporary file) is reused. Evaluation databases are refused, so that they
// stay unseen.
func GenerateInstance(ctx context.Context, dbDir, database string, n int, difficulties ...dataset.Difficulty) ([]dataset.QuestionRecord, error) {
	d, err := domainNamed(database)
	if err != nil {
		return nil, err
	}
	if d.split != dataset.Train {
		return nil, fmt.Errorf("bundled: %s is an evaluation database; instances are made of training databases only (%s)",
			database, strings.Join(Databases(dataset.Train), ", "))
	}
	if n < 1 {
		return nil, fmt.Errorf("bundled: instance %d of %s: instances are numbered from 1 (0 is the bundled database)", n, database)
	}
	inst := *d
	inst.name = InstanceName(database, n)
	path := sqlitedb.Path(dbDir, inst.name)
	qpath := filepath.Join(filepath.Dir(path), instanceQuestionsFile)
	qs, err := dataset.Load(ctx, qpath, dataset.LoadOptions{})
	if err != nil {
		if qs, err = writeInstance(ctx, path, qpath, &inst, d); err != nil {
			return nil, fmt.Errorf("instance %s: %w", inst.name, err)
		}
	}
	if len(difficulties) > 0 {
		qs = slices.DeleteFunc(qs, func(q dataset.QuestionRecord) bool { return !slices.Contains(difficulties, q.Difficulty) })
	}
	return qs, nil
}

// instanceQuestionsFile, beside an instance's database, holds all its
// questions (every difficulty), written after the database.
const instanceQuestionsFile = "questions.json"

// writeInstance draws the instance's tables, writes them to path and its
// questions (every difficulty) to qpath, each through a temporary file, so
// that a file at either path is always complete.
func writeInstance(ctx context.Context, path, qpath string, inst, d *domain) ([]dataset.QuestionRecord, error) {
	tables := d.build(&gen{r: newRand(inst.name + "/data")})
	renameWords(tables, protectedWords(d.templates), newRand(inst.name+"/rename"))
	tmp := path + ".partial"
	for _, f := range []string{tmp, path} {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	if err := writeDatabase(ctx, tmp, tables); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, err
	}
	db, err := sqlitedb.Open(path, sqlitedb.Limits{})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	qs, err := allQuestions(ctx, db, inst, nil)
	if err != nil {
		return nil, err
	}
	if err := dataset.Save(qpath+".partial", qs); err != nil {
		return nil, err
	}
	return qs, os.Rename(qpath+".partial", qpath)
}

// domainNamed returns the domain of a generated database.
func domainNamed(database string) (*domain, error) {
	var names []string
	for _, d := range domains() {
		if d.name == database {
			return d, nil
		}
		names = append(names, d.name)
	}
	return nil, fmt.Errorf("bundled: no generated database %q (there are %v)", database, names)
}

var letterRun = regexp.MustCompile(`\p{L}+`)

// protectedWords are the words (lower case) that templates spell out in
// their SQL — literals such as 'Active' or 'A' — which an instance must keep
// so that its templates still find rows.
func protectedWords(templates []tmpl) map[string]bool {
	out := map[string]bool{}
	for _, t := range templates {
		for _, s := range []string{t.sql, t.pick, t.tie} {
			for _, w := range letterRun.FindAllString(s, -1) {
				out[strings.ToLower(w)] = true
			}
		}
	}
	return out
}

// renameWords replaces, in every text value of the tables, each word of at
// least three letters that is not protected by a made-up word with
// probability renameFraction. The choice is per distinct word (case
// folded) and the mapping is one-to-one, so equal values stay equal,
// distinct values stay distinct, and the same word renames the same way in
// every table (a name and the e-mail address made of it).
func renameWords(tables []*table, protected map[string]bool, r *rand.Rand) {
	words := map[string]bool{}
	for _, t := range tables {
		for _, row := range t.rows {
			for _, v := range row {
				if s, ok := v.(string); ok {
					for _, w := range letterRun.FindAllString(s, -1) {
						words[strings.ToLower(w)] = true
					}
				}
			}
		}
	}
	taken := map[string]bool{}
	for w := range words {
		taken[w] = true
	}
	for w := range protected {
		taken[w] = true
	}
	mapping := map[string]string{}
	for _, w := range slices.Sorted(maps.Keys(words)) {
		if utf8.RuneCountInString(w) < 3 || protected[w] || r.Float64() >= renameFraction {
			continue
		}
		m := madeUpWord(r)
		for taken[m] {
			m = madeUpWord(r)
		}
		taken[m], mapping[w] = true, m
	}
	for _, t := range tables {
		for _, row := range t.rows {
			for i, v := range row {
				if s, ok := v.(string); ok {
					row[i] = letterRun.ReplaceAllStringFunc(s, func(w string) string {
						m, ok := mapping[strings.ToLower(w)]
						if !ok {
							return w
						}
						return withCaseOf(m, w)
					})
				}
			}
		}
	}
}

// madeUpWord draws a pronounceable word of two or three syllables.
func madeUpWord(r *rand.Rand) string {
	return syllables(r, 2+r.IntN(2))
}

// syllables draws n pronounceable syllables: a consonant, a vowel and, a
// third of the time, a closing consonant.
func syllables(r *rand.Rand, n int) string {
	const onsets, vowels, codas = "bdfgklmnprstvz", "aeiou", "lnrs"
	var b strings.Builder
	for range n {
		b.WriteByte(onsets[r.IntN(len(onsets))])
		b.WriteByte(vowels[r.IntN(len(vowels))])
		if r.IntN(3) == 0 {
			b.WriteByte(codas[r.IntN(len(codas))])
		}
	}
	return b.String()
}

// withCaseOf writes the lower-case word m in the case pattern of w: all
// capitals, a capital first, or lower case.
func withCaseOf(m, w string) string {
	first, _ := utf8.DecodeRuneInString(w)
	switch {
	case utf8.RuneCountInString(w) > 1 && strings.ToUpper(w) == w:
		return strings.ToUpper(m)
	case unicode.IsUpper(first):
		return strings.ToUpper(m[:1]) + m[1:]
	}
	return m
}
