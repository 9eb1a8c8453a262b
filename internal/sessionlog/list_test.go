package sessionlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/llm"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

var t0 = time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)

func msg(role llm.Role, blocks ...llm.Block) *llm.Message {
	return &llm.Message{Role: role, Blocks: blocks}
}
func txt(s string) llm.Block { return llm.Block{Type: llm.BlockText, Text: s} }

// sample is a small session with every kind of entry.
func sample(id string) []Entry {
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	return []Entry{
		{Type: TypeMeta, Time: at(0), Meta: &Meta{ID: id, Project: "/work/p", Model: "claude-sonnet-4", Provider: "anthropic"}},
		{Type: TypeMessage, Time: at(1), Message: msg(llm.RoleUser, txt("Fix the failing test\nin pkg/foo"))},
		{Type: TypeMessage, Time: at(2), Message: msg(llm.RoleAssistant, txt("Looking."), llm.Block{Type: llm.BlockToolUse, ID: "c1", Name: "bash", Input: json.RawMessage(`{"command":"go test ./..."}`)})},
		{Type: TypeUsage, Time: at(2), Usage: &llm.Usage{Input: 100, CacheRead: 1000, Output: 20}},
		{Type: TypePermission, Time: at(2), Permission: &Permission{Tool: "bash", Command: "go test ./...", Rule: "allow bash go test *", Answer: "allow"}},
		{Type: TypeMessage, Time: at(3), Message: msg(llm.RoleUser, llm.Block{Type: llm.BlockToolResult, ToolUseID: "c1", Content: "--- FAIL: TestX\nline 2\nline 3\n```\n", IsError: true})},
		{Type: TypeTodos, Time: at(3), Todos: json.RawMessage(`[{"content":"Fix TestX","activeForm":"Fixing TestX","status":"in_progress"}]`)},
		{Type: TypeNotice, Time: at(4), Agent: "task-1", Text: "sub-agent started: find X"},
		{Type: TypeMessage, Time: at(4), Agent: "task-1", Message: msg(llm.RoleUser, txt("find X"))},
		{Type: TypeMessage, Time: at(5), Agent: "task-1", Message: msg(llm.RoleAssistant, txt("X is in x.go:3"))},
		{Type: TypeUsage, Time: at(5), Agent: "task-1", Usage: &llm.Usage{Input: 50, Output: 5}},
		{Type: TypeEdit, Time: at(6), Edit: json.RawMessage(`{"layer":"strip","blocks":[{"msg":2,"block":0}]}`)},
		{Type: TypeMessage, Time: at(7), Message: msg(llm.RoleAssistant, txt("Fixed."))},
		{Type: TypeUsage, Time: at(7), Usage: &llm.Usage{Input: 10, CacheRead: 1200, Output: 3}},
	}
}

func writeLog(t *testing.T, dir string, start time.Time, entries []Entry) string {
	t.Helper()
	path := filepath.Join(dir, FileName(start, entries[0].Meta.ID))
	l, err := Create(path, *entries[0].Meta, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries[1:] {
		if err := l.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	return path
}

func TestSummarize(t *testing.T) {
	s := Summarize("/x/20250301T100000Z-abc.jsonl", sample("abc"))
	want := Summary{
		ID: "abc", Path: "/x/20250301T100000Z-abc.jsonl", Project: "/work/p", Model: "claude-sonnet-4", Provider: "anthropic",
		Start: t0, Updated: t0.Add(7 * time.Second), Used: t0.Add(7 * time.Second), Title: "Fix the failing test …", Steps: 2, Messages: 4,
		Usage: llm.Usage{Input: 160, CacheRead: 2200, Output: 28},
	}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("Summarize =\n%+v\nwant\n%+v", s, want)
	}
	long := Summarize("", []Entry{{Type: TypeMessage, Message: msg(llm.RoleUser, txt(strings.Repeat("é", 100)))}})
	if n := len([]rune(long.Title)); n != titleRunes {
		t.Fatalf("title has %d runes, want %d", n, titleRunes)
	}
}

func TestListAndFind(t *testing.T) {
	dir := t.TempDir()
	writeLog(t, dir, t0, sample("aaa111"))
	newest := writeLog(t, dir, t0.Add(time.Hour), sample("aab222"))
	torn := writeLog(t, dir, t0.Add(2*time.Hour), sample("ccc333"))
	f, _ := os.OpenFile(torn, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"type":"mess`)
	f.Close()
	os.WriteFile(filepath.Join(dir, FileName(t0.Add(3*time.Hour), "bad")), []byte("garbage\n{}\n"), 0o600)
	os.WriteFile(filepath.Join(dir, FileName(t0.Add(4*time.Hour), "empty")), nil, 0o600)

	list, warns := List(dir)
	var ids []string
	for _, s := range list {
		ids = append(ids, s.ID)
	}
	if strings.Join(ids, ",") != "ccc333,aab222,aaa111" {
		t.Fatalf("ids = %v", ids)
	}
	if !list[0].Torn || list[1].Torn {
		t.Fatalf("torn flags: %v %v", list[0].Torn, list[1].Torn)
	}
	if len(warns) != 1 || !strings.Contains(warns[0].Error(), "bad") {
		t.Fatalf("warnings = %v", warns)
	}

	tests := []struct {
		id, want, wantErr string
	}{
		{"aab222", newest, ""},
		{"aab", newest, ""},
		{"aa", "", `"aa" matches 2 sessions (aab222, aaa111)`},
		{"zzz", "", `no session "zzz"`},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			got, err := Find(dir, tt.id)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Find = %s, %v", got, err)
			}
		})
	}
	// Every sample was last used at the same time: the later start wins;
	// the empty file is no session.
	if got, _ := Find(dir, ""); got != torn {
		t.Fatalf("newest = %s, want %s", got, torn)
	}
	if _, err := Find(t.TempDir(), ""); err == nil {
		t.Fatal("Find in an empty dir found something")
	}

	all, _ := ListAll(filepath.Dir(dir))
	if len(all) != 3 {
		t.Fatalf("ListAll = %d sessions", len(all))
	}
}

