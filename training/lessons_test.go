package training

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/sqlitedb"
)

// TestSchemaLessons: with lessons 1, every pre-training question adds
// three samples after its database's oracle turns — the table list
// re-written exactly as the prompt shows it, the DESCRIBE of a listed
// table named by the question, and that table's columns re-written
// exactly as the database has them; with lessons 0 there are none.
func TestSchemaLessons(t *testing.T) {
	ctx := context.Background()
	cfg := tinyPipelineConfig(t.TempDir())
	cfg.TrainDatabases, cfg.DifficultyFilter = []string{"library"}, []string{"easy"}
	onFreshData(t, &cfg)
	p, err := OpenData(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pre, err := p.PretrainQuestions(ctx, PretrainData{Instances: 1, PerInstance: 4, Renamed: true})
	if err != nil {
		t.Fatal(err)
	}
	p.Pretrain = pre
	if err := p.LoadModel(ctx); err != nil {
		t.Fatal(err)
	}
	plain, err := p.oracleSamples(ctx, pre, 0)
	if err != nil {
		t.Fatal(err)
	}
	taught, err := p.oracleSamples(ctx, pre, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(taught) != len(plain)+3*len(pre) {
		t.Fatalf("%d samples with lessons, %d without, %d questions: want 3 lessons each", len(taught), len(plain), len(pre))
	}
	lessons := taught[len(plain):]
	db, err := sqlitedb.Open(sqlitedb.Path(p.Databases.Dir(), pre[0].DatabaseName), sqlitedb.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := 0; i < len(lessons); i += 3 {
		prompt, tables := split(t, p, lessons[i])
		listed := tableList(prompt)
		if !strings.Contains(prompt, LessonTablesQuestion) || tables != "ANSWER: "+strings.Join(listed, ", ") || !slices.Equal(listed, db.TableNames()) {
			t.Fatalf("tables lesson %q after a prompt listing %v (database %v)", tables, listed, db.TableNames())
		}
		prompt, describe := split(t, p, lessons[i+1])
		name := strings.TrimPrefix(describe, "DESCRIBE: ")
		if !slices.Contains(listed, name) || !strings.Contains(prompt, fmt.Sprintf(LessonColumnsQuestion, name)) {
			t.Fatalf("%q after %q", describe, prompt)
		}
		prompt, columns := split(t, p, lessons[i+2])
		table, _ := db.Table(name)
		var want []string
		for _, c := range table.Columns {
			want = append(want, c.Name)
		}
		if columns != "ANSWER: "+strings.Join(want, ", ") || !strings.Contains(prompt, "Table "+name) {
			t.Fatalf("columns lesson %q for %s, want its columns %v", columns, name, want)
		}
		if lessons[i].Episode != lessons[i+2].Episode || lessons[i].Episode <= plain[len(plain)-1].Episode {
			t.Fatalf("lesson episodes %d, %d after the oracle's last %d", lessons[i].Episode, lessons[i+2].Episode, plain[len(plain)-1].Episode)
		}
	}
}

// split decodes a sample's prompt and its trained completion (without the
// end of turn).
func split(t *testing.T, p *Pipeline, s Sample) (prompt, completion string) {
	t.Helper()
	at := slices.Index(s.Mask, 1)
	pr, err := p.Tokenizer.Decode(s.IDs[:at], false)
	if err != nil {
		t.Fatal(err)
	}
	co, err := p.Tokenizer.Decode(s.IDs[at:], true)
	if err != nil {
		t.Fatal(err)
	}
	return pr, strings.TrimSpace(co)
}

// tableList is the table list of a prompt's first observation.
func tableList(prompt string) []string {
	_, after, _ := strings.Cut(prompt, "Tables: ")
	line, _, _ := strings.Cut(after, "\n")
	return sqlenv.TableNames("Tables: " + line)
}
