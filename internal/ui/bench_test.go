package ui

import (
	"io"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/llm"
)

func sampleReply() string {
	var b strings.Builder
	for i := range 20 {
		b.WriteString("## Step " + strings.Repeat("x", i%5) + "\n\nSome **bold** and `code` and *emphasis* in a line of prose that goes on.\n\n")
		b.WriteString("```go\nfunc f(x int) string {\n\treturn fmt.Sprint(x) // comment\n}\n```\n\n- item one\n- item two\n\n")
	}
	return b.String()
}

// BenchmarkRenderMarkdown measures re-rendering a long (about 300 lines)
// reply at 120 columns, what a resize costs (Reflow); streaming renders
// each block once as it completes.
func BenchmarkRenderMarkdown(b *testing.B) {
	src := sampleReply()
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		RenderMarkdown(Style{Color: true}, src, 120)
	}
}

// BenchmarkStreamDeltas measures the renderer's cost per streamed delta.
func BenchmarkStreamDeltas(b *testing.B) {
	r := NewRenderer(&Term{Out: io.Discard, TTY: true, Style: Style{Color: true}, Size: func() (int, int) { return 100, 40 }}, nil)
	defer r.Close()
	ev := llm.Event{Type: llm.EventText, Text: "a dozen chars"}
	for b.Loop() {
		r.OnEvent(ev)
	}
}

// BenchmarkEditorKeystroke measures one keystroke with its redraw on a
// 300-character line.
func BenchmarkEditorKeystroke(b *testing.B) {
	tm := &Term{Out: io.Discard, TTY: true, Size: func() (int, int) { return 80, 24 }}
	e := NewEditor(NewInput(strings.NewReader("")), tm, EditorOptions{ForceRaw: true, NoHistory: true})
	s := &lineState{prompt: "› ", cont: "… ", buf: []rune(strings.Repeat("abcdefghij", 30))}
	s.pos = 150
	for b.Loop() {
		e.apply(s, key{kind: keyRune, r: 'x'})
		e.apply(s, key{kind: keyBackspace})
		e.refresh(s)
	}
}

// BenchmarkStreamReply measures streaming the long reply in 12-byte
// deltas, what a turn costs the renderer (each completed block rendered
// once, the rest echoed raw).
func BenchmarkStreamReply(b *testing.B) {
	src := sampleReply()
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		r := NewRenderer(&Term{Out: io.Discard, TTY: true, Style: Style{Color: true}, Size: func() (int, int) { return 100, 40 }}, nil)
		r.StartTurn()
		for s := src; s != ""; {
			n := min(len(s), 12)
			r.OnEvent(llm.Event{Type: llm.EventText, Text: s[:n]})
			s = s[n:]
		}
		r.mu.Lock()
		r.finishText() // the end of the reply: its last block rendered
		r.mu.Unlock()
		b.StopTimer() // closing waits for the spinner's tick
		r.EndTurn(false)
		r.Close()
		b.StartTimer()
	}
}
