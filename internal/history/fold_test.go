package history

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/llm"
)

const formatHelp = "Please format your action in triple backticks as shown in <response_example>.\n" +
	"If you have completed your assignment, please consult the first message about how to submit your solution."

func feedback(n string) llm.Message {
	return llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{{Type: llm.BlockText, Layer: LayerFeedback,
		Text: "Please always provide EXACTLY ONE action in triple backticks, found " + n + " actions.\n\n" + formatHelp}}}
}

func feedbackResult(id, text string) llm.Message {
	return llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: id, Content: text, Layer: LayerFeedback}}}
}

// Repeats of the harness's own feedback fold to a reference; the first
// copy stays whole, so what a fold hides is always shown above it; text
// that merely reads like feedback (not marked when written) never folds.
func TestFoldFeedback(t *testing.T) {
	h := New(Config{})
	h.Append(llm.Text(llm.RoleUser, "fix it"))
	for _, n := range []string{"2", "2", "3"} {
		h.Append(llm.Text(llm.RoleAssistant, "two blocks"))
		h.Append(feedback(n))
	}
	// the same words from a tool: a model's output, not harness feedback
	h.Append(call("a", "cat notes"))
	h.Append(result("a", "Please always provide EXACTLY ONE action in triple backticks, found 2 actions.\n\n"+formatHelp))
	long := "not run: your reply was cut off at the output limit (8192 tokens) before this call was complete; " + strings.Repeat("split the work. ", 10)
	h.Append(call("b", "x"))
	h.Append(feedbackResult("b", long))
	h.Append(call("c", "x"))
	h.Append(feedbackResult("c", long))
	h.Append(call("d", "ls"))
	h.Append(result("d", "ok"))
	h.EndTurn()
	msgs := h.Messages()
	if got := msgs[2].Blocks[0]; got.Layer != LayerFeedback || !strings.HasSuffix(got.Text, formatHelp) {
		t.Errorf("the first feedback changed: %q", got.Text)
	}
	if got := msgs[4].Blocks[0]; got.Layer != LayerFold || strings.Contains(got.Text, "found 2") || !strings.HasPrefix(got.Text, "[harness fold: the same feedback") {
		t.Errorf("an identical repeat is not folded whole: %q", got.Text)
	}
	if got := msgs[6].Blocks[0]; got.Layer != LayerFold || !strings.HasPrefix(got.Text, "Please always provide EXACTLY ONE action in triple backticks, found 3 actions.\n") || strings.Contains(got.Text, "response_example") {
		t.Errorf("a repeat with a new first line keeps that line and folds the rest: %q", got.Text)
	}
	if got := msgs[8].Blocks[0]; got.Layer == LayerFold {
		t.Error("a tool's output that reads like feedback was folded")
	}
	if got := msgs[10].Blocks[0]; got.Layer != LayerFeedback || got.Content != long {
		t.Errorf("the first tool-result feedback changed: %q", got.Content)
	}
	if got := msgs[12].Blocks[0]; got.Layer != LayerFold || !strings.HasPrefix(got.Content, "[harness fold:") {
		t.Errorf("a repeated tool-result feedback is not folded: %q", got.Content)
	}
	// Nothing is folded or stubbed twice.
	if e := h.EndTurn(); len(e) != 0 {
		t.Errorf("a second strip edited again: %+v", e)
	}
	// An original is never dropped: its folds point at it.
	for _, m := range msgs {
		if dropMarker(m.Blocks[0]) != "" && m.Blocks[0].Layer == LayerFeedback {
			t.Error("feedback would be dropped")
		}
	}
	// The reference and raw fold nothing.
	for _, st := range []Strategy{seed, raw} {
		r := New(Config{Strategy: st})
		r.Append(llm.Text(llm.RoleUser, "fix it"))
		for range 3 {
			r.Append(llm.Text(llm.RoleAssistant, "two blocks"))
			r.Append(feedback("2"))
		}
		r.Append(llm.Text(llm.RoleAssistant, "x"))
		r.Append(feedback("4"))
		r.EndTurn()
		for _, m := range r.Messages() {
			if m.Blocks[0].Layer == LayerFold {
				t.Errorf("%s folded", st.Name())
			}
		}
	}
}

