package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Message is one turn of a chat. Its JSON form is Hugging Face's (OpenAI's)
// message: {"role", "content", "reasoning_content", "tool_calls"}, where
// content may be null (an assistant turn that only calls tools) and each
// tool call may be {"name", "arguments"} or {"type": "function", "function":
// {"name", "arguments"}}; what Qwen3's template cannot render (content parts
// as a list, a tool call without a name) is refused with an error when
// unmarshalling.
type Message struct {
	// Role is "system", "user", "assistant" or "tool".
	Role    string `json:"role"`
	Content string `json:"content"`
	// ReasoningContent is an assistant's thinking. When nil, a
	// "<think>…</think>" block at the start of Content is taken as such.
	ReasoningContent *string `json:"reasoning_content,omitempty"`
	// ToolCalls are the function calls of an assistant turn.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`

	// nullContent records "content": null in the JSON: fine for an
	// assistant turn (rendered empty, as the template does), an error for
	// the others (the template cannot concatenate None).
	nullContent bool
}

// UnmarshalJSON reads a Hugging Face chat message (see Message).
func (m *Message) UnmarshalJSON(data []byte) error {
	var aux struct {
		Role             string          `json:"role"`
		Content          json.RawMessage `json:"content"`
		ReasoningContent *string         `json:"reasoning_content"`
		ToolCalls        []ToolCall      `json:"tool_calls"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return fmt.Errorf("chat message: %w", err)
	}
	*m = Message{Role: aux.Role, ReasoningContent: aux.ReasoningContent, ToolCalls: aux.ToolCalls}
	switch {
	case isNull(aux.Content):
		m.nullContent = true
	case aux.Content[0] == '"':
		if err := json.Unmarshal(aux.Content, &m.Content); err != nil {
			return fmt.Errorf("chat message (role %q): content: %w", aux.Role, err)
		}
	default:
		return fmt.Errorf("chat message (role %q): content must be a string or null, not %s: Qwen3's chat template renders text only",
			aux.Role, jsonKind(aux.Content))
	}
	return nil
}

// ToolCall is a function call made by the assistant.
type ToolCall struct {
	Name string `json:"name"`
	// Arguments is a JSON object (rendered as JSON) or a JSON string (whose
	// text is rendered as it is).
	Arguments json.RawMessage `json:"arguments"`
}

// UnmarshalJSON reads a tool call in either of Hugging Face's shapes:
// {"name", "arguments"} or {"id", "type": "function", "function": {"name",
// "arguments"}} (what Qwen3's template accepts); a call without a name, or
// of another type than "function", is an error.
func (c *ToolCall) UnmarshalJSON(data []byte) error {
	type plain struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	var aux struct {
		plain
		Type     string `json:"type"`
		Function *plain `json:"function"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return fmt.Errorf("tool call: %w", err)
	}
	if aux.Type != "" && aux.Type != "function" {
		return fmt.Errorf("tool call of type %q: only \"function\" calls can be rendered", aux.Type)
	}
	call := aux.plain
	if aux.Function != nil {
		call = *aux.Function
	}
	if call.Name == "" {
		return fmt.Errorf("tool call without a function name: %s", data)
	}
	*c = ToolCall{Name: call.Name, Arguments: call.Arguments}
	return nil
}

// jsonKind names the kind of a JSON value, for errors.
func jsonKind(raw json.RawMessage) string {
	switch strings.TrimSpace(string(raw))[0] {
	case '[':
		return "a list"
	case '{':
		return "an object"
	case 't', 'f':
		return "a boolean"
	default:
		return "a number"
	}
}

// ChatOptions are the apply_chat_template options of the Qwen3 template.
type ChatOptions struct {
	// AddGenerationPrompt ends the text with the assistant's turn opening.
	AddGenerationPrompt bool
	// DisableThinking is enable_thinking=False: the generation prompt gets
	// an empty "<think>\n\n</think>\n\n" block, so the model answers directly.
	DisableThinking bool
	// Tools are JSON function schemas, rendered in the system turn.
	Tools []json.RawMessage
}

// ErrUnsupportedChatTemplate is returned by ApplyChatTemplate for a tokenizer
// whose chat template is not Qwen3's.
var ErrUnsupportedChatTemplate = errors.New("unsupported chat template")

// IsQwen3ChatTemplate reports whether a Jinja chat template is Qwen3's: the
// ChatML template with thinking blocks that RenderQwen3Chat implements.
func IsQwen3ChatTemplate(tmpl string) bool {
	for _, marker := range []string{"<|im_start|>", "last_query_index", "reasoning_content", "<think>\\n\\n</think>\\n\\n", "enable_thinking", "<tool_response>"} {
		if !strings.Contains(tmpl, marker) {
			return false
		}
	}
	return true
}

// ApplyChatTemplate renders messages with the tokenizer's chat template,
// which must be Qwen3's (there is no Jinja engine in Go: the template is
// implemented in code, see RenderQwen3Chat).
func (t *Tokenizer) ApplyChatTemplate(msgs []Message, opts ChatOptions) (string, error) {
	if !IsQwen3ChatTemplate(t.chatTemplate) {
		return "", fmt.Errorf("tokenizer %s: %w (only Qwen3's is implemented; %s has %d characters of template)", t.source, ErrUnsupportedChatTemplate, TokenizerConfig, len(t.chatTemplate))
	}
	return RenderQwen3Chat(msgs, opts)
}

