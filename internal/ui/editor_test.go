package ui

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func testEditor(t *testing.T, input string, w int, opts EditorOptions) (*Editor, *screen) {
	t.Helper()
	scr := newScreen(w, 10)
	scr.onlcr = false // raw mode: the editor writes its own CRs
	tm := &Term{Out: scr, TTY: true, Size: func() (int, int) { return w, 10 }}
	opts.ForceRaw = true
	return NewEditor(NewInput(strings.NewReader(input)), tm, opts), scr
}

func TestEditorKeys(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  string
	}{
		{"plain", "hello\r", "hello"},
		{"ctrl-j inserts a newline", "hi\nthere\r", "hi\nthere"},
		{"backslash-enter inserts a newline", "hi\\\rthere\r", "hi\nthere"},
		{"a backslash inside the line stays", "a\\b\r", "a\\b"},
		{"backspace", "helo\x7f\x7flo\r", "helo"},
		{"left and insert", "hllo\x1b[D\x1b[D\x1b[De\r", "hello"},
		{"ctrl-a ctrl-e", "ello\x01h\x05!\r", "hello!"},
		{"home end keys", "b\x1b[Ha\x1b[Fc\r", "abc"},
		{"home end ~", "b\x1b[1~a\x1b[4~c\r", "abc"},
		{"ss3 home end", "b\x1bOHa\x1bOFc\r", "abc"},
		{"ctrl-k", "hello world\x01\x1b[C\x1b[C\x1b[C\x1b[C\x1b[C\x0b\r", "hello"},
		{"ctrl-u", "hello world\x1b[D\x1b[D\x15\r", "ld"},
		{"ctrl-w", "go test ./...\x17\r", "go test "},
		{"ctrl-w then yank", "one two\x17\x01\x19 \r", "two one "},
		{"alt-backspace", "one two\x1b\x7f\r", "one "},
		{"delete key", "abc\x01\x1b[3~\r", "bc"},
		{"ctrl-d deletes under cursor", "abc\x01\x04\r", "bc"},
		{"word moves", "aa bb cc\x1bb\x1bbX\x1bfY\r", "aa XbbY cc"},
		{"ctrl-arrow words", "aa bb\x1b[1;5DX\r", "aa Xbb"},
		{"esc-enter newline", "line one\x1b\rline two\r", "line one\nline two"},
		{"shift-enter csi u", "a\x1b[13;2ub\r", "a\nb"},
		{"bracketed paste keeps newlines", "\x1b[200~first\r\nsecond\nthird\x1b[201~\r", "first\n\nsecond\nthird"},
		{"paste keeps tabs", "\x1b[200~a\tb\x1b[201~\r", "a\tb"},
		{"ctrl-c clears non-empty", "junk\x03ok\r", "ok"},
		{"utf8", "héllo 世界\x7f\r", "héllo 世"},
		{"unknown escape ignored", "a\x1b[99Zb\r", "ab"},
		{"up down inside multi-line", "ab\x1b\rcd\x1b[A\x01X\x1b[BY\r", "Xab\ncYd"},
		{"eof mid-line submits", "partial", "partial"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := testEditor(t, tt.input, 80, EditorOptions{NoHistory: true})
			got, err := e.ReadLine(context.Background(), "> ")
			if err != nil {
				t.Fatalf("ReadLine: %v", err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestEditorInterruptAndEOF(t *testing.T) {
	e, _ := testEditor(t, "\x03\x04", 80, EditorOptions{NoHistory: true})
	if _, err := e.ReadLine(context.Background(), "> "); !errors.Is(err, ErrInterrupt) {
		t.Fatalf("Ctrl-C at empty prompt: err = %v, want ErrInterrupt", err)
	}
	if _, err := e.ReadLine(context.Background(), "> "); !errors.Is(err, io.EOF) {
		t.Fatalf("Ctrl-D at empty prompt: err = %v, want io.EOF", err)
	}
	if _, err := e.ReadLine(context.Background(), "> "); !errors.Is(err, io.EOF) {
		t.Fatalf("end of input: err = %v, want io.EOF", err)
	}
	// Where Esc interrupts (the permission prompt) a lone one is Ctrl-C,
	// typed text or not; elsewhere it does nothing.
	e, _ = testEditor(t, "y\x1b", 80, EditorOptions{NoHistory: true, EscapeInterrupts: true})
	if _, err := e.ReadLine(context.Background(), "> "); !errors.Is(err, ErrInterrupt) {
		t.Fatalf("Esc at a prompt where it interrupts: err = %v, want ErrInterrupt", err)
	}
	e, _ = testEditor(t, "y\x1b", 80, EditorOptions{NoHistory: true})
	if got, err := e.ReadLine(context.Background(), "> "); err != nil || got != "y" {
		t.Fatalf("Esc where it does not interrupt: %q, %v", got, err)
	}
}

func TestEditorContextCancel(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	tm := &Term{Out: io.Discard, Size: func() (int, int) { return 80, 24 }}
	e := NewEditor(NewInput(r), tm, EditorOptions{ForceRaw: true})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.ReadLine(ctx, "> "); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestEditorHistory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agents", "history")
	e, _ := testEditor(t, "first\rsecond line\x1b\rcontinued\rthird\rthird\r\r", 80, EditorOptions{HistoryPath: path})
	for range 5 {
		if _, err := e.ReadLine(context.Background(), "> "); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"first", "second line\ncontinued", "third"}
	if got := e.History(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("history = %q, want %q", got, want)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("history file mode %v, want 0600", fi.Mode().Perm())
	}

	// A new editor loads the file; Up walks back, Down returns to the draft.
	tests := []struct {
		name, input, want string
	}{
		{"up once", "\x1b[A\r", "third"},
		{"up twice, multi-line entry", "\x1b[A\x1b[A\r", "second line\ncontinued"},
		{"up three", "\x1b[A\x1b[A\x1b[A\x1b[A\r", "first"},
		{"up then down restores draft", "draft\x1b[A\x1b[A\x1b[B\x1b[B\x1b[B\r", "draft"},
		{"ctrl-p ctrl-n", "\x10\x10\x0e\r", "third"},
		{"ctrl-r finds newest match", "\x12ir\r", "third"},
		{"ctrl-r narrows", "\x12rst\r", "first"},
		{"ctrl-r multi-line entry", "\x12cont\r", "second line\ncontinued"},
		{"ctrl-r again goes older", "\x12i\x12\r", "second line\ncontinued"},
		{"ctrl-r twice more", "\x12i\x12\x12\r", "first"},
		{"ctrl-r then edit", "\x12thi\x1b[F!\r", "third!"},
		{"ctrl-r backspace widens", "\x12firx\x7f\r", "first"},
		{"ctrl-g restores the draft", "draft\x12thi\x07\r", "draft"},
		{"ctrl-r failing keeps the last match", "\x12thx\r", "third"},
		{"ctrl-r no match at all", "\x12zzz\r", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e2, _ := testEditor(t, tt.input, 80, EditorOptions{HistoryPath: path, NoHistory: false})
			e2.opts.NoHistory = false
			got, err := e2.ReadLine(context.Background(), "> ")
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			// Do not let sub-tests grow the shared file.
		})
		os.WriteFile(path, []byte("first\nsecond line\\ncontinued\nthird\n"), 0o600)
	}
}

func TestHistoryEscaping(t *testing.T) {
	for _, s := range []string{"plain", `back\slash`, "multi\nline", `lit\n`, "\\\n\\"} {
		if got := unescapeHistory(escapeHistory(s)); got != s {
			t.Errorf("round trip of %q gave %q", s, got)
		}
		if strings.Contains(escapeHistory(s), "\n") {
			t.Errorf("escaped %q still has a newline", s)
		}
	}
}

func TestHistoryBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history")
	var b strings.Builder
	for i := range 50 {
		b.WriteString(strings.Repeat("x", i+1) + "\n")
	}
	os.WriteFile(path, []byte(b.String()), 0o600)
	e, _ := testEditor(t, "", 80, EditorOptions{HistoryPath: path, HistoryMax: 10})
	if n := len(e.History()); n != 10 {
		t.Fatalf("kept %d entries, want 10", n)
	}
	data, _ := os.ReadFile(path)
	if n := strings.Count(string(data), "\n"); n != 10 {
		t.Fatalf("file rewritten to %d lines, want 10", n)
	}
}

func TestEditorCompletion(t *testing.T) {
	comp := func(line string, pos int) []string {
		word := line[strings.LastIndexByte(line[:pos], ' ')+1 : pos]
		var out []string
		for _, c := range []string{"/compact", "/context", "/cost", "/clear", "internal/"} {
			if strings.HasPrefix(c, word) {
				out = append(out, c)
			}
		}
		return out
	}
	tests := []struct{ name, input, want string }{
		{"unique", "/comp\t\r", "/compact "},
		{"directory no space", "see int\t\r", "see internal/"},
		{"common prefix", "/con\t\r", "/context "},
		{"ambiguous extends", "/co\tn\t\r", "/context "},
		{"no match", "/zz\t\r", "/zz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := testEditor(t, tt.input, 80, EditorOptions{NoHistory: true, Completer: comp})
			got, err := e.ReadLine(context.Background(), "> ")
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("ambiguous lists", func(t *testing.T) {
		e, scr := testEditor(t, "/c\t", 80, EditorOptions{NoHistory: true, Completer: comp})
		e.ReadLine(context.Background(), "> ")
		for _, c := range []string{"/compact", "/context", "/cost", "/clear"} {
			if !strings.Contains(scr.text(), c) {
				t.Errorf("screen lacks candidate %s:\n%s", c, scr.text())
			}
		}
	})
	t.Run("slash commands listed with what they do", func(t *testing.T) {
		help := map[string]string{"/compact": "summarise the conversation now", "/cost": "tokens and money so far"}
		e, scr := testEditor(t, "/co\t", 80, EditorOptions{NoHistory: true, Completer: comp, Describe: func(c string) string { return help[c] }})
		e.ReadLine(context.Background(), "> ")
		for _, want := range []string{"/compact", "summarise the conversation now", "/cost", "tokens and money so far"} {
			if !strings.Contains(scr.text(), want) {
				t.Errorf("the list lacks %q:\n%s", want, scr.text())
			}
		}
		for _, l := range strings.Split(scr.text(), "\n") {
			if strings.Contains(l, "/cost") && !strings.Contains(l, "tokens and money") {
				t.Errorf("a command and its description are not on one row: %q", l)
			}
		}
	})
}

// TestEditorRedraw checks the width-aware redraw on an emulated screen:
// after editing a line longer than the terminal, the screen shows the text
// once, with no leftovers of earlier draws, as it stays once sent (Echo):
// wrapped at words under its first column (a word wider than a row cut).
func TestEditorRedraw(t *testing.T) {
	tests := []struct {
		name, input, want string
		w                 int
	}{
		{"wraps", "abcdefghijklmnopqrstuvwxyz\r", "> abcdefgh\n  ijklmnop\n  qrstuvwx\n  yz", 10},
		{"wraps at words", "the quick brown fox jumps\r", "> the quick\n  brown fox\n  jumps", 12},
		{"exact fill", "abcdefgh\r", "> abcdefgh", 10},
		{"edit in the middle of a wrapped line", "abcdefghijklmnop\x01\x1b[C\x1b[C\x7f\x7f\r", "> cdefghij\n  klmnop", 10},
		{"multi-line", "ab\x1b\rcd\r", "> ab\n… cd", 10},
		{"wide chars wrap whole", "aaaaaaa世界\r", "> aaaaaaa\n  世界", 10},
		{"shrinking erases", "abcdefghijklmnopqrstu\x15xy\r", "> xy", 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, scr := testEditor(t, tt.input, tt.w, EditorOptions{NoHistory: true})
			if _, err := e.ReadLine(context.Background(), "> "); err != nil {
				t.Fatal(err)
			}
			if got := scr.text(); got != tt.want {
				t.Errorf("screen:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// TestEditorCursor checks the cursor lands where the edit point is.
func TestEditorCursor(t *testing.T) {
	e, scr := testEditor(t, "abcdefghijklmnop\x01\x1b[C\x1b[C\x1b[C", 10, EditorOptions{NoHistory: true})
	// Drive the state machine by hand so we can look before Enter.
	s := &lineState{prompt: "> ", cont: "… "}
	ctx := context.Background()
	e.refresh(s)
	for {
		k, err := readKey(ctx, e.in)
		if err != nil {
			break
		}
		e.apply(s, k)
		e.refresh(s)
	}
	if s.pos != 3 {
		t.Fatalf("pos = %d, want 3", s.pos)
	}
	if scr.row != 0 || scr.col != 5 {
		t.Errorf("cursor at row %d col %d, want 0,5", scr.row, scr.col)
	}
	// Move to the second row: position 8 is "i", the first cell of row 1.
	for range 5 {
		e.apply(s, key{kind: keyRight})
	}
	e.refresh(s)
	if scr.row != 1 || scr.col != 0 {
		t.Errorf("cursor at row %d col %d, want 1,0", scr.row, scr.col)
	}
}

func TestEditorPlainMode(t *testing.T) {
	tm := &Term{Out: io.Discard, Size: func() (int, int) { return 80, 24 }}
	e := NewEditor(NewInput(strings.NewReader("one\r\ntwo\nlast")), tm, EditorOptions{NoHistory: true})
	for _, want := range []string{"one", "two", "last"} {
		got, err := e.ReadLine(context.Background(), "> ")
		if err != nil || got != want {
			t.Fatalf("got %q, %v; want %q", got, err, want)
		}
	}
	if _, err := e.ReadLine(context.Background(), "> "); !errors.Is(err, io.EOF) {
		t.Fatalf("err = %v, want io.EOF", err)
	}
}

// A long paste shows as one placeholder row, once, and is submitted whole.
func TestEditorCollapsesLongPaste(t *testing.T) {
	var paste strings.Builder
	for i := 1; i <= 60; i++ {
		paste.WriteString("pasted line\n")
	}
	e, scr := testEditor(t, "look: \x1b[200~"+paste.String()+"\x1b[201~ ok\r", 80, EditorOptions{NoHistory: true})
	got, err := e.ReadLine(context.Background(), "> ")
	if err != nil {
		t.Fatal(err)
	}
	if got != "look: "+paste.String()+" ok" {
		t.Errorf("submitted %q", got)
	}
	screen := scr.all()
	if !strings.Contains(screen, "> look: [pasted 60 lines] ok") || strings.Contains(screen, "pasted line") {
		t.Errorf("the paste is not collapsed on screen:\n%s", screen)
	}
	// A short paste is inserted as it is.
	e, _ = testEditor(t, "\x1b[200~a\nb\x1b[201~\r", 80, EditorOptions{NoHistory: true})
	if got, _ := e.ReadLine(context.Background(), "> "); got != "a\nb" {
		t.Errorf("short paste = %q", got)
	}
}

// Ctrl-G in a Ctrl-R search gives up: the line comes back as it was.
func TestEditorSearchCancel(t *testing.T) {
	e, _ := testEditor(t, "alpha\rbeta\rdraft\x12al\x07\r", 80, EditorOptions{})
	for range 2 {
		e.ReadLine(context.Background(), "> ")
	}
	got, err := e.ReadLine(context.Background(), "> ")
	if err != nil || got != "draft" {
		t.Errorf("after Ctrl-G: %q, %v; want the line as it was (draft)", got, err)
	}
}

// gatedReader gives its chunks one at a time, each when released.
type gatedReader struct {
	chunks []string
	next   chan struct{}
}

func (g *gatedReader) Read(p []byte) (int, error) {
	<-g.next
	if len(g.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, g.chunks[0])
	g.chunks = g.chunks[1:]
	return n, nil
}

// A lone Esc is a key of its own: the key typed after it is not eaten
// (it used to turn "/cost" into "cost").
func TestLoneEscapeKeepsNextKey(t *testing.T) {
	g := &gatedReader{chunks: []string{"\x1b", "/"}, next: make(chan struct{}, 2)}
	in := NewInput(g)
	g.next <- struct{}{} // the Esc arrives; "/" only after it was decoded
	k, err := readKey(context.Background(), in)
	if err != nil || k.kind != keyEscape {
		t.Fatalf("lone Esc = %+v, %v", k, err)
	}
	g.next <- struct{}{}
	if k, err := readKey(context.Background(), in); err != nil || k.kind != keyRune || k.r != '/' {
		t.Fatalf("the key after Esc = %+v, %v; want '/'", k, err)
	}
	// Esc and a key in one burst are still a sequence (Alt-Enter).
	in = NewInput(strings.NewReader("\x1b\r"))
	if k, _ := readKey(context.Background(), in); k.kind != keyNewline {
		t.Errorf("Esc-Enter = %+v, want a newline", k)
	}
}

// TestEditorPoke: after Input.Poke the editor takes its input off the
// screen, runs OnPoke (news printed above), and draws the input again as
// it was, below the news; the line is unchanged. A poke during a paste
// waits for the paste's end.
func TestEditorPoke(t *testing.T) {
	for _, tt := range []struct{ name, before, after string }{
		{"while typing", "half a li", "ne\r"},
		{"during a paste", "\x1b[200~half a li", "ne\x1b[201~\r"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, w := io.Pipe()
			defer w.Close()
			scr := newScreen(40, 10)
			scr.onlcr = false
			tm := &Term{Out: scr, TTY: true, Size: func() (int, int) { return 40, 10 }}
			in := NewInput(r)
			pokes := 0
			e := NewEditor(in, tm, EditorOptions{ForceRaw: true, NoHistory: true, OnPoke: func() {
				pokes++
				io.WriteString(tm.Out, "NEWS FROM ELSEWHERE\r\n")
			}})
			done := make(chan string)
			go func() {
				line, _ := e.ReadLine(context.Background(), "> ")
				done <- line
			}()
			w.Write([]byte(tt.before))
			time.Sleep(50 * time.Millisecond) // read: the poke comes mid-line (or mid-paste)
			in.Poke()
			w.Write([]byte(tt.after))
			if got := <-done; got != "half a line" {
				t.Errorf("line = %q", got)
			}
			if pokes != 1 {
				t.Errorf("OnPoke ran %d times, want 1", pokes)
			}
			rows := strings.Split(scr.all(), "\n")
			news, input := -1, -1
			for i, l := range rows {
				if strings.Contains(l, "NEWS FROM ELSEWHERE") {
					news = i
				}
				if strings.Contains(l, "> half a line") {
					input = i
				}
			}
			if news < 0 || input < news {
				t.Errorf("the news is not above the input drawn again:\n%s", strings.Join(rows, "\n"))
			}
			for _, l := range rows[:max(news, 0)] {
				if strings.Contains(l, "> half") {
					t.Errorf("the input left a copy above the news:\n%s", strings.Join(rows, "\n"))
				}
			}
		})
	}
}