func TestLastTodosAndUnanswered(t *testing.T) {
	es := sample("x")
	if got := string(LastTodos(es)); !strings.Contains(got, "Fix TestX") {
		t.Fatalf("LastTodos = %s", got)
	}
	es = append(es, Entry{Type: TypeTodos, Agent: "task-1", Todos: json.RawMessage(`[]`)})
	if got := string(LastTodos(es)); !strings.Contains(got, "Fix TestX") {
		t.Fatal("a sub-agent's entry replaced the main plan")
	}
	if LastTodos(es[:3]) != nil {
		t.Fatal("LastTodos found a plan where none was written")
	}

	if m := Unanswered(sample("x")); m != nil {
		t.Fatalf("a finished session has unanswered calls: %+v", m)
	}
	crashed := sample("x")[:3] // the assistant's bash call is the last message
	crashed = append(crashed, Entry{Type: TypeMessage, Agent: "task-1", Message: msg(llm.RoleUser, txt("sub"))})
	m := Unanswered(crashed)
	if m == nil || m.Role != llm.RoleUser || len(m.Blocks) != 1 || m.Blocks[0].ToolUseID != "c1" || !m.Blocks[0].IsError || m.Blocks[0].Content != InterruptedNote {
		t.Fatalf("Unanswered = %+v", m)
	}
}

func TestWriteMarkdownGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, sample("abc"), MarkdownOptions{MaxResultLines: 2, Usage: "2.4k tokens"}); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "sample.md")
	if *update {
		os.WriteFile(golden, buf.Bytes(), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if buf.String() != string(want) {
		t.Fatalf("markdown differs from %s (go test -update to accept):\n%s", golden, buf.String())
	}
}

func TestWriteJSONLRoundTrips(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSONL(&buf, sample("abc")); err != nil {
		t.Fatal(err)
	}
	back, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(sample("abc")) || !reflect.DeepEqual(Summarize("", back), Summarize("", sample("abc"))) {
		t.Fatalf("round trip changed the session: %d entries", len(back))
	}
}

func TestMarkdownFenceOutlivesBackticks(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, sample("abc"), MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "````\n--- FAIL: TestX\nline 2\nline 3\n```\n````\n") {
		t.Fatalf("a result holding ``` must get a longer fence:\n%s", buf.String())
	}
}

// Two sessions started in the same second: the file names cannot order
// them, the meta line's time does.
func TestSameSecondNewest(t *testing.T) {
	dir := t.TempDir()
	later := sample("000later")
	later[0].Time = t0.Add(500 * time.Millisecond)
	earlier := sample("fffearly")
	earlier[0].Time = t0.Add(100 * time.Millisecond)
	writeLogAt := func(es []Entry) string {
		path := filepath.Join(dir, FileName(es[0].Time, es[0].Meta.ID))
		var buf bytes.Buffer
		if err := WriteJSONL(&buf, es); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(path, buf.Bytes(), 0o600)
		return path
	}
	want := writeLogAt(later)
	writeLogAt(earlier)
	older := sample("older")
	older[0].Time = t0.Add(-time.Hour)
	writeLogAt(older)
	if got, err := Find(dir, ""); err != nil || got != want {
		t.Fatalf("Find newest = %s, %v; want %s", got, err, want)
	}
	list, _ := List(dir)
	if len(list) != 3 || list[0].ID != "000later" || list[2].ID != "older" {
		t.Fatalf("order = %v %v %v", list[0].ID, list[1].ID, list[2].ID)
	}
}

