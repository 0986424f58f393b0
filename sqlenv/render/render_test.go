package render

import (
	"strings"
	"testing"

	"github.com/gosqlenv/gosqlenv/sqlenv"
	"github.com/gosqlenv/gosqlenv/sqlenv/dataset"
)

func TestHTMLIsEscapedAndComplete(t *testing.T) {
	ep := sqlenv.EpisodeReport{QuestionID: "q1", Question: "How many <b>rows</b>?", Correct: true, Reward: 1.2, Steps: 2,
		Turns: []sqlenv.Turn{
			{Action: sqlenv.Action{ActionType: sqlenv.Query, Argument: "SELECT count(*) FROM t WHERE a < 3", Metadata: map[string]any{"text": "QUERY: SELECT count(*) FROM t WHERE a < 3"}},
				Observation: sqlenv.Observation{Result: "count(*)\n1. 7\n(1 row)", Reward: 0.175}},
			{Action: sqlenv.Action{ActionType: sqlenv.Answer, Argument: "7"}, Observation: sqlenv.Observation{Result: "Answer submitted: correct.", Reward: 1}},
		}}
	h := Transcript(ep)
	for _, want := range []string{"How many &lt;b&gt;rows&lt;/b&gt;?", "✓ correct", "a &lt; 3", "+0.175", "Answer submitted: correct."} {
		if !strings.Contains(h, want) {
			t.Errorf("transcript lacks %q:\n%s", want, h)
		}
	}
	if strings.Contains(h, "model wrote") {
		t.Error("the model's text repeats the action and must not be shown twice")
	}
	wrong := ep
	wrong.Correct = false
	side := SideBySide(5, Column{"random", sqlenv.EvalReport{Episodes: []sqlenv.EpisodeReport{wrong}}}, Column{"trained", sqlenv.EvalReport{Episodes: []sqlenv.EpisodeReport{ep}}})
	if strings.Count(side, "<tr>") < 2 || !strings.Contains(side, "✗ wrong") || !strings.Contains(side, "✓ correct") {
		t.Fatalf("side by side:\n%s", side)
	}
	sum := SummaryTable(SummaryRow{"random", sqlenv.EvalReport{SuccessRate: 0.25, AvgReward: 0.3, AvgSteps: 4}})
	if !strings.Contains(sum, "25.0 %") {
		t.Fatalf("summary:\n%s", sum)
	}
	ds := DatasetTable([]dataset.QuestionRecord{{DatabaseName: "a", Split: dataset.Train, Difficulty: dataset.Easy}, {DatabaseName: "a", Split: dataset.Train, Difficulty: dataset.Hard}})
	if !strings.Contains(ds, "<td style=\""+CellStyle+"\">2</td>") {
		t.Fatalf("dataset table:\n%s", ds)
	}
}
