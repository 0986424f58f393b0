package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset/bundled"
)

// dataFlags selects question data: a data directory (bundled layout), or a
// questions file and database directory, or the bundled dataset.
type dataFlags struct {
	data, questions, dbDir string
	difficulty, split      string
}

func (d *dataFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&d.data, "data", "", "data directory with databases/, questions_train.json and questions_eval.json (default: the bundled dataset)")
	fs.StringVar(&d.questions, "questions", "", "a questions file (enriched records or raw Spider records); overrides -data")
	fs.StringVar(&d.dbDir, "db-dir", "", "database directory for -questions (<db-dir>/<db_id>/<db_id>.sqlite)")
	fs.StringVar(&d.difficulty, "difficulty", "", "comma-separated difficulties to keep (easy, medium, hard)")
	fs.StringVar(&d.split, "split", "", "comma-separated splits to keep (train, eval)")
}

// load returns the selected questions and their database directory.
func (d *dataFlags) load(ctx context.Context) ([]dataset.QuestionRecord, string, error) {
	if d.questions != "" && d.dbDir == "" {
		return nil, "", errors.New("-questions needs -db-dir")
	}
	qs, dbDir, err := bundled.Source{Data: d.data, Questions: d.questions, DBDir: d.dbDir}.Load(ctx)
	if err != nil {
		return nil, "", err
	}
	qs, err = dataset.Filter{Difficulties: splitList(d.difficulty), Splits: splitList(d.split)}.Apply(qs)
	if err != nil {
		return nil, "", err
	}
	if len(qs) == 0 {
		return nil, "", fmt.Errorf("no questions left after filtering (difficulty %q, split %q)", d.difficulty, d.split)
	}
	return qs, dbDir, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func runGenerate(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("generate", flag.ContinueOnError)
	out := fs.String("out", "", "directory to write (must not exist or be empty; default: the cache used by the other commands)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var paths bundled.Paths
	var err error
	if *out == "" {
		paths, err = bundled.Ensure(ctx)
	} else {
		paths, err = bundled.Generate(ctx, *out)
	}
	if err != nil {
		return err
	}
	fmt.Printf("bundled dataset v%s in %s\n  databases: %s\n  train:     %s\n  eval:      %s\n",
		bundled.Version, paths.Root, paths.DBDir, paths.TrainQuestions, paths.EvalQuestions)
	return nil
}

func runImport(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	spider := fs.String("spider", "", "unpacked Spider directory (database/, train_spider.json, dev.json)")
	dbs := fs.String("db", "", "comma-separated database ids to import (default: all)")
	out := fs.String("out", "", "output directory")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *spider == "" || *out == "" {
		return errors.New("-spider and -out are required")
	}
	rep, err := dataset.ImportSpider(ctx, dataset.ImportOptions{SpiderDir: *spider, DBIDs: splitList(*dbs), OutDir: *out})
	if err != nil {
		return err
	}
	for _, id := range rep.MissingDatabases {
		fmt.Fprintf(os.Stderr, "warning: database %s is missing from %s: its questions were skipped\n", id, filepath.Join(*spider, "database"))
	}
	fmt.Printf("imported %d train and %d eval questions over %d databases into %s\n", rep.Train, rep.Eval, len(rep.Databases), *out)
	reasons := make([]string, 0, len(rep.Dropped))
	for reason := range rep.Dropped {
		reasons = append(reasons, reason)
	}
	sort.Strings(reasons)
	for _, reason := range reasons {
		fmt.Printf("  dropped %d: %s\n", rep.Dropped[reason], reason)
	}
	if len(reasons) > 0 {
		fmt.Printf("  (each dropped question and why: %s)\n", rep.DroppedFile)
	}
	split := ""
	switch {
	case rep.Train == 0:
		split = " -split eval"
	case rep.Eval == 0:
		split = " -split train"
	}
	fmt.Printf("next: sqlenv validate -data %s\n      sqlenv eval -data %s%s\n", filepath.Clean(*out), filepath.Clean(*out), split)
	return nil
}