// --continue takes the conversation last used, not the last one opened:
// a newer session without a message (opened and quit, or /clear) or one
// started later but left earlier loses to the one with the latest message.
func TestLatestIsLastUsed(t *testing.T) {
	dir := t.TempDir()
	shift := func(es []Entry, start, d time.Duration) []Entry {
		for i := range es {
			es[i].Time = es[i].Time.Add(d)
		}
		es[0].Time = t0.Add(start)
		return es
	}
	used := writeLog(t, dir, t0, shift(sample("used"), 0, 3*time.Hour))
	left := writeLog(t, dir, t0.Add(time.Hour), shift(sample("left"), time.Hour, time.Hour+time.Minute))
	writeLog(t, dir, t0.Add(4*time.Hour), []Entry{
		{Type: TypeMeta, Time: t0.Add(4 * time.Hour), Meta: &Meta{ID: "nomsg", Project: "/work/p"}},
		{Type: TypePrompt, Time: t0.Add(4 * time.Hour), System: "s"},
	})
	// A run whose first request failed (no server at BASE_URL): a prompt
	// and no reply. It is no conversation to continue.
	writeLog(t, dir, t0.Add(5*time.Hour), []Entry{
		{Type: TypeMeta, Time: t0.Add(5 * time.Hour), Meta: &Meta{ID: "failed", Project: "/work/p"}},
		{Type: TypeMessage, Time: t0.Add(5 * time.Hour), Message: &llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{{Type: llm.BlockText, Text: "hello?"}}}},
	})
	got, err := Latest(dir)
	if err != nil || got != used {
		t.Fatalf("Latest = %s, %v; want %s", got, err, used)
	}
	if _, err := Latest(t.TempDir()); !errors.Is(err, ErrNoSession) {
		t.Fatalf("Latest of an empty dir: %v", err)
	}
	// Taken up again (/resume) and left without a word: it is the one
	// used last.
	l, err := Append(left, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Append(Entry{Type: TypeResumed, Time: t0.Add(6 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if got, err := Latest(dir); err != nil || got != left {
		t.Fatalf("after a resume Latest = %s, %v; want the resumed one", got, err)
	}
}

// A lazy log writes nothing until the first message; then everything held
// comes first, in order, with the times it was logged at.
func TestCreateLazy(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", FileName(t0, "lazy"))
	l := CreateLazy(path, Meta{ID: "lazy", Project: "/p"}, []string{"sk-secret-0123456789"})
	if err := l.Append(Entry{Type: TypePrompt, System: "sys sk-secret-0123456789"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) || l.Written() {
		t.Fatalf("a log with no message exists on disk: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("closing a log with no message left a file: %v", err)
	}

	l = CreateLazy(path, Meta{ID: "lazy", Project: "/p"}, []string{"sk-secret-0123456789"})
	l.Append(Entry{Type: TypePrompt, System: "sys sk-secret-0123456789"})
	l.Append(Entry{Type: TypeNotice, Text: "n"})
	if err := l.Append(Entry{Type: TypeMessage, Message: msg(llm.RoleUser, txt("hi"))}); err != nil {
		t.Fatal(err)
	}
	l.Append(Entry{Type: TypeUsage, Usage: &llm.Usage{Input: 1}})
	l.Close()
	es, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range es {
		types = append(types, e.Type)
	}
	if strings.Join(types, ",") != "meta,prompt,notice,message,usage" {
		t.Fatalf("entries = %v", types)
	}
	if es[0].Meta.ID != "lazy" || es[0].Time.IsZero() || es[1].System != "sys [REDACTED]" {
		t.Fatalf("held entries lost their content: %+v %+v", es[0], es[1])
	}
}

// sessions show and export carry a compaction's summary: it is what the
// model went on from.
func TestWriteMarkdownCompactionSummary(t *testing.T) {
	es := sample("sum")
	es = append(es, Entry{Type: TypeEdit, Time: t0.Add(8 * time.Second),
		Edit: json.RawMessage(`{"layer":"summary","keep":2,"summary":{"type":"text","text":"<summary>\nGoal: fix TestX\nNext: run go test\n</summary>"}}`)})
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, es, MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"compacted; the earlier messages were replaced by this summary", "> Goal: fix TestX", "> Next: run go test"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("export lacks %q:\n%s", want, buf.String())
		}
	}
}
