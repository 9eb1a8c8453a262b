package history

import (
	"encoding/json"
	"testing"

	"github.com/harness-dev/harness/internal/llm"
)

func user(text string) llm.Message {
	return llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{{Type: llm.BlockText, Text: text}}}
}

func calls(ids ...string) llm.Message {
	m := llm.Message{Role: llm.RoleAssistant, Blocks: []llm.Block{{Type: llm.BlockThinking, Thinking: "t", Signature: "s"}}}
	for _, id := range ids {
		m.Blocks = append(m.Blocks, llm.Block{Type: llm.BlockToolUse, ID: id, Name: "bash", Input: json.RawMessage(`{}`)})
	}
	return m
}

func results(ids ...string) llm.Message {
	m := llm.Message{Role: llm.RoleUser}
	for _, id := range ids {
		m.Blocks = append(m.Blocks, llm.Block{Type: llm.BlockToolResult, ToolUseID: id, Content: "ok"})
	}
	return m
}

// paired reports the first rule a provider enforces that msgs break: a
// tool call without its result in the next message, or a result whose
// call is not in the message before.
func paired(msgs []llm.Message) string {
	for i, m := range msgs {
		if m.Role == llm.RoleAssistant && len(m.ToolCalls()) > 0 && i+1 < len(msgs) {
			got := map[string]bool{}
			if msgs[i+1].Role == llm.RoleUser {
				for _, b := range msgs[i+1].Blocks {
					if b.Type == llm.BlockToolResult {
						got[b.ToolUseID] = true
					}
				}
			}
			for _, c := range m.ToolCalls() {
				if !got[c.ID] {
					return "call " + c.ID + " has no result"
				}
			}
		}
		if m.Role == llm.RoleUser {
			want := map[string]bool{}
			if i > 0 {
				for _, c := range msgs[i-1].ToolCalls() {
					want[c.ID] = true
				}
			}
			for _, b := range m.Blocks {
				if b.Type == llm.BlockToolResult && !want[b.ToolUseID] {
					return "result " + b.ToolUseID + " has no call"
				}
			}
			if len(m.Blocks) == 0 {
				return "an empty message"
			}
		}
	}
	return ""
}

// TestRepair: whichever line of a log was lost (a result, a call, a whole
// message in the middle), the repaired history pairs every call with its
// result, keeps everything the damage did not touch, and replaying the
// edit on the damaged history gives the same messages.
func TestRepair(t *testing.T) {
	for _, tc := range []struct {
		name  string
		msgs  []llm.Message
		keep  int // the first message the repair changes; -1: none
		count int // messages after the repair
	}{
		{"intact", []llm.Message{user("a"), calls("1"), results("1"), calls(), user("b")}, -1, 5},
		{"results lost", []llm.Message{user("a"), calls("1", "2"), calls(), user("b")}, 2, 5},
		{"one result lost", []llm.Message{user("a"), calls("1", "2"), results("2"), calls(), user("b")}, 2, 5},
		{"call lost", []llm.Message{user("a"), results("1"), calls(), user("b")}, 1, 4},
		{"a call's message lost mid-round", []llm.Message{user("a"), calls("1"), results("1"), results("2"), calls(), user("b")}, 3, 6},
		{"open round at the end is the caller's", []llm.Message{user("a"), calls("1")}, -1, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := New(Config{})
			for _, m := range tc.msgs {
				h.Append(m)
			}
			e, ok := h.Repair()
			if ok != (tc.keep >= 0) || ok && e.Keep != tc.keep {
				t.Fatalf("Repair = keep %d, %v; want keep %d", e.Keep, ok, tc.keep)
			}
			got := h.Messages()
			if len(got) != tc.count {
				t.Fatalf("%d messages after the repair, want %d", len(got), tc.count)
			}
			if p := paired(got); p != "" {
				t.Errorf("after the repair: %s", p)
			}
			if !ok {
				return
			}
			for i := 0; i < tc.keep; i++ {
				if a, b := mustJSON(t, got[i]), mustJSON(t, tc.msgs[i]); a != b {
					t.Errorf("message %d before the repair changed", i)
				}
			}
			// The edit goes to the log as JSON; replayed, it gives the
			// same history.
			var back Edit
			if err := json.Unmarshal([]byte(mustJSON(t, e)), &back); err != nil {
				t.Fatal(err)
			}
			h2 := New(Config{})
			for _, m := range tc.msgs {
				h2.Append(m)
			}
			if err := h2.Apply(back); err != nil {
				t.Fatal(err)
			}
			if mustJSON(t, h2.Messages()) != mustJSON(t, got) {
				t.Error("replaying the logged edit gave other messages")
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
