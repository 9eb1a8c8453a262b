package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/harness-dev/harness/internal/llm"
)

// Entry types.
const (
	TypeMeta       = "meta"       // first line: session id, project, model
	TypeMessage    = "message"    // a stored message (user, assistant, tool results)
	TypeUsage      = "usage"      // provider usage of one request
	TypeEdit       = "edit"       // a history edit (strip, drop, compaction)
	TypePermission = "permission" // a permission decision
	TypeTodos      = "todos"      // the whole todo list after a change
	TypeNotice     = "notice"     // something the user was told (tamper, errors)
	TypePrompt     = "prompt"     // the system prompt and tools in force from here on
)

// Meta describes a session.
type Meta struct {
	ID       string `json:"id"`
	Project  string `json:"project"`
	Model    string `json:"model,omitempty"`
	Provider string `json:"provider,omitempty"`
	Parent   string `json:"parent,omitempty"` // session this one continues, if any
}

// Permission is one permission decision.
type Permission struct {
	Tool    string `json:"tool"`
	Command string `json:"command,omitempty"`
	Path    string `json:"path,omitempty"`
	Rule    string `json:"rule"`
	Answer  string `json:"answer"`
}

// Entry is one line of the log.
type Entry struct {
	Type       string          `json:"type"`
	Time       time.Time       `json:"time"`
	Meta       *Meta           `json:"meta,omitempty"`
	Message    *llm.Message    `json:"message,omitempty"`
	Usage      *llm.Usage      `json:"usage,omitempty"`
	Agent      string          `json:"agent,omitempty"` // "" for the main agent, else the sub-agent's label
	Edit       json.RawMessage `json:"edit,omitempty"`
	Permission *Permission     `json:"permission,omitempty"`
	Todos      json.RawMessage `json:"todos,omitempty"`
	Text       string          `json:"text,omitempty"`
	// System and Tools are the static head of every request (TypePrompt),
	// logged once and again whenever they change, so a log alone tells what
	// the provider was sent.
	System string     `json:"system,omitempty"`
	Tools  []llm.Tool `json:"tools,omitempty"`
}

// UsageCompact is the Text of a usage entry for a summarisation call: it
// counts toward cost but does not measure the history.
const UsageCompact = "compact"

// LastPrompt returns the main agent's latest prompt entry, or nil.
func LastPrompt(entries []Entry) *Entry {
	for i := len(entries) - 1; i >= 0; i-- {
		if entries[i].Type == TypePrompt && entries[i].Agent == "" {
			return &entries[i]
		}
	}
	return nil
}

// Log appends entries to one session file.
//
// The file only ever grows by whole lines. size is where the whole lines
// end; a write that fails (a full disk, an I/O error) may leave part of a
// line past it, so the Log marks itself torn and cuts the file back to
// size before it writes again, recording the repair in the log. An entry
// whose Append returned an error is therefore never in the log, and no
// entry is ever written after a partial line.
type Log struct {
	mu     sync.Mutex
	f      logFile
	path   string
	redact []string
	now    func() time.Time
	size   int64  // bytes of whole lines
	torn   string // why bytes past size may be partial; "" when none are
}

// logFile is what Log needs of its file; tests put a failing one in.
type logFile interface {
	io.Writer
	Sync() error
	Truncate(size int64) error
	Close() error
}

// Create opens a new log file at path, writing meta as the first line.
// secrets are redacted from every line.
func Create(path string, meta Meta, secrets []string) (*Log, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating session directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("creating session log: %w", err)
	}
	l := newLog(f, path, secrets, 0)
	if err := l.Append(Entry{Type: TypeMeta, Meta: &meta}); err != nil {
		f.Close()
		os.Remove(path) // a log without its meta line is no log
		return nil, err
	}
	return l, nil
}

// Append opens an existing log for appending (resume). A torn last line
// (a crash or a failed write mid-line) is cut off first, and a notice
// entry records the repair, so the new entries start on a line of their
// own and the log stays readable.
func Append(path string, secrets []string) (*Log, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening session log: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("opening session log: %w", err)
	}
	good, err := wholeLines(f, st.Size())
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("reading session log %s: %w", path, err)
	}
	l := newLog(f, path, secrets, good)
	if good < st.Size() {
		l.torn = fmt.Sprintf("a torn last line of %d bytes (an interrupted write) was removed before resuming", st.Size()-good)
		l.mu.Lock()
		err := l.write(nil, l.now().UTC())
		l.mu.Unlock()
		if err != nil {
			f.Close()
			return nil, err
		}
	}
	return l, nil
}

