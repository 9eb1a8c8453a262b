package sessionlog

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/testenv"
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

// writeTestLog writes a log of a meta line and three entries and returns
// its bytes and where its last line starts.
func writeTestLog(t *testing.T, path string) ([]byte, int) {
	t.Helper()
	l, err := Create(path, Meta{ID: "x", Project: "/p"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"one", "two"} {
		m := llm.Text(llm.RoleUser, text)
		if err := l.Append(Entry{Type: TypeMessage, Message: &m}); err != nil {
			t.Fatal(err)
		}
	}
	m := llm.Text(llm.RoleAssistant, `the last entry, with "quotes", \ and ünïcode`)
	if err := l.Append(Entry{Type: TypeMessage, Message: &m}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return raw, bytes.LastIndexByte(raw[:len(raw)-1], '\n') + 1
}

// texts lists the entries as type:text, a message by its plain text.
func texts(es []Entry) []string {
	var out []string
	for _, e := range es {
		s := e.Type + ":" + e.Text
		if e.Message != nil {
			s = e.Type + ":" + e.Message.PlainText()
		}
		out = append(out, s)
	}
	return out
}

// TestResumeTornAtEveryOffset: a log cut at any byte of its last entry (a
// crash or a full disk mid-write) is resumed, and what is appended after
// lands on lines of its own: the log stays readable, the torn entry is
// gone, the repair is recorded, and every new entry is there. Before, the
// first new entry was glued to the torn line and the second made the log
// unreadable ("session log line 4: invalid character").
func TestResumeTornAtEveryOffset(t *testing.T) {
	testenv.Slow(t)
	dir := t.TempDir()
	full, last := writeTestLog(t, filepath.Join(dir, "full.jsonl"))
	want := []string{"meta:", "message:one", "message:two", "notice:" + RepairPrefix, "message:after one", "message:after two"}
	for cut := last + 1; cut < len(full); cut++ {
		path := filepath.Join(dir, "cut.jsonl")
		if err := os.WriteFile(path, full[:cut], 0o600); err != nil {
			t.Fatal(err)
		}
		if es, err := ReadFile(path); !errors.Is(err, ErrTornLine) || len(es) != 3 {
			t.Fatalf("cut at %d: read %d entries, %v before resuming", cut, len(es), err)
		}
		l, err := Append(path, nil)
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		for _, text := range []string{"after one", "after two"} {
			m := llm.Text(llm.RoleUser, text)
			if err := l.Append(Entry{Type: TypeMessage, Message: &m}); err != nil {
				t.Fatalf("cut at %d: %v", cut, err)
			}
		}
		l.Close()
		es, err := ReadFile(path)
		if err != nil {
			t.Fatalf("cut at %d: the resumed log does not read: %v", cut, err)
		}
		got := texts(es)
		if len(got) == len(want) && strings.HasPrefix(got[3], want[3]) {
			got[3] = want[3]
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("cut at %d: entries\n%q\nwant\n%q", cut, got, want)
		}
		if !strings.Contains(es[3].Text, fmt.Sprintf("%d bytes", cut-last)) {
			t.Errorf("cut at %d: the repair notice %q does not say what was removed", cut, es[3].Text)
		}
	}
	// A whole log is resumed untouched: no repair notice.
	path := filepath.Join(dir, "whole.jsonl")
	os.WriteFile(path, full, 0o600)
	l, err := Append(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if raw, _ := os.ReadFile(path); !bytes.Equal(raw, full) {
		t.Errorf("resuming a whole log changed it:\n%s", raw)
	}
}

// shortFile writes half of the next failures writes and reports ENOSPC,
// as a full disk does; failTruncate makes that many truncations fail.
type shortFile struct {
	*os.File
	failures, failTruncate int
}

func (f *shortFile) Write(b []byte) (int, error) {
	if f.failures > 0 {
		f.failures--
		n, _ := f.File.Write(b[:len(b)/2])
		return n, syscall.ENOSPC
	}
	return f.File.Write(b)
}

func (f *shortFile) Truncate(size int64) error {
	if f.failTruncate > 0 {
		f.failTruncate--
		return syscall.EIO
	}
	return f.File.Truncate(size)
}

// TestAppendAfterShortWrite: a write that fails half-way (a full disk)
// returns its error and leaves no partial line; the entry is kept, and the
// next Append (space freed) writes the repair notice, the kept entry and
// its own, each on a line of its own; also when cutting the partial line
// off fails at first, and when the disk stays full for a while.
func TestAppendAfterShortWrite(t *testing.T) {
	for _, tc := range []struct{ failures, failTruncate int }{{1, 0}, {1, 1}, {3, 0}} {
		t.Run(fmt.Sprintf("failures=%d,failTruncate=%d", tc.failures, tc.failTruncate), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "a.jsonl")
			l, err := Create(path, Meta{ID: "x"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			l.f = &shortFile{File: l.f.(*os.File), failures: tc.failures, failTruncate: tc.failTruncate}
			var want []string
			for i := range tc.failures {
				text := fmt.Sprint("held back ", i)
				want = append(want, "message:"+text)
				m := llm.Text(llm.RoleUser, text)
				if err := l.Append(Entry{Type: TypeMessage, Message: &m}); !errors.Is(err, syscall.ENOSPC) && !errors.Is(err, syscall.EIO) {
					t.Fatalf("the failed write returned %v, want ENOSPC (or EIO from the cut)", err)
				}
				if tc.failTruncate == 0 {
					if es, err := ReadFile(path); err != nil || len(es) != 1 {
						t.Fatalf("after a failed write: %d entries, %v; want the meta line alone and no torn line", len(es), err)
					}
				}
			}
			for _, text := range []string{"after one", "after two"} {
				want = append(want, "message:"+text)
				m := llm.Text(llm.RoleUser, text)
				if err := l.Append(Entry{Type: TypeMessage, Message: &m}); err != nil {
					t.Fatal(err)
				}
			}
			es := closeAndRead(t, l, path)
			got := texts(es)
			if len(got) < 2 || got[0] != "meta:" || !strings.HasPrefix(got[1], "notice:"+RepairPrefix+"a write failed") {
				t.Fatalf("entries %q: want the meta line, then the repair notice", got)
			}
			if strings.Join(got[2:], "|") != strings.Join(want, "|") {
				t.Fatalf("entries after the repair %q, want %q", got[2:], want)
			}
		})
	}
}

// TestClosePendingAfterShortWrite: entries held back by a failed write are
// written by Close when the disk has room again.
func TestClosePendingAfterShortWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.jsonl")
	l, err := Create(path, Meta{ID: "x"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	l.f = &shortFile{File: l.f.(*os.File), failures: 1}
	m := llm.Text(llm.RoleUser, "held back")
	if err := l.Append(Entry{Type: TypeMessage, Message: &m}); err == nil {
		t.Fatal("the failed write returned no error")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	es, err := ReadFile(path)
	if got := texts(es); err != nil || len(got) != 3 || got[2] != "message:held back" {
		t.Fatalf("entries %q, %v", got, err)
	}
}

// TestWithClock: every entry without a time of its own, the meta line,
// a lazy log's held entries and a resume's repair notice included, is
// stamped by the clock the caller gives, not the machine's.
func TestWithClock(t *testing.T) {
	at := time.Date(2031, 2, 3, 4, 5, 6, 0, time.UTC)
	clock := WithClock(func() time.Time { return at })
	dir := t.TempDir()
	m := llm.Text(llm.RoleUser, "hi")
	for _, tc := range []struct {
		name string
		open func(path string) (*Log, error)
	}{
		{"create", func(path string) (*Log, error) { return Create(path, Meta{ID: "c"}, nil, clock) }},
		{"lazy", func(path string) (*Log, error) { return CreateLazy(path, Meta{ID: "z"}, nil, clock), nil }},
		{"resume torn", func(path string) (*Log, error) {
			if err := os.WriteFile(path, []byte(`{"type":"meta","time":"2020-01-01T00:00:00Z","meta":{"id":"r"}}`+"\n{\"type\":\"mess"), 0o600); err != nil {
				return nil, err
			}
			return Append(path, nil, clock)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".jsonl")
			l, err := tc.open(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Append(Entry{Type: TypeNotice, Text: "before the first message"}); err != nil {
				t.Fatal(err)
			}
			if err := l.Append(Entry{Type: TypeMessage, Message: &m}); err != nil {
				t.Fatal(err)
			}
			es := closeAndRead(t, l, path)
			stamped := 0
			for _, e := range es {
				if e.Type == TypeMeta && tc.name == "resume torn" {
					continue // written before, with its own time
				}
				if !e.Time.Equal(at) {
					t.Errorf("%s entry %q stamped %v, want the given clock's %v", e.Type, e.Text, e.Time, at)
				}
				stamped++
			}
			if want := 3; stamped != want { // meta or repair notice, notice, message
				t.Errorf("%d entries checked, want %d: %+v", stamped, want, es)
			}
		})
	}
}

// closeAndRead closes l and reads its file back whole.
func closeAndRead(t *testing.T, l *Log, path string) []Entry {
	t.Helper()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	es, err := ReadFile(path)
	if err != nil {
		t.Fatalf("the log does not read: %v", err)
	}
	return es
}
