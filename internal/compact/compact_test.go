package compact

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/llm"
)

type fakeProvider struct {
	reply string
	got   *llm.Request
}

func (f *fakeProvider) Name() string { return "fake" }

func (f *fakeProvider) Stream(_ context.Context, req *llm.Request, _ func(llm.Event)) (*llm.Reply, error) {
	f.got = req
	return &llm.Reply{Message: llm.Text(llm.RoleAssistant, f.reply), Usage: llm.Usage{CacheRead: 900, Input: 10, Output: 50}}, nil
}

func build(n int) *history.History {
	h := history.New(history.Config{Window: 4000})
	h.Append(llm.Text(llm.RoleUser, "make the tests pass"))
	for i := range n {
		id := string(rune('a' + i))
		h.Append(llm.Message{Role: llm.RoleAssistant, Blocks: []llm.Block{{Type: llm.BlockToolUse, ID: id, Name: "bash", Input: json.RawMessage(`{"command":"ls"}`)}}})
		h.Append(llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: id, Content: strings.Repeat("r", 800)}}})
	}
	// The latest reply calls a tool not run yet.
	h.Append(llm.Message{Role: llm.RoleAssistant, Blocks: []llm.Block{{Type: llm.BlockToolUse, ID: "last", Name: "bash", Input: json.RawMessage(`{}`)}}})
	return h
}

func TestCompactReusesTheRequest(t *testing.T) {
	h := build(12)
	base := llm.Request{Model: "m", System: "sys", Tools: []llm.Tool{{Name: "bash"}}, Messages: h.Messages(), Reminder: "<context>now</context>", SessionID: "s"}
	p := &fakeProvider{reply: "thinking...\n<summary>\n## Goal\n\"make the tests pass\"\n</summary>"}
	edit, reply, err := Compact(context.Background(), p, base, h, "the parser")
	if err != nil {
		t.Fatal(err)
	}
	got := p.got
	if got.System != base.System || !reflect.DeepEqual(got.Tools, base.Tools) || got.Model != "m" || got.SessionID != "s" {
		t.Error("the summarisation request does not reuse system, tools, model and session")
	}
	if !reflect.DeepEqual(got.Messages[:len(base.Messages)], base.Messages) || len(got.Messages) != len(base.Messages)+1 {
		t.Fatal("the history is not sent unchanged with one message after it")
	}
	last := got.Messages[len(got.Messages)-1]
	if last.Blocks[0].Type != llm.BlockToolResult || last.Blocks[0].ToolUseID != "last" {
		t.Error("the pending tool call is not answered first")
	}
	if text := last.PlainText(); !strings.Contains(text, "## Goal") || !strings.Contains(text, "## Next") || !strings.Contains(text, "the parser") {
		t.Errorf("instruction lacks sections or focus: %s", text)
	}
	if got.Reminder != "" {
		t.Error("the reminder was sent with the summarisation request")
	}
	if reply.Usage.Output != 50 {
		t.Error("reply not returned")
	}
	if edit.Layer != history.LayerSummary || edit.Summary == nil || !strings.Contains(edit.Summary.Text, "## Goal\n\"make the tests pass\"") || strings.Contains(edit.Summary.Text, "thinking...") {
		t.Fatalf("edit %+v", edit)
	}
	before := h.Len()
	if err := h.Apply(edit); err != nil {
		t.Fatal(err)
	}
	msgs := h.Messages()
	if h.Len() >= before || msgs[0].Blocks[0].Layer != history.LayerSummary {
		t.Fatalf("history after compaction: %d messages, first %+v", h.Len(), msgs[0])
	}
	// Every kept result still follows its call.
	calls := map[string]bool{}
	for _, m := range msgs {
		for _, b := range m.Blocks {
			if b.Type == llm.BlockToolUse {
				calls[b.ID] = true
			}
			if b.Type == llm.BlockToolResult && !calls[b.ToolUseID] {
				t.Errorf("result %s kept without its call", b.ToolUseID)
			}
		}
	}
	if tok := h.Tokens(); tok > int(0.35*4000)+history.Estimate(msgs[0])+200 {
		t.Errorf("kept %d tokens, want about CompactTo of the window", tok)
	}
}

func TestCompactEmptySummary(t *testing.T) {
	h := build(3)
	if _, _, err := Compact(context.Background(), &fakeProvider{reply: "  "}, llm.Request{Messages: h.Messages()}, h, ""); err == nil {
		t.Fatal("an empty summary was accepted")
	}
}

func TestExtract(t *testing.T) {
	for in, want := range map[string]string{
		"<summary>a</summary>": "a",
		"plain note":           "plain note",
		"quote <summary>x</summary> <summary>b</summary>": "b",
		"<summary>unterminated":                           "unterminated",
	} {
		if got := Extract(in); got != want {
			t.Errorf("Extract(%q) = %q, want %q", in, got, want)
		}
	}
}

// An early /compact (the history well under COMPACT_TO of the window) must
// still shrink the conversation: at most half of it is kept.
func TestEarlyCompactShrinks(t *testing.T) {
	h := history.New(history.Config{Window: 1 << 20})
	h.Append(llm.Text(llm.RoleUser, "make the tests pass"))
	for i := range 10 {
		id := string(rune('a' + i))
		h.Append(llm.Message{Role: llm.RoleAssistant, Blocks: []llm.Block{{Type: llm.BlockToolUse, ID: id, Name: "bash", Input: json.RawMessage(`{"command":"ls"}`)}}})
		h.Append(llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: id, Content: strings.Repeat("r", 800)}}})
	}
	// The provider counted a large system prompt and tools too: only the
	// messages can shrink.
	h.Observe(llm.Usage{Input: 50000})
	before := h.Tokens()
	base := llm.Request{Model: "m", Messages: h.Messages()}
	edit, _, err := Compact(context.Background(), &fakeProvider{reply: "<summary>note</summary>"}, base, h, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Apply(edit); err != nil {
		t.Fatal(err)
	}
	msgs := 0
	for _, m := range base.Messages {
		msgs += history.Estimate(m)
	}
	if after := h.Tokens(); after > before-msgs/2+history.EstimateText(Wrap("note"))+50 {
		t.Errorf("after an early compaction %d tokens remain of %d (messages %d)", after, before, msgs)
	}
}
