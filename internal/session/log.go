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
type Log struct {
	mu     sync.Mutex
	f      *os.File
	path   string
	redact []string
	now    func() time.Time
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
	l := newLog(f, path, secrets)
	if err := l.Append(Entry{Type: TypeMeta, Meta: &meta}); err != nil {
		f.Close()
		return nil, err
	}
	return l, nil
}

// Append opens an existing log for appending (resume).
func Append(path string, secrets []string) (*Log, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening session log: %w", err)
	}
	return newLog(f, path, secrets), nil
}

func newLog(f *os.File, path string, secrets []string) *Log {
	var rs []string
	for _, s := range secrets {
		if len(s) >= 8 { // short strings would redact ordinary words
			rs = append(rs, s)
		}
	}
	return &Log{f: f, path: path, redact: rs, now: time.Now}
}

// Path is the log's file path.
func (l *Log) Path() string { return l.path }

// Append writes e as one whole line and syncs it to disk, so a crash after
// Append returns never loses e.
func (l *Log) Append(e Entry) error {
	if l == nil {
		return nil
	}
	if e.Time.IsZero() {
		e.Time = l.now().UTC()
	}
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encoding session entry: %w", err)
	}
	for _, s := range l.redact {
		// Keys are plain tokens; their JSON encoding is the same text.
		b = bytes.ReplaceAll(b, []byte(s), []byte("[REDACTED]"))
	}
	b = append(b, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.f.Write(b); err != nil {
		return fmt.Errorf("writing session log %s: %w", l.path, err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("syncing session log %s: %w", l.path, err)
	}
	return nil
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
