package session

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/llm"
)

func TestAppendReadRedact(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s", "a.jsonl")
	const key = "sk-test-not-a-real-key-123"
	l, err := Create(path, Meta{ID: "abc", Project: "/p"}, []string{key})
	if err != nil {
		t.Fatal(err)
	}
	m := llm.Text(llm.RoleUser, "my key is "+key)
	if err := l.Append(Entry{Type: TypeMessage, Message: &m}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	raw, _ := os.ReadFile(path)
	if strings.Contains(string(raw), key) {
		t.Fatal("key reached the log")
	}
	es, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || es[0].Meta.ID != "abc" || es[1].Message.PlainText() != "my key is [REDACTED]" {
		t.Fatalf("entries = %+v", es)
	}
}

func TestTornLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.jsonl")
	l, _ := Create(path, Meta{ID: "x"}, nil)
	l.Append(Entry{Type: TypeNotice, Text: "one"})
	l.Close()
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"type":"notice","te`)
	f.Close()
	es, err := ReadFile(path)
	if !errors.Is(err, ErrTornLine) || len(es) != 2 {
		t.Fatalf("got %d entries, err %v; want 2 and ErrTornLine", len(es), err)
	}
}

func TestCorruptMiddleLineIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.jsonl")
	os.WriteFile(path, []byte("{\"type\":\"meta\"}\nnot json\n{\"type\":\"notice\"}\n"), 0o600)
	if _, err := ReadFile(path); err == nil || errors.Is(err, ErrTornLine) {
		t.Fatalf("err = %v, want a line error", err)
	}
}
