package verify

import (
	"context"
	"testing"

	"github.com/gosqlenv/gosqlenv/sqlenv/answer"
)

func TestAnswerVerifier(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name      string
		gold      string
		typ       answer.Type
		rows      [][]any
		output    string
		predicted string
		correct   bool
	}{
		{"integer with marker", "42", answer.Integer, nil, "The query returns one row.\nANSWER: 42", "42", true},
		{"integer without colon", "42", answer.Integer, nil, "answer 42.0", "42.0", true},
		{"integer last marker wins", "7", answer.Integer, nil, "ANSWER: 6\nWait, recount.\nAnswer: 7\n", "7", true},
		{"integer wrong", "42", answer.Integer, nil, "ANSWER: 41", "41", false},
		{"integer no marker", "1,234", answer.Integer, nil, "  1234\n", "1234", true},
		{"float within 1%", "3.14159", answer.Float, nil, "I think\nANSWER: 3.14", "3.14", true},
		{"float off", "3.14159", answer.Float, nil, "ANSWER: 3.5", "3.5", false},
		{"list any order", "Alice, Bob", answer.List, [][]any{{"Alice"}, {"Bob"}}, "ANSWER: Bob, Alice", "Bob, Alice", true},
		{"list on following lines", "Alice, Bob", answer.List, [][]any{{"Alice"}, {"Bob"}}, "ANSWER:\nBob\nAlice\n\nThose are the names.", "Bob\nAlice", true},
		{"list missing item", "Alice, Bob", answer.List, [][]any{{"Alice"}, {"Bob"}}, "ANSWER: Alice", "Alice", false},
		{"string case-insensitive", "New York", answer.String, nil, "Answer is: new york", "new york", true},
		{"string wrong", "New York", answer.String, nil, "ANSWER: Boston", "Boston", false},
		{"not a marker", "yes", answer.String, nil, "Answers vary.", "Answers vary.", false},
		{"empty", "42", answer.Integer, nil, "ANSWER:", "", false},
	}
	for _, c := range cases {
		v := NewAnswerVerifier(c.gold, c.typ, c.rows)
		var _ Verifier = v
		r := v.Verify(ctx, c.output)
		want := 0.0
		if c.correct {
			want = 1
		}
		if r.Reward != want || r.Success != c.correct || r.Metadata["predicted"] != c.predicted ||
			r.Metadata["gold"] != c.gold || r.Metadata["answer_type"] != string(c.typ) {
			t.Errorf("%s: reward %v success %v metadata %v; want %v predicted %q", c.name, r.Reward, r.Success, r.Metadata, want, c.predicted)
		}
	}
	// Through VerifyBatch like any Verifier.
	rs := VerifyBatch(ctx, NewAnswerVerifier("5", answer.Integer, nil), []string{"ANSWER: 5", "ANSWER: 4"}, 2)
	if rs[0].Reward != 1 || rs[1].Reward != 0 {
		t.Errorf("batch: %v %v", rs[0].Reward, rs[1].Reward)
	}
}
