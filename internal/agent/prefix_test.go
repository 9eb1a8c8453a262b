package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/sessionlog"
)

var cacheControl = regexp.MustCompile(`,?"cache_control":\{"type":"ephemeral"\}`)

// TestRequestsArePrefixes drives the real loop through the real adapters and
// the fake server for two user turns with long tool output, and checks what
// the provider's prefix cache depends on: the system prompt and tools are
// byte-identical in every request, each request's stored messages are a
// prefix of the next request's up to the first message a logged history
// edit rewrote, and the reminder comes last and never reaches the log.
func TestRequestsArePrefixes(t *testing.T) {
	for _, format := range []string{"anthropic", "openai"} {
		t.Run(format, func(t *testing.T) {
			s := newLoopSession(t, format, "m", history.Config{}, false)
			srv, a, logPath := s.srv, s.agent, s.log
			srv.Enqueue(
				llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"seq 1 3000"}`}}},
				llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"echo short"}`}, {Name: "glob", Input: `{"pattern":"*"}`}}},
				llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"seq 1 2000"}`}}},
				llmtest.Reply{Text: "first turn done"},
				llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"seq 5 900"}`}}},
				llmtest.Reply{Text: "second turn done"},
			)
			for _, prompt := range []string{"count to a lot", "now a bit less"} {
				if _, err := a.Run(context.Background(), prompt, nil); err != nil {
					t.Fatal(err)
				}
			}

			reqs := srv.Requests()
			if len(reqs) != 6 {
				t.Fatalf("%d requests, want 6", len(reqs))
			}
			head := func(r llmtest.Request) []byte {
				var top map[string]json.RawMessage
				if err := json.Unmarshal(cacheControl.ReplaceAll(r.Body, nil), &top); err != nil {
					t.Fatal(err)
				}
				hd := append(append([]byte{}, top["tools"]...), top["system"]...)
				if format == "openai" {
					var msgs []json.RawMessage
					json.Unmarshal(top["messages"], &msgs)
					hd = append(hd, msgs[0]...) // the system message
				}
				return hd
			}
			edited := editedMessages(t, logPath)
			for i, r := range reqs {
				if r.DecodeErr != nil {
					t.Fatalf("request %d: %v", i, r.DecodeErr)
				}
				if !bytes.Equal(head(r), head(reqs[0])) {
					t.Errorf("request %d: system or tools differ from the first request's", i)
				}
				if !strings.HasPrefix(r.Reminder, "<context>") {
					t.Errorf("request %d: reminder %q is not last", i, r.Reminder)
				}
				if i == 0 {
					continue
				}
				prev := reqs[i-1].Messages
				limit := len(prev)
				if k, ok := edited[i]; ok && k < limit {
					limit = k
				}
				for k := 0; k < limit; k++ {
					a, _ := json.Marshal(prev[k])
					b, _ := json.Marshal(r.Messages[k])
					if !bytes.Equal(a, b) {
						t.Fatalf("request %d: stored message %d changed without a logged edit:\n%s\n%s", i, k, a, b)
					}
				}
			}
			if _, ok := edited[4]; !ok {
				t.Error("the first turn's long output was never stripped (no edit before request 4)")
			}
			raw, _ := os.ReadFile(logPath)
			if bytes.Contains(raw, []byte("<context>")) {
				t.Error("the reminder reached the session log")
			}
		})
	}
}

// editedMessages maps the index of each request (counting usage entries)
// to the first message index rewritten by edits logged before it.
func editedMessages(t *testing.T, path string) map[int]int {
	t.Helper()
	es, err := sessionlog.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]int{}
	req := 0
	for _, e := range es {
		switch e.Type {
		case sessionlog.TypeUsage:
			req++
		case sessionlog.TypeEdit:
			var ed history.Edit
			json.Unmarshal(e.Edit, &ed)
			for _, b := range ed.Blocks {
				if k, ok := out[req]; !ok || b.Message < k {
					out[req] = b.Message
				}
			}
		}
	}
	return out
}