// A compaction that cuts the original of a fold gives the first kept fold
// its text back, so no fold ever points at nothing.
func TestFoldSurvivesCompaction(t *testing.T) {
	h := New(Config{})
	h.Append(llm.Text(llm.RoleUser, "fix it"))
	for _, n := range []string{"2", "2", "3", "2"} {
		h.Append(llm.Text(llm.RoleAssistant, "two blocks"))
		h.Append(feedback(n))
	}
	h.Append(call("d", "ls"))
	h.Append(result("d", "ok"))
	h.EndTurn()
	if h.Messages()[4].Blocks[0].Layer != LayerFold {
		t.Fatal("nothing folded")
	}
	// Keep from message 5 (assistant) on: the original (2) and the first
	// fold (4) are cut; 6 (found 3, rest folded) and 8 (found 2, whole)
	// remain.
	sum := llm.Block{Type: llm.BlockText, Text: "<summary>s</summary>"}
	if err := h.Apply(Edit{Layer: LayerSummary, Keep: 5, Summary: &sum}); err != nil {
		t.Fatal(err)
	}
	msgs := h.Messages()
	var texts []string
	for _, m := range msgs {
		for _, b := range m.Blocks {
			if b.Layer == LayerFeedback || b.Layer == LayerFold {
				texts = append(texts, b.Layer+": "+b.Text)
			}
		}
	}
	want := []string{
		"feedback: Please always provide EXACTLY ONE action in triple backticks, found 3 actions.\n\n" + formatHelp,
		"feedback: Please always provide EXACTLY ONE action in triple backticks, found 2 actions.\n\n" + formatHelp,
	}
	if strings.Join(texts, "\n--\n") != strings.Join(want, "\n--\n") {
		t.Errorf("after compaction:\n%s\nwant\n%s", strings.Join(texts, "\n--\n"), strings.Join(want, "\n--\n"))
	}
}

// Trimming is off by default; on, it cuts old assistant text over 900
// chars to about 500 once, leaves the latest two messages, tool calls and
// the answer that ended a user's turn alone.
func TestTrimOldText(t *testing.T) {
	long := strings.Repeat("I think the bug is in the parser. ", 40) // 1360 chars
	build := func(cfg Config) *History {
		h := New(cfg)
		h.Append(llm.Text(llm.RoleUser, "fix it"))
		m := call("a", "ls")
		m.Blocks[0].Text = long
		h.Append(m)
		h.Append(result("a", "ok"))
		h.Append(llm.Text(llm.RoleAssistant, long)) // the answer to the user
		h.Append(llm.Text(llm.RoleUser, "and now?"))
		m2 := call("b", "ls")
		m2.Blocks[0].Text = long
		h.Append(m2)
		h.Append(result("b", "ok"))
		return h
	}
	off := build(Config{})
	off.Maintain()
	off.EndTurn()
	for _, m := range off.Messages() {
		for _, b := range m.Blocks {
			if b.Layer == LayerTrim {
				t.Fatal("trimmed with TrimText off")
			}
		}
	}
	h := build(Config{TrimText: true})
	var edits []Edit
	for range 3 {
		edits = append(edits, h.Maintain()...)
		edits = append(edits, h.EndTurn()...)
	}
	msgs := h.Messages()
	got := msgs[1].Blocks[0]
	if got.Layer != LayerTrim || len(got.Text) > trimTo+100 || !strings.HasPrefix(got.Text, "I think the bug") {
		t.Errorf("old text not trimmed to a head: %d chars, layer %q", len(got.Text), got.Layer)
	}
	var in map[string]string
	if json.Unmarshal(msgs[1].Blocks[1].Input, &in); in["command"] != "ls" {
		t.Error("the call was changed")
	}
	if msgs[3].Blocks[0].Text != long {
		t.Error("the answer that ended the user's turn was trimmed")
	}
	if msgs[5].Blocks[0].Text != long {
		t.Error("the latest assistant message was trimmed")
	}
	n := 0
	for _, e := range edits {
		for _, be := range e.Blocks {
			if be.Layer == LayerTrim {
				n++
			}
		}
	}
	if n != 1 {
		t.Errorf("%d trims, want 1 (never twice)", n)
	}
	// The edits replay: a resumed history is the same.
	r := build(Config{TrimText: true})
	for _, e := range edits {
		if err := r.Apply(e); err != nil {
			t.Fatal(err)
		}
	}
	a, _ := json.Marshal(r.Messages())
	b, _ := json.Marshal(h.Messages())
	if string(a) != string(b) {
		t.Error("replayed edits give another history")
	}
}
