package training

import (
	"context"
	"fmt"
	"strings"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/training/tokenizer"
)

// Schema lessons: dense copying samples for pre-training.
//
// An oracle episode copies one or two listed names into its actions, among
// many other tokens; a model this small then learns which names follow
// which questions instead of copying them (copyprobe -task names: no
// held-out affix copied). A lesson asks the environment's own prompt for
// what it shows and answers by re-writing it: every listed table, or every
// column a DESCRIBE returned — so that each lesson copies a whole list of
// names, in the action format the agent uses (copyprobe -list_share).

// LessonTablesQuestion and LessonColumnsQuestion are the lessons'
// questions; %s is the table of a columns lesson.
const (
	LessonTablesQuestion  = "Which tables does the database have?"
	LessonColumnsQuestion = "Which columns does the table %s have?"
)

// SchemaLessons returns three lesson samples for each question's database
// (its episode's observations, with the question replaced): the table
// list re-written ("ANSWER: t1, t2, …"), the DESCRIBE of a table the
// question names ("DESCRIBE: t") and its columns re-written after that
// DESCRIBE ("ANSWER: c1, c2, …"). The described table is the question's
// i-th listed table modulo their number, i its index in questions. Each
// question's lessons are one episode (Sample.Episode), numbered from 0.
func (r *Roller) SchemaLessons(ctx context.Context, questions []dataset.QuestionRecord) ([]Sample, error) {
	var out []Sample
	for qi, q := range questions {
		samples, err := r.lessons(ctx, q, qi)
		if err != nil {
			return nil, fmt.Errorf("schema lessons on %s: %w", q.QuestionID, err)
		}
		for i := range samples {
			samples[i].Episode = qi
		}
		out = append(out, samples...)
	}
	return out, nil
}

// lessons plays the three lessons of question q (pick chooses the table).
func (r *Roller) lessons(ctx context.Context, q dataset.QuestionRecord, pick int) ([]Sample, error) {
	env, err := r.newEnv()
	if err != nil {
		return nil, err
	}
	defer env.Close()
	obs, err := env.Reset(ctx, sqlenv.ResetOptions{QuestionID: q.QuestionID})
	if err != nil {
		return nil, err
	}
	tables := sqlenv.TableNames(obs.SchemaInfo)
	if len(tables) == 0 {
		return nil, fmt.Errorf("no table list in %q", obs.SchemaInfo)
	}
	table := tables[pick%len(tables)]
	first := func(question string) tokenizer.Message {
		o := obs
		o.Question = question
		return tokenizer.Message{Role: "user", Content: FormatObservation(o, r.cfg.MaxResultChars)}
	}
	columnsQuestion := fmt.Sprintf(LessonColumnsQuestion, table)
	describe := sqlenv.Action{ActionType: sqlenv.Describe, Argument: table}
	described, err := env.Step(ctx, describe)
	if err != nil {
		return nil, err
	}
	columns := describedColumns(described.Result)
	if described.Error != "" || len(columns) == 0 {
		return nil, fmt.Errorf("DESCRIBE %s: %q %s", table, described.Result, described.Error)
	}
	described.Question = columnsQuestion
	turns := []struct {
		history []tokenizer.Message
		action  string
	}{
		{[]tokenizer.Message{first(LessonTablesQuestion)}, "ANSWER: " + strings.Join(tables, ", ")},
		{[]tokenizer.Message{first(columnsQuestion)}, FormatAction(describe)},
		{[]tokenizer.Message{first(columnsQuestion), {Role: "assistant", Content: FormatAction(describe)},
			{Role: "user", Content: FormatObservation(described, r.cfg.MaxResultChars)}}, "ANSWER: " + strings.Join(columns, ", ")},
	}
	samples := make([]Sample, len(turns))
	for i, t := range turns {
		prompt, err := r.prompt(t.history)
		if err != nil {
			return nil, err
		}
		samples[i] = actionSample(prompt, append(r.tok.Encode(t.action), r.tok.EOS()))
	}
	return samples, nil
}

// describedColumns are the column names of a DESCRIBE result ("- name
// TYPE, …" lines), in order.
func describedColumns(result string) []string {
	var cols []string
	for _, line := range strings.Split(result, "\n") {
		if rest, ok := strings.CutPrefix(line, "- "); ok {
			nameAndType, _, _ := strings.Cut(rest, ",")
			if f := strings.Fields(nameAndType); len(f) > 0 {
				cols = append(cols, f[0])
			}
		}
	}
	return cols
}

// actionSample is a sample of prompt then completion, trained on the
// completion only (the oracle's turns, the lessons).
func actionSample(prompt, completion []int32) Sample {
	s := Sample{IDs: append(append([]int32{}, prompt...), completion...)}
	s.Mask = make([]int32, len(s.IDs))
	s.LogProbs = make([]float32, len(s.IDs))
	for i := len(prompt); i < len(s.IDs); i++ {
		s.Mask[i] = 1
	}
	return s
}
