package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/compact"
	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/anthropic"
	"github.com/harness-dev/harness/internal/llm/llmtest"
	"github.com/harness-dev/harness/internal/llm/openai"
	"github.com/harness-dev/harness/internal/reminder"
)

var cacheControl = regexp.MustCompile(`,?"cache_control":\{"type":"ephemeral"\}`)

// sent is one request as the test saw it: what it stored, and the wire
// body's parts with cache_control markers removed (they move by design and
// do not belong to the cached prefix).
type sent struct {
	stored    []llm.Message
	reminder  string
	head      [][]byte          // system and tools
	wire      []json.RawMessage // messages, reminder removed
	rewritten int               // first stored message a layer rewrote before the next request
}

// wireCount is how many wire messages a stored message becomes.
func wireCount(format string, m llm.Message) int {
	if format == "anthropic" || m.Role == llm.RoleAssistant {
		return 1
	}
	n, text := 0, 0
	for _, b := range m.Blocks {
		switch b.Type {
		case llm.BlockToolResult:
			n++
		case llm.BlockText:
			text = 1
		}
	}
	return n + text
}

func decodeBody(t *testing.T, format string, body []byte, reminderText string) (head [][]byte, wire []json.RawMessage) {
	t.Helper()
	body = cacheControl.ReplaceAll(body, nil)
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(top["messages"], &wire); err != nil {
		t.Fatal(err)
	}
	head = [][]byte{top["tools"], top["system"]}
	if len(wire) == 0 {
		t.Fatal("no messages")
	}
	if format == "openai" {
		head = append(head, wire[0]) // the system message
	}
	if reminderText == "" { // the summarisation request has none
		return head, wire
	}
	last := wire[len(wire)-1]
	switch format {
	case "anthropic":
		var m struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		}
		json.Unmarshal(last, &m)
		var b struct{ Type, Text string }
		json.Unmarshal(m.Content[len(m.Content)-1], &b)
		if b.Type != "text" || b.Text != reminderText {
			t.Fatalf("the request does not end with the reminder: %s", last)
		}
		if len(m.Content) == 1 {
			wire = wire[:len(wire)-1]
		} else {
			// Re-encode the last message without its reminder block, as
			// the adapter encodes a message (no HTML escaping).
			m.Content = m.Content[:len(m.Content)-1]
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			enc.Encode(m)
			wire[len(wire)-1] = bytes.TrimSpace(buf.Bytes())
		}
	case "openai":
		var m struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		}
		json.Unmarshal(last, &m)
		switch {
		case m.Role == "user" && m.Content == reminderText:
			wire = wire[:len(wire)-1]
		case m.Role == "user" && strings.HasSuffix(m.Content, "\n\n"+reminderText):
			// Joined to the user's prompt (roles must alternate): the
			// message without it is what the stored prompt encodes to.
			m.Content = strings.TrimSuffix(m.Content, "\n\n"+reminderText)
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			enc.Encode(m)
			wire[len(wire)-1] = bytes.TrimSpace(buf.Bytes())
		default:
			t.Fatalf("the request does not end with the reminder: %s", last)
		}
	}
	return head, wire
}

