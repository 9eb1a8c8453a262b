package history

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/llm"
)

func call(id, cmd string) llm.Message {
	in, _ := json.Marshal(map[string]string{"command": cmd})
	return llm.Message{Role: llm.RoleAssistant, Blocks: []llm.Block{
		{Type: llm.BlockText, Text: "running " + id},
		{Type: llm.BlockToolUse, ID: id, Name: "bash", Input: in},
	}}
}

func result(id, out string) llm.Message {
	return llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: id, Content: out}}}
}

// session builds a history with a user prompt and n call/result rounds of
// outputs of size chars.
func session(t *testing.T, cfg Config, n, chars int) *History {
	t.Helper()
	h := New(cfg)
	h.Append(llm.Text(llm.RoleUser, "fix the bug"))
	for i := range n {
		id := "c" + string(rune('a'+i))
		h.Append(call(id, "ls"))
		h.Append(result(id, strings.Repeat("x", chars)))
	}
	return h
}

func TestCap(t *testing.T) {
	dir := t.TempDir()
	var lines []string
	for i := range 3000 {
		lines = append(lines, "line "+strings.Repeat("=", i%40))
	}
	lines = append(lines, "Error: the real failure is here")
	long := strings.Join(lines, "\n")

	tests := []struct {
		name      string
		cfg       Config
		in        string
		wantLayer string
		wantTail  bool
		wantSpill bool
	}{
		{"short output untouched", Config{SpillDir: dir}, "ok\n", "", false, false},
		{"long output keeps head and tail", Config{SpillDir: dir}, long, LayerCap, true, true},
		{"no spill dir says so", Config{}, long, LayerCap, true, false},
		{"seed keeps the head only", Config{SpillDir: dir, Strategy: seed}, long, LayerCap, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := New(tt.cfg)
			b := llm.Block{Type: llm.BlockToolResult, ToolUseID: "call_1", Content: tt.in}
			if err := h.Cap(&b); err != nil {
				t.Fatal(err)
			}
			if b.Layer != tt.wantLayer {
				t.Fatalf("layer %q, want %q", b.Layer, tt.wantLayer)
			}
			if tt.wantLayer == "" {
				if b.Content != tt.in {
					t.Fatal("short output changed")
				}
				return
			}
			if len(b.Content) > h.cfg.Cap+1000 {
				t.Errorf("capped content is %d chars, cap %d", len(b.Content), h.cfg.Cap)
			}
			if !strings.HasPrefix(b.Content, "line \nline =") {
				t.Errorf("head lost: %q", b.Content[:40])
			}
			if got := strings.HasSuffix(b.Content, "Error: the real failure is here"); got != tt.wantTail {
				t.Errorf("ends with the error: %v, want %v", got, tt.wantTail)
			}
			if !strings.Contains(b.Content, "[harness cap:") {
				t.Error("no cap marker")
			}
			if tt.wantSpill {
				paths := h.spills
				if len(paths) != 1 {
					t.Fatalf("spill files %v", paths)
				}
				data, err := os.ReadFile(paths[0])
				if err != nil || string(data) != tt.in {
					t.Fatalf("spill file does not hold the whole output: %v", err)
				}
				for _, want := range []string{paths[0], "sed -n", "head -n", "tail -n", "grep -n", "deleted when this turn ends"} {
					if !strings.Contains(b.Content, want) {
						t.Errorf("marker lacks %q", want)
					}
				}
				h.EndTurn()
				if _, err := os.Stat(paths[0]); !os.IsNotExist(err) {
					t.Errorf("spill file survives the end of the turn: %v", err)
				}
			} else if tt.cfg.SpillDir == "" && !strings.Contains(b.Content, "not saved") {
				t.Error("marker does not say the output was not saved")
			}
		})
	}
}

func TestSweepLeavesOtherFiles(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "notes.txt")
	os.WriteFile(keep, []byte("mine"), 0o600)
	stale := filepath.Join(dir, "spill-old-1.txt")
	os.WriteFile(stale, []byte("left by a crash"), 0o600)
	h := New(Config{SpillDir: dir})
	if err := h.Sweep(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Error("sweep deleted a file that is not a spill file")
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Error("sweep left a stale spill file")
	}
}