// RenderQwen3Chat renders messages exactly as Hugging Face's
// apply_chat_template(messages, tokenize=False, …) does with Qwen3's
// template: ChatML turns, thinking kept only for assistant turns after the
// last user query, tool calls and tool responses, and the generation prompt.
func RenderQwen3Chat(msgs []Message, opts ChatOptions) (string, error) {
	if len(msgs) == 0 {
		return "", errors.New("chat: no messages")
	}
	var b strings.Builder
	if len(opts.Tools) > 0 {
		b.WriteString("<|im_start|>system\n")
		if msgs[0].Role == "system" {
			b.WriteString(msgs[0].Content + "\n\n")
		}
		b.WriteString("# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>")
		for i, tool := range opts.Tools {
			js, err := pythonJSON(tool)
			if err != nil {
				return "", fmt.Errorf("chat: tool %d: %w", i, err)
			}
			b.WriteString("\n" + js)
		}
		b.WriteString("\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n")
	} else if msgs[0].Role == "system" {
		b.WriteString("<|im_start|>system\n" + msgs[0].Content + "<|im_end|>\n")
	}
	lastQuery := lastQueryIndex(msgs)
	for i, m := range msgs {
		if m.nullContent && m.Role != "assistant" {
			return "", fmt.Errorf("chat: message %d (role %q) has null content: only an assistant turn may (Qwen3's template)", i, m.Role)
		}
		content := m.Content
		switch {
		case m.Role == "user" || (m.Role == "system" && i > 0):
			b.WriteString("<|im_start|>" + m.Role + "\n" + content + "<|im_end|>\n")
		case m.Role == "assistant":
			reasoning := ""
			if m.ReasoningContent != nil {
				reasoning = *m.ReasoningContent
			} else if strings.Contains(content, "</think>") {
				// content.split('</think>')[0].rstrip('\n').split('<think>')[-1].lstrip('\n')
				before, _, _ := strings.Cut(content, "</think>")
				before = strings.TrimRight(before, "\n")
				if k := strings.LastIndex(before, "<think>"); k >= 0 {
					before = before[k+len("<think>"):]
				}
				reasoning = strings.TrimLeft(before, "\n")
				// content.split('</think>')[-1].lstrip('\n')
				content = strings.TrimLeft(content[strings.LastIndex(content, "</think>")+len("</think>"):], "\n")
			}
			if i > lastQuery && (i == len(msgs)-1 || reasoning != "") {
				b.WriteString("<|im_start|>" + m.Role + "\n<think>\n" + strings.Trim(reasoning, "\n") + "\n</think>\n\n" + strings.TrimLeft(content, "\n"))
			} else {
				b.WriteString("<|im_start|>" + m.Role + "\n" + content)
			}
			for j, tc := range m.ToolCalls {
				if (j == 0 && content != "") || j > 0 {
					b.WriteString("\n")
				}
				args, err := renderArguments(tc.Arguments)
				if err != nil {
					return "", fmt.Errorf("chat: message %d, tool call %d: %w", i, j, err)
				}
				b.WriteString("<tool_call>\n{\"name\": \"" + tc.Name + "\", \"arguments\": " + args + "}\n</tool_call>")
			}
			b.WriteString("<|im_end|>\n")
		case m.Role == "tool":
			if i == 0 || msgs[i-1].Role != "tool" {
				b.WriteString("<|im_start|>user")
			}
			b.WriteString("\n<tool_response>\n" + content + "\n</tool_response>")
			if i == len(msgs)-1 || msgs[i+1].Role != "tool" {
				b.WriteString("<|im_end|>\n")
			}
		}
	}
	if opts.AddGenerationPrompt {
		b.WriteString("<|im_start|>assistant\n")
		if opts.DisableThinking {
			b.WriteString("<think>\n\n</think>\n\n")
		}
	}
	return b.String(), nil
}

// lastQueryIndex is the index of the last user message that is a real query
// (not a wrapped tool response); thinking is kept only after it.
func lastQueryIndex(msgs []Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role == "user" && !(strings.HasPrefix(m.Content, "<tool_response>") && strings.HasSuffix(m.Content, "</tool_response>")) {
			return i
		}
	}
	return len(msgs) - 1
}

func renderArguments(raw json.RawMessage) (string, error) {
	if isNull(raw) {
		return "null", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	return pythonJSON(raw)
}

// pythonJSON re-serialises JSON the way Python's json.dumps(x,
// ensure_ascii=False) writes it (the template's tojson): ", " and ": "
// separators, keys in their original order, non-ASCII characters as they are.
// Numbers keep their JSON text.
func pythonJSON(raw json.RawMessage) (string, error) {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var b strings.Builder
	if err := writePythonJSON(&b, dec); err != nil {
		return "", err
	}
	if dec.More() {
		return "", errors.New("trailing data after JSON value")
	}
	return b.String(), nil
}

func writePythonJSON(b *strings.Builder, dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	switch v := tok.(type) {
	case json.Delim:
		closer := map[json.Delim]string{'{': "}", '[': "]"}[v]
		b.WriteString(string(v))
		for first := true; dec.More(); first = false {
			if !first {
				b.WriteString(", ")
			}
			if v == '{' {
				key, err := dec.Token()
				if err != nil {
					return fmt.Errorf("invalid JSON: %w", err)
				}
				writePythonString(b, key.(string))
				b.WriteString(": ")
			}
			if err := writePythonJSON(b, dec); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return fmt.Errorf("invalid JSON: %w", err)
		}
		b.WriteString(closer)
	case string:
		writePythonString(b, v)
	case json.Number:
		b.WriteString(v.String())
	case bool:
		if v {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case nil:
		b.WriteString("null")
	}
	return nil
}

func writePythonString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}