// TestRequestsExtendTheirPrefix drives a multi-turn session through the
// real layers and adapters against the fake server, and checks byte for
// byte that each request's system prompt, tools and stored messages are a
// prefix of the next one's (from a rewritten message on, only before it),
// with the reminder last and never stored.
func TestRequestsExtendTheirPrefix(t *testing.T) {
	for _, format := range []string{"anthropic", "openai"} {
		t.Run(format, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			var p llm.Provider = anthropic.New(anthropic.Config{BaseURL: srv.URL, APIKey: "test-key"})
			if format == "openai" {
				p = openai.New(openai.Config{BaseURL: srv.URL, APIKey: "test-key"})
			}
			h := history.New(history.Config{Cap: 3000, Stub: 200, Window: 9000, SpillDir: t.TempDir()})
			clock := time.Date(2025, 1, 2, 3, 4, 0, 0, time.UTC)
			rem := reminder.New(t.TempDir(), func() time.Time { clock = clock.Add(time.Minute); return clock })
			tools := []llm.Tool{{Name: "bash", Description: "run a command", Schema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)}}
			const system = "You are harness, a coding agent. Be brief."
			ctx := context.Background()

			var log []sent
			markRewrite := func(edits []history.Edit) {
				if len(log) == 0 {
					return
				}
				for _, e := range edits {
					for _, b := range e.Blocks {
						log[len(log)-1].rewritten = min(log[len(log)-1].rewritten, b.Message)
					}
					if e.Layer == history.LayerSummary {
						log[len(log)-1].rewritten = 0
					}
				}
			}
			base := func() llm.Request {
				return llm.Request{Model: "m", System: system, Tools: tools, Messages: h.Messages(),
					Reminder: rem.Build(ctx, "- [ ] fix the bug"), SessionID: "s1"}
			}
			send := func(req llm.Request) *llm.Reply {
				t.Helper()
				reply, err := p.Stream(ctx, &req, nil)
				if err != nil {
					t.Fatal(err)
				}
				reqs := srv.Requests()
				head, wire := decodeBody(t, format, reqs[len(reqs)-1].Body, req.Reminder)
				log = append(log, sent{stored: req.Messages, reminder: req.Reminder, head: head, wire: wire, rewritten: len(req.Messages)})
				return reply
			}
			step := func(out string) {
				t.Helper()
				markRewrite(h.Maintain())
				reply := send(base())
				h.Observe(reply.Usage)
				h.Append(reply.Message)
				var results []llm.Block
				for _, c := range reply.Message.ToolCalls() {
					b := llm.Block{Type: llm.BlockToolResult, ToolUseID: c.ID, Content: out}
					if err := h.Cap(&b); err != nil {
						t.Fatal(err)
					}
					results = append(results, b)
				}
				if len(results) > 0 {
					h.Append(llm.Message{Role: llm.RoleUser, Blocks: results})
				}
			}

			usage := func(n int) llm.Usage { return llm.Usage{Input: 50, CacheRead: n, Output: 20} }
			h.Append(llm.Text(llm.RoleUser, "the tests fail; fix them"))
			for i := range 4 {
				srv.Enqueue(llmtest.Reply{Text: fmt.Sprintf("step %d", i), ToolCalls: []llmtest.ToolCall{
					{Name: "bash", Input: `{"command":"ls"}`}, {Name: "bash", Input: `{"command":"cat x"}`},
				}, Usage: usage(1000 * i)})
				step(strings.Repeat(fmt.Sprintf("output %d <summary>not one</summary> ", i), 40*(i+1)))
			}
			srv.Enqueue(llmtest.Reply{Text: "done", Usage: usage(5000)})
			step("")
			markRewrite(h.EndTurn())

			h.Append(llm.Text(llm.RoleUser, "now the docs"))
			for range 3 {
				srv.Enqueue(llmtest.Reply{Text: "more", ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command":"grep -r x ."}`}}, Usage: usage(6000)})
				step(strings.Repeat("y", 4000))
			}
			// A compaction: the summarisation request must extend the last
			// request's prefix too.
			srv.Enqueue(llmtest.Reply{Text: "<summary>## Goal\nfix</summary>", Usage: usage(7000)})
			var cp *llm.Reply
			edit, cp, err := compact.Compact(ctx, sumProbe{p, send}, base(), h, "")
			if err != nil || cp == nil {
				t.Fatal(err)
			}
			if err := h.Apply(edit); err != nil {
				t.Fatal(err)
			}
			markRewrite([]history.Edit{edit})
			srv.Enqueue(llmtest.Reply{Text: "after", Usage: usage(2000)})
			step("")

			for i, s := range log {
				stored, _ := json.Marshal(h.Messages())
				if bytes.Contains(stored, []byte("<context>")) {
					t.Fatal("the reminder was stored")
				}
				want := 0
				if format == "openai" {
					want = 1
				}
				for _, m := range s.stored {
					want += wireCount(format, m)
				}
				if len(s.wire) != want {
					t.Fatalf("request %d: %d wire messages besides the reminder, want %d", i, len(s.wire), want)
				}
				if i == 0 {
					continue
				}
				prev := log[i-1]
				for k := range prev.head {
					if !bytes.Equal(prev.head[k], s.head[k]) {
						t.Errorf("request %d: system or tools changed", i)
					}
				}
				cut := 0
				if format == "openai" {
					cut = 1
				}
				for _, m := range prev.stored[:prev.rewritten] {
					cut += wireCount(format, m)
				}
				for k := range cut {
					if !bytes.Equal(prev.wire[k], s.wire[k]) {
						t.Fatalf("request %d: message %d differs from the previous request's:\n%s\n%s", i, k, prev.wire[k], s.wire[k])
					}
				}
			}
			if len(log) < 10 {
				t.Fatalf("only %d requests", len(log))
			}
			rewrites := 0
			for _, s := range log {
				if s.rewritten < len(s.stored) {
					rewrites++
				}
			}
			if rewrites == 0 {
				t.Error("no layer rewrote anything: the test checked only appends")
			}
		})
	}
}

// sumProbe routes the summarisation request through the test's recorder.
type sumProbe struct {
	llm.Provider
	send func(llm.Request) *llm.Reply
}

func (s sumProbe) Stream(_ context.Context, req *llm.Request, _ func(llm.Event)) (*llm.Reply, error) {
	return s.send(*req), nil
}