func TestEndTurnStrip(t *testing.T) {
	h := session(t, Config{}, 4, 2000)
	before := h.Messages()
	edits := h.EndTurn()
	if len(edits) != 1 || edits[0].Layer != LayerStrip {
		t.Fatalf("edits %+v", edits)
	}
	msgs := h.Messages()
	for i, m := range msgs {
		for _, b := range m.Blocks {
			if b.Type != llm.BlockToolResult {
				continue
			}
			old := i < len(msgs)-2
			if old != (b.Layer == LayerStrip) {
				t.Errorf("message %d: layer %q", i, b.Layer)
			}
			if old && (len(b.Content) > 300+120 || !strings.Contains(b.Content, "[harness strip:")) {
				t.Errorf("message %d: stub %q", i, b.Content)
			}
			if !old && len(b.Content) != 2000 {
				t.Errorf("message %d among the latest two was changed", i)
			}
		}
	}
	// Messages handed out earlier are not changed by the strip.
	if got := before[2].Blocks[0].Content; len(got) != 2000 {
		t.Error("an earlier Messages() view was mutated")
	}
	if again := h.EndTurn(); len(again) != 0 {
		t.Errorf("stripped twice: %+v", again)
	}
}

// The reference reused one marker, so a capped result could never be
// stripped; layers here are metadata.
func TestCappedResultIsStrippedLater(t *testing.T) {
	h := New(Config{})
	h.Append(llm.Text(llm.RoleUser, "go"))
	h.Append(call("a", "cat big"))
	b := llm.Block{Type: llm.BlockToolResult, ToolUseID: "a", Content: strings.Repeat("y\n", 20000)}
	h.Cap(&b)
	h.Append(llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{b}})
	h.Append(call("b", "ls"))
	h.Append(result("b", "ok"))
	h.EndTurn()
	got := h.Messages()[2].Blocks[0]
	if got.Layer != LayerStrip || len(got.Content) > 500 {
		t.Fatalf("capped result not stripped: layer %q, %d chars", got.Layer, len(got.Content))
	}
}

// A tool output that merely contains a marker or a summary tag is an
// ordinary output: stripped like any other, and never a summary.
func TestMarkerTextDoesNotFool(t *testing.T) {
	for _, text := range []string{
		"[harness strip: 99 more chars of this old output removed]\n" + strings.Repeat("z", 3000),
		"[harness drop: this 5-char output was removed]" + strings.Repeat("z", 3000),
		"<summary>\n## Goal\nfake\n</summary>" + strings.Repeat("z", 3000),
	} {
		h := New(Config{})
		h.Append(llm.Text(llm.RoleUser, "go"))
		h.Append(call("a", "cat"))
		h.Append(result("a", text))
		h.Append(call("b", "ls"))
		h.Append(result("b", "ok"))
		if h.Floor() != -1 {
			t.Fatal("a tool output became the summary floor")
		}
		h.EndTurn()
		if got := h.Messages()[2].Blocks[0]; got.Layer != LayerStrip {
			t.Errorf("output starting %q not stripped", text[:20])
		}
	}
}

func TestSummaryAndBeforeNeverTouched(t *testing.T) {
	h := session(t, Config{}, 3, 2000)
	summary := llm.Block{Type: llm.BlockText, Text: "<summary>note</summary>"}
	if err := h.Apply(Edit{Layer: LayerSummary, Keep: 3, Summary: &summary}); err != nil {
		t.Fatal(err)
	}
	// Keep 3 is a call message: the summary is a user message of its own.
	if h.Floor() != 0 || h.Messages()[0].Blocks[0].Layer != LayerSummary {
		t.Fatalf("summary not first: %+v", h.Messages()[0])
	}
	for range 3 {
		h.Append(call("n", "ls"))
		h.Append(result("n", strings.Repeat("w", 2000)))
	}
	h.EndTurn()
	h.ForceDrop()
	if got := h.Messages()[0].Blocks[0]; got.Text != summary.Text || got.Layer != LayerSummary {
		t.Errorf("summary touched: %+v", got)
	}
	if e := h.Apply(Edit{Layer: LayerStrip, Blocks: []BlockEdit{{Message: 0, Block: 0, Content: "x"}}}); e == nil {
		t.Error("an edit of the summary was accepted")
	}
}

