package openai

import (
	"bytes"
	"encoding/json"
	"strings"
)

// contentValue is a message's or delta's content as a server sent it: a
// string (the API's form), null, or an array of typed parts. Mistral's
// reasoning models (Magistral) stream
// [{"type":"thinking","thinking":[{"type":"text","text":"…"}]}] and then
// [{"type":"text","text":"…"}] (docs.mistral.ai/capabilities/reasoning;
// BerriAI/litellm#16272, symfony/ai#2422); gpt-oss behind some gateways
// sends {"type":"reasoning","summary":[{"type":"summary_text",…}]} parts
// (databricks/appkit#559). Reasoning parts become thinking, text parts
// text; a part of any other type is skipped rather than failing a reply
// that is otherwise whole.
type contentValue struct {
	text, thinking string
}

// contentPartIn is one part of an array content, of any of those shapes.
type contentPartIn struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Thinking json.RawMessage `json:"thinking"` // a string, or an array of text parts
	Summary  json.RawMessage `json:"summary"`  // an array of summary_text parts, or a string
	Content  json.RawMessage `json:"content"`  // nested parts (reasoning_text)
}

func (c *contentValue) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || bytes.Equal(b, []byte("null")):
		*c = contentValue{}
		return nil
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*c = contentValue{text: s}
		return nil
	}
	var parts []contentPartIn
	if err := json.Unmarshal(b, &parts); err != nil {
		return err
	}
	var text, thinking strings.Builder
	for _, p := range parts {
		switch p.Type {
		case "text", "output_text":
			text.WriteString(p.Text)
		case "thinking", "reasoning", "reasoning_text":
			thinking.WriteString(partsText(p.Thinking))
			thinking.WriteString(partsText(p.Summary))
			thinking.WriteString(partsText(p.Content))
			if p.Type == "reasoning_text" || len(p.Thinking)+len(p.Summary)+len(p.Content) == 0 {
				thinking.WriteString(p.Text)
			}
		}
	}
	*c = contentValue{text: text.String(), thinking: thinking.String()}
	return nil
}

// partsText is the text of a nested reasoning value: a string, or the
// text of an array of parts.
func partsText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}
