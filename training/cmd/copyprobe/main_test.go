package main

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestProbes: every synthetic question names its constant and the
// completion's SQL ends with it, so that copying is the only way to the
// right literal.
func TestProbes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for range 200 {
		p := newProbe(r)
		constant := strings.Trim(strings.TrimPrefix(p.want, "= "), "'")
		if !strings.Contains(p.prompt, constant) {
			t.Fatalf("question %q does not name %s", p.prompt, constant)
		}
		if !strings.HasSuffix(p.completion, p.want+"<|im_end|>") || !p.copiedOK(p.completion[:len(p.completion)-len("<|im_end|>")]) {
			t.Fatalf("completion %q does not end with %s", p.completion, p.want)
		}
	}
}

// TestNameProbes: the DESCRIBE target is one of the listed tables and
// names the question's kind of thing; training names carry no test affix
// and no test noun, every new-prefix / new-suffix name carries a test
// affix, and only the exact name counts as copied.
func TestNameProbes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, test := range []nameTest{namesTrain, namesNewPrefix, namesNewSuffix, namesNewNoun} {
		for range 300 {
			p := newNameProbe(r, test, caseStyles, 0)
			name := strings.TrimPrefix(p.want, "DESCRIBE: ")
			user := p.prompt[strings.Index(p.prompt, "Question: "):]
			tables := strings.Split(strings.SplitN(strings.SplitN(user, "Tables: ", 2)[1], "<|im_end|>", 2)[0], ", ")
			if !slices.Contains(tables, name) || p.kind != test.String() {
				t.Fatalf("%s: %q not among the listed %q", test, name, tables)
			}
			lower := strings.ToLower(strings.ReplaceAll(name, "_", ""))
			hasTestAffix := slices.ContainsFunc(heldoutPrefixes, func(a string) bool { return strings.HasPrefix(lower, a) }) ||
				slices.ContainsFunc(heldoutSuffixes, func(a string) bool { return strings.HasSuffix(lower, a) })
			switch test {
			case namesTrain:
				for _, w := range strings.FieldsFunc(user[:strings.Index(user, "Tables: ")], func(c rune) bool { return c == ' ' || c == '.' || c == '?' }) {
					for _, n := range newNouns {
						if w == n || w == plural(n) {
							t.Fatalf("training question %q names the test noun %s", user, n)
						}
					}
				}
			case namesNewPrefix, namesNewSuffix:
				if !hasTestAffix {
					t.Fatalf("%s name %q has no test affix", test, name)
				}
			}
			if !p.copiedOK(" "+p.want+"\n") || p.copiedOK(p.want+"s") || p.copiedOK("DESCRIBE: x"+name) {
				t.Fatalf("copiedOK is not exact for %q", p.want)
			}
		}
	}
}

// TestRun trains two steps of the smallest shape on the shipped base
// model's vocabulary and refuses inconsistent shapes by flag name.
func TestRun(t *testing.T) {
	ctx := context.Background()
	if err := run(ctx, []string{"-tokenizer", "../../tinybase/model", "-steps", "2", "-eval_every", "1", "-hidden", "32", "-layers", "1"}); err != nil {
		t.Fatal(err)
	}
	if err := run(ctx, []string{"-heads", "4", "-kv_heads", "3"}); err == nil || !strings.Contains(err.Error(), "-kv_heads") {
		t.Fatalf("-heads 4 -kv_heads 3: %v", err)
	}
	if err := run(ctx, []string{"-tokenizer", "../../tinybase/model", "-task", "names", "-steps", "1", "-eval_every", "1", "-hidden", "32", "-layers", "1"}); err != nil {
		t.Fatal(err)
	}
	if err := run(ctx, []string{"-task", "names", "-list_share", "0.5", "-curriculum_steps", "2", "-affixes", "letters", "-vocab", "300", "-pattern", `[ _]?\p{Lu}?\p{Ll}+|\p{Lu}+|\p{N}|[^\s\p{L}\p{N}_]+|\s+`,
		"-steps", "2", "-eval_every", "2", "-hidden", "32", "-layers", "1"}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]string{{"-list_share", "0.5"}, {"-task", "names", "-list_share", "1.5"}, {"-task", "names", "-curriculum_steps", "-1"}, {"-task", "names", "-affixes", "words"}} {
		if err := run(ctx, bad); err == nil || !strings.Contains(err.Error(), bad[len(bad)-2]+" ") {
			t.Fatalf("%v: %v", bad, err)
		}
	}
	if err := run(ctx, []string{"-task", "names", "-name_styles", "snake,kebab"}); err == nil || !strings.Contains(err.Error(), "kebab") {
		t.Fatalf("-name_styles snake,kebab: %v", err)
	}
	if err := run(ctx, []string{"-task", "tables"}); err == nil || !strings.Contains(err.Error(), "-task") {
		t.Fatalf("-task tables: %v", err)
	}
	if err := run(ctx, []string{"-tokenizer", "/nonexistent"}); err == nil || !strings.Contains(err.Error(), "/nonexistent") {
		t.Fatalf("missing tokenizer: %v", err)
	}
}

// TestListProbes checks the dense lesson: its completion re-writes the
// prompt's table list exactly, and the curriculum's cap shortens lists.
func TestListProbes(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for i := range 200 {
		maxNames := i % 7 // 0: no cap
		p := newListProbe(r, namesTrain, caseStyles, maxNames)
		list := strings.TrimSuffix(strings.SplitN(p.prompt, "Tables: ", 2)[1], "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n")
		if p.completion != "TABLES: "+list+"<|im_end|>" || !p.copiedOK(p.want) {
			t.Fatalf("list probe %q does not re-write the list %q", p.completion, list)
		}
		n := len(strings.Split(list, ", "))
		if (maxNames == 0 && (n < 4 || n > 6)) || (maxNames > 0 && n > maxNames) {
			t.Fatalf("maxNames %d: %d names listed: %q", maxNames, n, list)
		}
	}
}