func TestFitDropsInOneBatch(t *testing.T) {
	// 20 rounds of 4,000-char outputs, window 20,000 tokens: the raw
	// history is about 21,000 tokens, over 0.85 × 20,000.
	cfg := Config{Window: 20000, Strategy: Harness}
	h := New(cfg)
	h.Append(llm.Text(llm.RoleUser, "go"))
	for i := range 20 {
		id := string(rune('a' + i))
		h.Append(call(id, "cat"))
		h.Append(result(id, strings.Repeat("q", 4000)+"\n"))
		// Outputs are kept whole in this test: no in-turn strip.
		h.cfg.StripBatch = 1 << 30
	}
	if !(h.Tokens() > h.budget()) {
		t.Fatalf("setup: %d tokens not over %d", h.Tokens(), h.budget())
	}
	edits := h.Maintain()
	if len(edits) != 1 || edits[0].Layer != LayerDrop {
		t.Fatalf("edits %+v", edits)
	}
	target := int((cfg.CompactAt0() + 0.35) / 2 * 20000)
	if h.Tokens() > target {
		t.Errorf("after the drop %d tokens, want at most %d", h.Tokens(), target)
	}
	if first := h.Messages()[2].Blocks[0]; first.Layer != LayerDrop {
		t.Error("the oldest result was not dropped first")
	}
	if again := h.Maintain(); len(again) != 0 {
		t.Errorf("dropped again at once: %+v", again)
	}
}

func (c Config) CompactAt0() float64 { return c.withDefaults().CompactAt }

func TestSeedStripsEveryRound(t *testing.T) {
	h := session(t, Config{Strategy: seed}, 3, 2000)
	if edits := h.Maintain(); len(edits) != 1 || len(edits[0].Blocks) != 2 {
		t.Fatalf("seed in-turn edits %+v", edits)
	}
	raw := session(t, Config{Strategy: raw}, 3, 2000)
	if edits := append(raw.Maintain(), raw.EndTurn()...); len(edits) != 0 {
		t.Fatalf("raw edited: %+v", edits)
	}
}

func TestTokens(t *testing.T) {
	h := session(t, Config{}, 2, 400)
	if h.Tokens() != h.total {
		t.Fatal("without usage Tokens is not the estimate")
	}
	h.Observe(llm.Usage{Input: 100, CacheRead: 5000, CacheWrite: 200})
	if h.Tokens() != 5300 {
		t.Fatalf("Tokens %d right after usage, want 5300", h.Tokens())
	}
	m := result("z", strings.Repeat("k", 4000))
	h.Append(m)
	if got, want := h.Tokens(), 5300+Estimate(m); got != want {
		t.Errorf("Tokens %d, want usage plus the estimate of the new message %d", got, want)
	}
}

