package tokenizer

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// golden holds chat cases rendered by the real Qwen3 template with Jinja
// (testdata/chat_golden.py).
type golden struct {
	TemplateSHA256 string `json:"template_sha256"`
	Cases          []struct {
		Name     string            `json:"name"`
		Tools    []json.RawMessage `json:"tools"`
		Messages []struct {
			Role             string  `json:"role"`
			Content          string  `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
			ToolCalls        []struct {
				Function struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
		AddGenerationPrompt bool   `json:"add_generation_prompt"`
		EnableThinking      *bool  `json:"enable_thinking"`
		Rendered            string `json:"rendered"`
	} `json:"cases"`
}

func loadGolden(t *testing.T) golden {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "chat_golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

func TestRenderQwen3ChatMatchesJinja(t *testing.T) {
	g := loadGolden(t)
	if len(g.Cases) < 10 {
		t.Fatalf("only %d golden cases", len(g.Cases))
	}
	for _, c := range g.Cases {
		var msgs []Message
		for _, m := range c.Messages {
			msg := Message{Role: m.Role, Content: m.Content, ReasoningContent: m.ReasoningContent}
			for _, tc := range m.ToolCalls {
				msg.ToolCalls = append(msg.ToolCalls, ToolCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments})
			}
			msgs = append(msgs, msg)
		}
		opts := ChatOptions{AddGenerationPrompt: c.AddGenerationPrompt, Tools: c.Tools}
		opts.DisableThinking = c.EnableThinking != nil && !*c.EnableThinking
		got, err := RenderQwen3Chat(msgs, opts)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		if got != c.Rendered {
			t.Errorf("%s:\n--- got\n%s\n--- want\n%s", c.Name, got, c.Rendered)
		}
	}
}

func TestChatTemplateErrors(t *testing.T) {
	if _, err := RenderQwen3Chat(nil, ChatOptions{}); err == nil {
		t.Fatal("no messages accepted")
	}
	if _, err := RenderQwen3Chat([]Message{{Role: "user", Content: "x"}}, ChatOptions{Tools: []json.RawMessage{json.RawMessage(`{"a":`)}}); err == nil || !strings.Contains(err.Error(), "tool 0") {
		t.Fatalf("bad tool JSON: %v", err)
	}
	tk, err := Load(writeTinyVocabMerges(t)) // its config has no chat template
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tk.ApplyChatTemplate([]Message{{Role: "user", Content: "x"}}, ChatOptions{}); !errors.Is(err, ErrUnsupportedChatTemplate) {
		t.Fatalf("unsupported template: %v", err)
	}
}

func TestPythonJSON(t *testing.T) {
	cases := map[string]string{
		`{"b":1,"a":[true,null,"x"]}`: `{"b": 1, "a": [true, null, "x"]}`,
		`"é\u0001\n<>&"`:              `"é\u0001\n<>&"`,
		`[]`:                          `[]`,
		`{"n": 1.50}`:                 `{"n": 1.50}`,
	}
	for in, want := range cases {
		if got, err := pythonJSON(json.RawMessage(in)); err != nil || got != want {
			t.Errorf("pythonJSON(%s) = %s (%v), want %s", in, got, err, want)
		}
	}
}

// TestMessageJSONHuggingFaceShapes: messages in Hugging Face's JSON shape
// (tool calls nested under "function", content null beside tool calls)
// render as the same messages built in Go; what the template cannot render
// is refused with an error that names it.
func TestMessageJSONHuggingFaceShapes(t *testing.T) {
	hf := `[
	  {"role": "user", "content": "How many singers?"},
	  {"role": "assistant", "content": null, "tool_calls": [
	    {"id": "call_1", "type": "function", "function": {"name": "query", "arguments": {"sql": "SELECT count(*) FROM singer"}}},
	    {"type": "function", "function": {"name": "describe", "arguments": "{\"table\": \"singer\"}"}}]},
	  {"role": "tool", "content": "6"}
	]`
	var msgs []Message
	if err := json.Unmarshal([]byte(hf), &msgs); err != nil {
		t.Fatal(err)
	}
	built := []Message{
		{Role: "user", Content: "How many singers?"},
		{Role: "assistant", ToolCalls: []ToolCall{
			{Name: "query", Arguments: json.RawMessage(`{"sql": "SELECT count(*) FROM singer"}`)},
			{Name: "describe", Arguments: json.RawMessage(`"{\"table\": \"singer\"}"`)}}},
		{Role: "tool", Content: "6"},
	}
	got, err := RenderQwen3Chat(msgs, ChatOptions{AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	want, err := RenderQwen3Chat(built, ChatOptions{AddGenerationPrompt: true})
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("Hugging Face JSON renders\n%q\nGo messages render\n%q", got, want)
	}
	for _, frag := range []string{`{"name": "query", "arguments": {"sql": "SELECT count(*) FROM singer"}}`, `{"name": "describe", "arguments": {"table": "singer"}}`} {
		if !strings.Contains(got, frag) {
			t.Errorf("rendering lacks %s:\n%s", frag, got)
		}
	}

	for _, c := range []struct{ json, want string }{
		{`{"role": "user", "content": [{"type": "text", "text": "hi"}]}`, "content must be a string or null, not a list"},
		{`{"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {"arguments": {}}}]}`, "without a function name"},
		{`{"role": "assistant", "content": "", "tool_calls": [{"arguments": {}}]}`, "without a function name"},
		{`{"role": "assistant", "content": "", "tool_calls": [{"type": "code_interpreter", "code": "1+1"}]}`, `type "code_interpreter"`},
	} {
		var m Message
		err := json.Unmarshal([]byte(c.json), &m)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.json, err, c.want)
		}
	}
	var user Message
	if err := json.Unmarshal([]byte(`{"role": "user", "content": null}`), &user); err != nil {
		t.Fatal(err)
	}
	if _, err := RenderQwen3Chat([]Message{user}, ChatOptions{}); err == nil || !strings.Contains(err.Error(), "null content") {
		t.Errorf("a user turn with null content rendered (error %v)", err)
	}
}
