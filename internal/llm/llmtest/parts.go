package llmtest

import (
	"encoding/json"
	"strings"
)

// MistralContentParts streams content as Mistral's reasoning models
// (Magistral) do: reasoning as delta.content arrays of thinking parts,
// [{"type":"thinking","thinking":[{"type":"text","text":"…"}]}], then the
// answer as [{"type":"text","text":"…"}] parts; a whole response carries
// the same array as its message content. The shapes are those of
// docs.mistral.ai/capabilities/reasoning and of the stream quoted in
// BerriAI/litellm#16272.
const MistralContentParts Mode = "mistral-content-parts"

func (s *Server) contentParts() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.has(MistralContentParts)
}

// toContentParts rewrites Chat Completions chunks (or a whole response)
// so reasoning_content and string content travel as Mistral's parts.
func toContentParts(chunks []string) []string {
	out := make([]string, 0, len(chunks))
	for _, c := range chunks {
		data, ok := strings.CutPrefix(c, "data: ")
		if !ok {
			out = append(out, c)
			continue
		}
		data = strings.TrimSpace(data)
		var v map[string]any
		if json.Unmarshal([]byte(data), &v) != nil {
			out = append(out, c)
			continue
		}
		rewriteParts(v)
		out = append(out, "data: "+jsonString(v)+"\n\n")
	}
	return out
}

// rewriteParts changes each choice's delta or message in place.
func rewriteParts(v map[string]any) {
	choices, _ := v["choices"].([]any)
	for _, ch := range choices {
		choice, _ := ch.(map[string]any)
		for _, key := range []string{"delta", "message"} {
			m, ok := choice[key].(map[string]any)
			if !ok {
				continue
			}
			var parts []any
			if th, _ := m["reasoning_content"].(string); th != "" {
				parts = append(parts, obj{"type": "thinking", "thinking": []any{obj{"type": "text", "text": th}}})
			}
			delete(m, "reasoning_content")
			if t, _ := m["content"].(string); t != "" {
				parts = append(parts, obj{"type": "text", "text": t})
			}
			if parts != nil {
				m["content"] = parts
			}
		}
	}
}

// contentPartsJSON is a whole response with its content as parts.
func contentPartsJSON(body []byte) []byte {
	var v map[string]any
	if json.Unmarshal(body, &v) != nil {
		return body
	}
	rewriteParts(v)
	return []byte(jsonString(v))
}