// RepairPrefix starts the text of the notice entry a Log writes when it
// has cut a torn line off its file.
const RepairPrefix = "session log repaired: "

// wholeLines returns the length of f's first size bytes up to and
// including the last newline.
func wholeLines(f *os.File, size int64) (int64, error) {
	buf := make([]byte, 4096)
	for end := size; end > 0; {
		start := max(end-int64(len(buf)), 0)
		n, err := f.ReadAt(buf[:end-start], start)
		if err != nil && !(errors.Is(err, io.EOF) && int64(n) == end-start) {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return start + int64(i) + 1, nil
		}
		end = start
	}
	return 0, nil
}

func newLog(f logFile, path string, secrets []string, size int64) *Log {
	var rs []string
	for _, s := range secrets {
		if len(s) >= 8 { // short strings would redact ordinary words
			rs = append(rs, s)
		}
	}
	return &Log{f: f, path: path, redact: rs, now: time.Now, size: size}
}

// Path is the log's file path.
func (l *Log) Path() string { return l.path }

// Append writes e as one whole line and syncs it to disk, so a crash after
// Append returns never loses e. When it returns an error, nothing of e is
// in the log (or, if even cutting it off failed, the next Append cuts it
// before writing); the caller decides whether to go on.
func (l *Log) Append(e Entry) error {
	if l == nil {
		return nil
	}
	if e.Time.IsZero() {
		e.Time = l.now().UTC()
	}
	b, err := l.line(e)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.write(b, e.Time)
}

// write appends the encoded lines b, first cutting off what a failed
// write left and recording that in a notice stamped t. l.mu is held.
func (l *Log) write(b []byte, t time.Time) error {
	if l.torn != "" {
		if err := l.f.Truncate(l.size); err != nil {
			return fmt.Errorf("repairing session log %s: %w", l.path, err)
		}
		if l.size > 0 { // an empty file has no meta line yet to put a notice after
			rb, err := l.line(Entry{Type: TypeNotice, Time: t, Text: RepairPrefix + l.torn})
			if err != nil {
				return err
			}
			b = append(rb, b...)
		}
	}
	if len(b) == 0 {
		return nil
	}
	n, err := l.f.Write(b)
	if err == nil {
		err = l.f.Sync()
	}
	if err != nil {
		if l.torn == "" {
			l.torn = fmt.Sprintf("a write failed (%v); the %d bytes it left were removed", err, n)
		}
		// Cut now, so a crash before the next Append leaves no partial
		// line either; if this fails, the next Append tries again.
		_ = l.f.Truncate(l.size)
		return fmt.Errorf("writing session log %s: %w", l.path, err)
	}
	l.size += int64(len(b))
	l.torn = ""
	return nil
}

// line encodes e, redacted, with its newline.
func (l *Log) line(e Entry) ([]byte, error) {
	b, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("encoding session entry: %w", err)
	}
	for _, s := range l.redact {
		// Keys are plain tokens; their JSON encoding is the same text.
		b = bytes.ReplaceAll(b, []byte(s), []byte("[REDACTED]"))
	}
	return append(b, '\n'), nil
}

// Close closes the file.
func (l *Log) Close() error {
	if l == nil {
		return nil
	}
	return l.f.Close()
}

// ErrTornLine reports a last line cut short by a crash; the entries before
// it are intact.
var ErrTornLine = errors.New("the last line of the session log was cut short (harness was killed mid-write); it was skipped")

// Read parses a log. A torn last line is skipped and reported with
// ErrTornLine alongside the good entries; any other bad line is an error.
func Read(r io.Reader) ([]Entry, error) {
	var out []Entry
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			complete := line[len(line)-1] == '\n'
			var e Entry
			if jerr := json.Unmarshal(bytes.TrimSpace(line), &e); jerr != nil || !complete {
				if !complete || isLast(br) {
					return out, ErrTornLine
				}
				return out, fmt.Errorf("session log line %d: %w", n, jerr)
			}
			out = append(out, e)
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

func isLast(br *bufio.Reader) bool {
	rest, _ := br.Peek(1)
	return len(rest) == 0 || strings.TrimSpace(string(rest)) == ""
}

// ReadFile is Read on a path.
func ReadFile(path string) ([]Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening session log: %w", err)
	}
	defer f.Close()
	return Read(f)
}