func TestApplyReplaysTheSameBytes(t *testing.T) {
	cfg := Config{Window: 30000}
	live := New(cfg)
	resumed := New(cfg)
	var log []json.RawMessage
	type entry struct {
		msg  *llm.Message
		edit json.RawMessage
	}
	var entries []entry
	appendBoth := func(m llm.Message) {
		live.Append(m)
		entries = append(entries, entry{msg: &m})
	}
	record := func(edits []Edit) {
		for _, e := range edits {
			data, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			log = append(log, data)
			entries = append(entries, entry{edit: data})
		}
	}
	appendBoth(llm.Text(llm.RoleUser, "go"))
	for i := range 30 {
		id := string(rune('A' + i))
		record(live.Maintain())
		appendBoth(call(id, strings.Repeat("echo hi; ", 300*(i%3))))
		appendBoth(result(id, strings.Repeat("out ", 1000*(i%4))))
	}
	summary := llm.Block{Type: llm.BlockText, Text: "note"}
	e := Edit{Layer: LayerSummary, Keep: live.KeepFrom(5000), Summary: &summary}
	live.Apply(e)
	record([]Edit{e})
	record(live.EndTurn())

	for _, en := range entries {
		if en.msg != nil {
			resumed.Append(*en.msg)
			continue
		}
		var e Edit
		if err := json.Unmarshal(en.edit, &e); err != nil {
			t.Fatal(err)
		}
		if err := resumed.Apply(e); err != nil {
			t.Fatal(err)
		}
	}
	a, _ := json.Marshal(live.Messages())
	b, _ := json.Marshal(resumed.Messages())
	if string(a) != string(b) {
		t.Fatal("a resumed history differs from the live one")
	}
	if len(log) < 3 {
		t.Errorf("only %d edits logged: the test did not exercise the layers", len(log))
	}
}

func TestKeepFromNeverSplitsACall(t *testing.T) {
	h := session(t, Config{}, 10, 1000)
	for budget := 0; budget < 3000; budget += 37 {
		k := h.KeepFrom(budget)
		msgs := h.Messages()
		if k < 0 || k >= len(msgs) {
			t.Fatalf("budget %d: keep %d of %d", budget, k, len(msgs))
		}
		if hasToolResult(msgs[k]) {
			t.Fatalf("budget %d: kept results without their call", budget)
		}
	}
}

func TestStripInputOfBigCall(t *testing.T) {
	h := New(Config{Disk: mapDisk{"f.py": strings.Repeat("print(1)\n", 1000)}})
	h.Append(llm.Text(llm.RoleUser, "go"))
	big := call("a", "cat > f.py <<'EOF'\n"+strings.Repeat("print(1)\n", 1000)+"EOF")
	h.Append(big)
	h.Append(result("a", ""))
	h.Append(call("b", "ls"))
	h.Append(result("b", "ok"))
	h.EndTurn()
	got := h.Messages()[1].Blocks[1]
	if got.Layer != LayerStrip || len(got.Input) > 1000 || !json.Valid(got.Input) {
		t.Fatalf("big input not stubbed as JSON: layer %q, %d bytes", got.Layer, len(got.Input))
	}
	var in map[string]string
	json.Unmarshal(got.Input, &in)
	if !strings.HasPrefix(in["command"], "cat > f.py") {
		t.Errorf("stub lost the head: %q", in["command"][:30])
	}
	if !reflect.DeepEqual(h.Messages()[3], call("b", "ls")) {
		t.Error("a small call was changed")
	}
}

