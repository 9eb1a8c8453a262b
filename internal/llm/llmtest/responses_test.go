package llmtest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/llmtest"
)

func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url+"/v1/responses", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The fake checks input items as the Responses API does, answering each
// broken pairing with the API's own 400 (see responses.go for the
// reports each message is taken from).
func TestResponsesFakeEnforcesPairing(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply{Thinking: "Look first.", ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: "read", Input: `{"path":"a"}`}}})
	code, body := post(t, srv.URL, `{"model":"gpt-5","store":false,"include":["reasoning.encrypted_content"],"reasoning":{"effort":"low","summary":"auto"},"input":"hi"}`)
	if code != 200 {
		t.Fatalf("first request: %d %s", code, body)
	}
	var first struct {
		Status string            `json:"status"`
		Output []json.RawMessage `json:"output"`
	}
	if err := json.Unmarshal([]byte(body), &first); err != nil || first.Status != "completed" || len(first.Output) != 2 {
		t.Fatalf("first response %s", body)
	}
	rs, fc := string(first.Output[0]), string(first.Output[1])
	var rsItem, fcItem struct{ ID string }
	_ = json.Unmarshal(first.Output[0], &rsItem)
	_ = json.Unmarshal(first.Output[1], &fcItem)
	rsID, fcID := rsItem.ID, fcItem.ID
	if !strings.Contains(rs, `"encrypted_content":"gAAAAB`) || !strings.Contains(rs, `"summary":[{"text":"Look first.","type":"summary_text"}]`) {
		t.Fatalf("reasoning item %s", rs)
	}
	user := `{"role":"user","content":"hi"}`
	out := `{"type":"function_call_output","call_id":"call_1","output":"x"}`
	fcNoID := `{"type":"function_call","call_id":"call_1","name":"read","arguments":"{}"}`
	req := func(items ...string) string {
		return `{"model":"gpt-5","store":false,"include":["reasoning.encrypted_content"],"input":[` + strings.Join(items, ",") + `]}`
	}
	tests := []struct {
		name, body, want string
	}{
		{"whole turn back", req(user, rs, fc, out), ""},
		{"no reasoning at all, no ids", req(user, fcNoID, out), ""},
		{"reasoning without its following item", req(user, rs, fcNoID, out), "Item '" + rsID + "' of type 'reasoning' was provided without its required following item."},
		{"call id without its reasoning", req(user, fc, out), "Item '" + fcID + "' of type 'function_call' was provided without its required 'reasoning' item: '" + rsID + "'."},
		{"output without its call", req(user, out), "No tool call found for function call output with call_id call_1."},
		{"call without its output", req(user, rs, fc), "No tool output found for function call call_1."},
		{"reasoning not persisted", req(user, `{"type":"reasoning","id":"`+rsID+`","summary":[]}`, fc, out), "Items are not persisted when `store` is set to false."},
		{"reasoning altered", req(user, strings.Replace(rs, "Look first.", "Look later.", 1), fc, out), ""},
		{"encrypted content altered", req(user, strings.Replace(rs, "gAAAAB", "gAAAAC", 1), fc, out), "could not be verified"},
		{"reasoning without summary", req(user, `{"type":"reasoning","id":"rs_x","encrypted_content":"e"}`), "Missing required parameter: 'input[1].summary'."},
		{"unknown parameter", `{"model":"gpt-5","input":"hi","max_tokens":10}`, "Unknown parameter: 'max_tokens'."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := post(t, srv.URL, tt.body)
			if tt.want == "" {
				if code != 200 {
					t.Fatalf("%d %s", code, body)
				}
				return
			}
			var e struct {
				Error struct{ Message, Type string } `json:"error"`
			}
			_ = json.Unmarshal([]byte(body), &e)
			if code != 400 || e.Error.Type != "invalid_request_error" || !strings.Contains(e.Error.Message, tt.want) {
				t.Errorf("%d %s, want 400 saying %q", code, body, tt.want)
			}
		})
	}
}

func TestResponsesFakeContextWindow(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.ContextLimit(50, nil)
	code, body := post(t, srv.URL, `{"model":"gpt-5","input":"`+strings.Repeat("x", 400)+`"}`)
	if code != 400 || !strings.Contains(body, `"code":"context_length_exceeded"`) || !strings.Contains(body, "exceeds the context window") {
		t.Errorf("%d %s", code, body)
	}
}

// A stream is the documented event sequence and ends at
// response.completed, with usage split as the API reports it.
func TestResponsesFakeStream(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply{Text: "Hello there", Usage: llm.Usage{Input: 100, CacheRead: 40, Output: 7}})
	code, body := post(t, srv.URL, `{"model":"gpt-4.1","stream":true,"input":"hi"}`)
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	var types []string
	for _, line := range strings.Split(body, "\n") {
		if typ, ok := strings.CutPrefix(line, "event: "); ok {
			types = append(types, typ)
		}
	}
	want := "response.created response.in_progress response.output_item.added response.content_part.added response.output_text.delta response.output_text.done response.output_item.done response.completed"
	if strings.Join(types, " ") != want {
		t.Errorf("events %v", types)
	}
	if !strings.Contains(body, `"usage":{"input_tokens":140,"input_tokens_details":{"cached_tokens":40},"output_tokens":7`) {
		t.Errorf("usage not as the API reports it: %s", body[strings.LastIndex(body, "usage"):])
	}
}
