package llmtest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// oreq is a Chat Completions body with the messages.
func oreq(model string, extra m, msgs ...m) []byte {
	b := m{"model": model, "max_tokens": 1000, "messages": msgs}
	for k, v := range extra {
		b[k] = v
	}
	out, _ := json.Marshal(b)
	return out
}

func ouser(s string) m { return m{"role": "user", "content": s} }
func otool(id string) m {
	return m{"role": "tool", "tool_call_id": id, "content": "a.go"}
}

// ocall is an assistant message calling bash as id, with the extra
// fields (reasoning_content, reasoning_details) and, when sig is not nil,
// a thought signature on the call.
func ocall(id string, sig *string, extra m) m {
	c := m{"id": id, "type": "function", "function": m{"name": "bash", "arguments": `{"command":"ls"}`}}
	if sig != nil {
		c["extra_content"] = m{"google": m{"thought_signature": *sig}}
	}
	msg := m{"role": "assistant", "content": nil, "tool_calls": []m{c}}
	for k, v := range extra {
		msg[k] = v
	}
	return msg
}

func oanswer(s string, extra m) m {
	msg := m{"role": "assistant", "content": s}
	for k, v := range extra {
		msg[k] = v
	}
	return msg
}

// served is one JSON reply of srv to a first request: the call's thought
// signature and the message's reasoning_details.
func served(t *testing.T, srv *Server, model string) (sig string, details json.RawMessage) {
	t.Helper()
	srv.Enqueue(Reply{JSON: true, Thinking: "I will list.", ToolCalls: []ToolCall{{ID: "call_1", Name: "bash", Input: `{"command":"ls"}`}}})
	st, body := post(t, srv, "/v1/chat/completions", oreq(model, nil, ouser("go")), nil)
	if st != http.StatusOK {
		t.Fatalf("first request: %d %s", st, body)
	}
	var r struct {
		Choices []struct {
			Message struct {
				ToolCalls []struct {
					ExtraContent struct {
						Google struct {
							ThoughtSignature string `json:"thought_signature"`
						} `json:"google"`
					} `json:"extra_content"`
				} `json:"tool_calls"`
				ReasoningDetails json.RawMessage `json:"reasoning_details"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil || len(r.Choices) == 0 {
		t.Fatalf("reply %s: %v", body, err)
	}
	msg := r.Choices[0].Message
	if len(msg.ToolCalls) > 0 {
		sig = msg.ToolCalls[0].ExtraContent.Google.ThoughtSignature
	}
	return sig, msg.ReasoningDetails
}

// TestReasoningRules: for each OpenAI-compatible server that needs
// reasoning back, a request that drops it gets that server's 400 with its
// own text, and the same request with it passes.
func TestReasoningRules(t *testing.T) {
	rc := func(s string) m { return m{"reasoning_content": s} }
	str := func(s string) *string { return &s }
	tests := []struct {
		name  string
		mode  Mode
		model string
		// build returns the breaking and the valid body, given what a
		// first request was served.
		build func(sig string, details json.RawMessage) (bad, ok []byte)
		want  string
	}{
		{name: "C1 DeepSeek V4: tool-call message without reasoning_content", mode: DeepSeekThinking, model: "deepseek-v4-pro",
			build: func(string, json.RawMessage) ([]byte, []byte) {
				return oreq("deepseek-v4-pro", nil, ouser("go"), ocall("c1", nil, nil), otool("c1")),
					// Empty reasoning is fine: it must be present.
					oreq("deepseek-v4-pro", nil, ouser("go"), ocall("c1", nil, rc("")), otool("c1"))
			},
			want: "The `reasoning_content` in the thinking mode must be passed back to the API."},
		{name: "C1 DeepSeek V4: the final answer of a tool turn too", mode: DeepSeekThinking, model: "deepseek-v4-flash",
			build: func(string, json.RawMessage) ([]byte, []byte) {
				return oreq("deepseek-v4-flash", nil, ouser("go"), ocall("c1", nil, rc("x")), otool("c1"), oanswer("done", nil), ouser("next")),
					// A turn without tool calls needs none.
					oreq("deepseek-v4-flash", nil, ouser("go"), ocall("c1", nil, rc("x")), otool("c1"), oanswer("done", rc("y")), ouser("hi"), oanswer("hello", nil), ouser("next"))
			},
			want: "The `reasoning_content` in the thinking mode must be passed back to the API."},
		{name: "C1 DeepSeek before V4: the index-naming text", mode: DeepSeekThinking, model: "deepseek-reasoner",
			build: func(string, json.RawMessage) ([]byte, []byte) {
				return oreq("deepseek-reasoner", nil, ouser("go"), ocall("c1", nil, nil), otool("c1")),
					oreq("deepseek-reasoner", m{"thinking": m{"type": "disabled"}}, ouser("go"), ocall("c1", nil, nil), otool("c1"))
			},
			want: "Missing `reasoning_content` field in the assistant message at message index 1. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls"},
		{name: "C1 DeepSeek: forced tool_choice in thinking mode", mode: DeepSeekThinking, model: "deepseek-v4-pro",
			build: func(string, json.RawMessage) ([]byte, []byte) {
				return oreq("deepseek-v4-pro", m{"tool_choice": "required"}, ouser("go")),
					oreq("deepseek-v4-pro", m{"tool_choice": "auto"}, ouser("go"))
			},
			want: "Thinking mode does not support this tool_choice"},
		{name: "D Gemini: current turn's call without its signature", mode: GeminiThoughtSignatures, model: "gemini-3-pro-preview",
			build: func(sig string, _ json.RawMessage) ([]byte, []byte) {
				return oreq("gemini-3-pro-preview", nil, ouser("go"), ocall("call_1", nil, nil), otool("call_1")),
					oreq("gemini-3-pro-preview", nil, ouser("go"), ocall("call_1", &sig, nil), otool("call_1"))
			},
			want: "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:bash` , position 2. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details."},
		{name: "D Gemini: a forged signature; the documented bypass passes", mode: GeminiThoughtSignatures, model: "gemini-3-flash-preview",
			build: func(string, json.RawMessage) ([]byte, []byte) {
				return oreq("gemini-3-flash-preview", nil, ouser("go"), ocall("injected", str("Zm9yZ2Vk"), nil), otool("injected")),
					oreq("gemini-3-flash-preview", nil, ouser("go"), ocall("injected", str(skipSignature), nil), otool("injected"))
			},
			want: "Unable to submit request because Thought signature is not valid."},
		{name: "D Gemini: only the current turn is checked", mode: GeminiThoughtSignatures, model: "gemini-3-pro-preview",
			build: func(sig string, _ json.RawMessage) ([]byte, []byte) {
				return oreq("gemini-3-pro-preview", nil, ouser("go"), ocall("call_1", nil, nil), otool("call_1")),
					oreq("gemini-3-pro-preview", nil, ouser("go"), ocall("call_1", nil, nil), otool("call_1"), oanswer("done", nil), ouser("next"))
			},
			want: "Function call is missing a thought_signature"},
		{name: "E OpenRouter: reasoning_details not sent back", mode: OpenRouterReasoning, model: "google/gemini-3-pro-preview",
			build: func(_ string, details json.RawMessage) ([]byte, []byte) {
				return oreq("google/gemini-3-pro-preview", nil, ouser("go"), ocall("call_1", nil, nil), otool("call_1")),
					oreq("google/gemini-3-pro-preview", nil, ouser("go"), ocall("call_1", nil, m{"reasoning_details": details}), otool("call_1"))
			},
			want: `Provider returned error`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := NewServer(t)
			srv.SetModes(tt.mode)
			sig, details := served(t, srv, tt.model)
			bad, ok := tt.build(sig, details)
			st, body := post(t, srv, "/v1/chat/completions", bad, nil)
			if st != http.StatusBadRequest || !strings.Contains(body, jsonEscape(tt.want)) {
				t.Errorf("breaking request: %d %s\nwant 400 with %q", st, body, tt.want)
			}
			if st, body := post(t, srv, "/v1/chat/completions", ok, nil); st != http.StatusOK {
				t.Errorf("valid request refused: %d %s", st, body)
			}
		})
	}
}