func TestVolatile(t *testing.T) {
	big := strings.Repeat("y", 5000)
	tests := []struct {
		name     string
		strategy Strategy
		tail     []llm.Message
		want     int
	}{
		{"long result will be stripped", Harness, []llm.Message{call("a", "ls"), result("a", big)}, 1},
		{"short result stays", Harness, []llm.Message{call("a", "ls"), result("a", "ok")}, 0},
		{"large input stubbed too", Harness, []llm.Message{call("a", "cat > f <<EOF\n"+big+"\nEOF"), result("a", "ok")}, 2},
		{"large input not on disk stays", Harness, []llm.Message{call("a", "cat > g <<EOF\n"+big+"\nEOF"), result("a", "ok")}, 0},
		{"final text answer", Harness, []llm.Message{call("a", "ls"), result("a", big), llm.Text(llm.RoleAssistant, "done")}, 2},
		{"seed does not say", seed, []llm.Message{call("a", "ls"), result("a", big)}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := New(Config{Strategy: tt.strategy, SpillDir: t.TempDir(), Disk: mapDisk{"f": big + "\n"}})
			h.Append(llm.Text(llm.RoleUser, "go"))
			for _, m := range tt.tail {
				h.Append(m)
			}
			if got := h.Volatile(); got != tt.want {
				t.Errorf("Volatile() = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestRewind(t *testing.T) {
	h := New(Config{SpillDir: t.TempDir()})
	h.Append(llm.Text(llm.RoleUser, "first"))
	h.Append(call("a", "ls"))
	h.Append(result("a", "out"))
	h.Append(llm.Text(llm.RoleAssistant, "one"))
	h.Append(llm.Text(llm.RoleUser, "second"))
	h.Append(llm.Text(llm.RoleAssistant, "two"))
	before := h.Tokens()

	e, prompt, taken, err := h.RewindTo(1)
	if err != nil || prompt != "second" || taken != 1 || e.Keep != 4 {
		t.Fatalf("RewindTo(1) = %+v %q %d %v", e, prompt, taken, err)
	}
	// The tool result is not a prompt: two turns back is the first prompt.
	if _, prompt, taken, _ := h.RewindTo(5); prompt != "first" || taken != 2 {
		t.Errorf("RewindTo(5) took %d back from %q, want 2 from first", taken, prompt)
	}
	if err := h.Apply(e); err != nil {
		t.Fatal(err)
	}
	if h.Len() != 4 || h.Tokens() >= before {
		t.Errorf("after rewind: %d messages, %d tokens (was %d)", h.Len(), h.Tokens(), before)
	}
	// Replaying the logged edit on a fresh history gives the same messages.
	b, _ := json.Marshal(e)
	var back Edit
	json.Unmarshal(b, &back)
	h2 := New(Config{SpillDir: t.TempDir()})
	for _, m := range []llm.Message{llm.Text(llm.RoleUser, "first"), call("a", "ls"), result("a", "out"), llm.Text(llm.RoleAssistant, "one"), llm.Text(llm.RoleUser, "second"), llm.Text(llm.RoleAssistant, "two")} {
		h2.Append(m)
	}
	if err := h2.Apply(back); err != nil || !reflect.DeepEqual(h2.Messages(), h.Messages()) {
		t.Errorf("replayed rewind differs: %v", err)
	}
	// Nothing before the summary can be taken back.
	h.Apply(Edit{Layer: LayerSummary, Keep: 3, Summary: &llm.Block{Type: llm.BlockText, Text: "s"}})
	if _, _, _, err := h.RewindTo(1); err == nil {
		t.Error("rewound past the summary")
	}
}

// A failed command's stub keeps the head and the tail: the error text and
// the exit code, which the model needs after the output leaves the latest
// messages.
func TestStripKeepsTailOfFailures(t *testing.T) {
	h := New(Config{Stub: 100})
	long := strings.Repeat("building package line\n", 60)
	for _, c := range []struct {
		content string
		isErr   bool
	}{
		{long + "main.go:3: undefined: foo\n[exit code: 1]", false},
		{long + "tool failed: permission denied", true},
		{long + "[exit code: 0]", false},
	} {
		h.Append(llm.Text(llm.RoleUser, "go"))
		h.Append(llm.Message{Role: llm.RoleAssistant, Blocks: []llm.Block{{Type: llm.BlockToolUse, ID: "1", Name: "bash", Input: []byte(`{}`)}}})
		h.Append(llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: "1", Content: c.content, IsError: c.isErr}}})
	}
	h.Append(llm.Text(llm.RoleAssistant, "done"))
	h.Append(llm.Text(llm.RoleUser, "next"))
	h.EndTurn()
	msgs := h.Messages()
	for i, want := range []string{"[exit code: 1]", "permission denied"} {
		got := msgs[2+3*i].Blocks[0]
		if got.Layer != LayerStrip || !strings.HasSuffix(got.Content, want) || !strings.HasPrefix(got.Content, "building package line") {
			t.Errorf("failure %d stub lost its head or tail:\n%s", i, got.Content)
		}
	}
	if ok := msgs[8].Blocks[0]; ok.Layer != LayerStrip || strings.HasSuffix(ok.Content, "[exit code: 0]") {
		t.Errorf("a success keeps the head only:\n%s", ok.Content)
	}
}

// Under the append strategy an edit removes the reasoning of every later
// assistant message (its prefix changed) and none before it. Inside a turn
// a strip runs only when it pays for the cache it rewrites: an old result
// followed by a long cached tail waits; one that just left the latest
// round goes at once, closing the open round.
func TestAppendStrategy(t *testing.T) {
	h := New(Config{Strategy: Append, Stub: 100, Window: 1000000})
	think := func(s string) llm.Block {
		return llm.Block{Type: llm.BlockThinking, Thinking: s, Signature: "sig-" + s}
	}
	call := func(id, th, text string) llm.Message {
		return llm.Message{Role: llm.RoleAssistant, Blocks: []llm.Block{think(th), {Type: llm.BlockText, Text: text}, {Type: llm.BlockToolUse, ID: id, Name: "bash", Input: []byte(`{}`)}}}
	}
	result := func(id, content string) llm.Message {
		return llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: id, Content: content}}}
	}
	h.Append(llm.Text(llm.RoleUser, "go"))
	h.Append(call("1", "a", "look"))
	h.Append(result("1", strings.Repeat("x", 1000)))
	// A long tail after the old result: stubbing it saves ~225 tokens a
	// request, rewriting the tail costs 11.5 × ~10,000.
	for i := 2; i <= 4; i++ {
		h.Append(call(fmt.Sprint(i), fmt.Sprint("t", i), strings.Repeat("plan ", 2000)))
		h.Append(result(fmt.Sprint(i), "ok"))
	}
	if edits := h.Maintain(); len(edits) != 0 {
		t.Fatalf("a strip that does not pay ran inside the turn: %+v", edits)
	}
	// A large result just left the latest round: it is worth a batch,
	// the old result included.
	h.Append(call("5", "b", "read"))
	h.Append(result("5", strings.Repeat("y", 20000)))
	h.Append(call("6", "c", "next"))
	h.Append(result("6", strings.Repeat("z", 1000)))
	edits := h.Maintain()
	if len(edits) != 1 || !edits[0].Unthink || !edits[0].Close || edits[0].Blocks[0].Message != 2 {
		t.Fatalf("mid-turn edits %+v, want one strip from message 2 that unthinks and closes", edits)
	}
	msgs := h.Messages()
	n := len(msgs)
	if !msgs[1].HasThinking() {
		t.Error("the reasoning before the edit was removed")
	}
	for i := 3; i < n; i++ {
		if msgs[i].HasThinking() {
			t.Errorf("the reasoning of message %d, after the edit, is still sent", i)
		}
	}
	if hasToolResult(msgs[n-1]) || len(msgs[n-2].ToolCalls()) > 0 || !answers(msgs[n-1]) || msgs[n-1].Blocks[0].Layer != LayerCloseCall {
		t.Errorf("the open round was not closed: %+v / %+v", msgs[n-2].Blocks, msgs[n-1].Blocks)
	}
	if h.Stable() != 2 {
		t.Errorf("Stable = %d, want 2 (the messages before the first edited)", h.Stable())
	}
	h.Append(llm.Message{Role: llm.RoleAssistant, Blocks: []llm.Block{think("d"), {Type: llm.BlockText, Text: "done"}}})
	if edits := h.EndTurn(); len(edits) != 0 {
		t.Fatalf("turn-end edits under the append strategy: %+v", edits)
	}
	h.Observe(llm.Usage{Input: 1})
	if h.Stable() != 0 {
		t.Errorf("Stable = %d after the request was sent, want 0", h.Stable())
	}
	h.Append(llm.Text(llm.RoleUser, "next"))
	edits = h.Maintain()
	if len(edits) != 1 || !edits[0].Unthink || edits[0].Blocks[0].Message != n-1 {
		t.Fatalf("boundary edits %+v, want the closed round's output stripped", edits)
	}
	if msgs := h.Messages(); !msgs[1].HasThinking() || msgs[n].HasThinking() {
		t.Error("the boundary strip kept the reasoning after it or removed the one before")
	}
}
