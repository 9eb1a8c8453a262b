package sessionlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
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
	TypeReminder   = "reminder"   // what the reminder last told the model (package reminder's State)
	TypeResumed    = "resumed"    // the session was taken up again: it counts as used from then on
	TypeLedger     = "ledger"     // the cost ledger of one request (package ledger's Record)
	TypeDropped    = "dropped"    // what a compaction took out of the history (package compact's Dropped)
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
	// Reminder is a TypeReminder entry's state, logged when the files the
	// reminder knows change, so a resumed session reports the edits made
	// in between.
	Reminder json.RawMessage `json:"reminder,omitempty"`
	// Ledger is a TypeLedger entry's record: tokens by tier and kind,
	// dollars and the reasons found (package ledger).
	Ledger json.RawMessage `json:"ledger,omitempty"`
	// Dropped is a TypeDropped entry's report: the messages and tool
	// results a compaction replaced, their sizes, and where a dropped
	// result can be read back (package compact).
	Dropped json.RawMessage `json:"dropped,omitempty"`
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
// line past it, so the Log cuts the file back to size and keeps the lines
// it could not write in pending. The next Append cuts again if it must,
// then writes a notice recording the repair, the pending lines and its
// own, in order: no entry is ever written after a partial line, and none
// is dropped while the process lives.
type Log struct {
	mu      sync.Mutex
	f       logFile
	path    string
	redact  []string
	now     func() time.Time
	size    int64      // bytes of whole lines
	pending []byte     // whole lines a failed write did not get to disk
	repair  string     // what went wrong, for the repair notice; "" when all is well
	lazy    *lazyStart // CreateLazy: nothing on disk before the first message
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
func Create(path string, meta Meta, secrets []string, opts ...Option) (*Log, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating session directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("creating session log: %w", err)
	}
	if err := lock(f, path); err != nil {
		f.Close()
		return nil, err
	}
	l := newLog(f, path, secrets, 0, opts)
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
func Append(path string, secrets []string, opts ...Option) (*Log, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening session log: %w", err)
	}
	// One writer per log: two processes appending would interleave their
	// messages, and the next resume would send a call whose result is
	// not in the next message. The lock comes before any repair.
	if err := lock(f, path); err != nil {
		f.Close()
		return nil, err
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
	l := newLog(f, path, secrets, good, opts)
	if good < st.Size() {
		l.repair = fmt.Sprintf("a torn last line of %d bytes (an interrupted write) was removed before resuming", st.Size()-good)
		if err := l.write(nil, l.now().UTC()); err != nil {
			f.Close()
			return nil, err
		}
	}
	return l, nil
}

// LockedError is a log another process is writing: Append refuses to
// become a second writer.
type LockedError struct {
	Path string
	PID  int // the process holding it, when it could be found
}

func (e *LockedError) Error() string {
	who := "another harness process"
	if e.PID > 0 {
		who += fmt.Sprintf(" (PID %d)", e.PID)
	}
	return fmt.Sprintf("session log %s is open in %s: continue the session there, or start a new one (harness, without --continue or --resume)", e.Path, who)
}

// WriteError is a failure to get entries to disk. The entries are kept
// and written before the next one (see Log.Append).
type WriteError struct {
	Path string
	Op   string // "writing" or "repairing"
	Err  error
}

func (e *WriteError) Error() string {
	return fmt.Sprintf("%s session log %s (its entries are kept and written with the next one): %v", e.Op, e.Path, e.Err)
}

func (e *WriteError) Unwrap() error { return e.Err }

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

func newLog(f logFile, path string, secrets []string, size int64, opts []Option) *Log {
	var rs []string
	for _, s := range secrets {
		if len(s) >= 8 { // short strings would redact ordinary words
			rs = append(rs, s)
		}
	}
	l := &Log{f: f, path: path, redact: rs, now: time.Now, size: size}
	for _, o := range opts {
		o(l)
	}
	return l
}

// Option adjusts Create, CreateLazy and Append.
type Option func(*Log)

// WithClock stamps entries that carry no time of their own with now
// (default time.Now), so a session opened for a given clock logs its times.
func WithClock(now func() time.Time) Option {
	return func(l *Log) {
		if now != nil {
			l.now = now
		}
	}
}

// Path is the log's file path.
func (l *Log) Path() string { return l.path }

// Append writes e as one whole line and syncs it to disk, so a crash after
// Append returns never loses e. An error means the disk did not take it
// (full, failing): e is then kept, with whatever else is pending, and
// written before the next entry, so a caller that stops and lets the user
// free space loses nothing; a crash before that loses the pending entries
// but never leaves a partial line in front of later ones.
//
// A log from CreateLazy holds entries until the first message (lazy.go).
func (l *Log) Append(e Entry) error {
	if l == nil {
		return nil
	}
	if held, err := l.hold(e); held || err != nil {
		return err
	}
	return l.append(e)
}

func (l *Log) append(e Entry) error {
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

// write appends the encoded lines b after what is pending, first cutting
// off what a failed write left and recording that in a notice stamped t.
// l.mu is held.
func (l *Log) write(b []byte, t time.Time) error {
	var buf []byte
	if l.repair != "" {
		if err := l.f.Truncate(l.size); err != nil {
			l.pending = append(l.pending, b...)
			return &WriteError{Path: l.path, Op: "repairing", Err: err}
		}
		if l.size > 0 { // an empty file has no meta line yet to put a notice after
			text := RepairPrefix + l.repair
			if len(l.pending) > 0 {
				text += fmt.Sprintf("; the %d entries it held back follow", bytes.Count(l.pending, []byte{'\n'}))
			}
			rb, err := l.line(Entry{Type: TypeNotice, Time: t, Text: text})
			if err != nil {
				return err
			}
			buf = rb
		}
	}
	buf = append(append(buf, l.pending...), b...)
	if len(buf) == 0 {
		return nil
	}
	n, err := l.f.Write(buf)
	if err == nil {
		err = l.f.Sync()
	}
	if err != nil {
		l.pending = append(l.pending, b...)
		if l.repair == "" {
			l.repair = fmt.Sprintf("a write failed (%v) after %d of %d bytes; they were removed", err, n, len(buf))
		}
		// Cut now, so a crash before the next Append leaves no partial
		// line either; if this fails, the next Append tries again.
		_ = l.f.Truncate(l.size)
		return &WriteError{Path: l.path, Op: "writing", Err: err}
	}
	l.size += int64(len(buf))
	l.pending, l.repair = nil, ""
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

// Close writes what is pending and closes the file; it reports entries
// that could not be written.
func (l *Log) Close() error {
	if l == nil || !l.opened() {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var err error
	if l.repair != "" {
		err = l.write(nil, l.now().UTC())
	}
	return errors.Join(err, l.f.Close())
}

// ErrTornLine reports a last line cut short by a crash; the entries before
// it are intact.
var ErrTornLine = errors.New("the last line of the session log was cut short (harness was killed mid-write); it was skipped")

// DamagedError reports lines in the middle of a log that are not entries
// (a disk error, an edit by hand, another program): they are skipped, and
// the entries around them are read. Path is set by ReadFile.
type DamagedError struct {
	Path  string
	Lines []int // 1-based
	Err   error // why the first one could not be read
	Torn  bool  // the last line was torn too
}

func (e *DamagedError) Error() string {
	where := "session log"
	if e.Path != "" {
		where += " " + e.Path
	}
	lines := make([]string, len(e.Lines))
	for i, n := range e.Lines {
		lines[i] = strconv.Itoa(n)
	}
	msg := fmt.Sprintf("%s: line %s could not be read (%v); the session goes on from the other entries", where, strings.Join(lines, ", "), e.Err)
	if len(e.Lines) > 1 {
		msg = strings.Replace(msg, ": line ", ": lines ", 1)
	}
	if e.Torn {
		msg += "; its torn last line was skipped too"
	}
	return msg
}

// Is makes a damaged log with a torn last line ErrTornLine as well.
func (e *DamagedError) Is(target error) bool { return target == ErrTornLine && e.Torn }

// Readable reports whether err from Read or ReadFile still came with the
// log's good entries: none, a torn last line, or damaged lines.
func Readable(err error) bool {
	var d *DamagedError
	return err == nil || errors.Is(err, ErrTornLine) || errors.As(err, &d)
}

// Read parses a log. A torn last line is skipped and reported with
// ErrTornLine alongside the good entries; damaged lines elsewhere are
// skipped too and reported with a *DamagedError naming them. Either way
// the entries that could be read are returned: nothing good is hidden by
// one bad line. Other errors are read errors.
func Read(r io.Reader) ([]Entry, error) {
	var out []Entry
	var dmg *DamagedError
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			complete := line[len(line)-1] == '\n'
			var e Entry
			if jerr := json.Unmarshal(bytes.TrimSpace(line), &e); jerr != nil || !complete {
				if !complete || isLast(br) {
					if dmg != nil {
						dmg.Torn = true
						return out, dmg
					}
					return out, ErrTornLine
				}
				if dmg == nil {
					dmg = &DamagedError{Err: jerr}
				}
				dmg.Lines = append(dmg.Lines, n)
				continue
			}
			out = append(out, e)
		}
		if errors.Is(err, io.EOF) {
			if dmg != nil {
				return out, dmg
			}
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

// ReadFile is Read on a path; a DamagedError names it.
func ReadFile(path string) ([]Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening session log: %w", err)
	}
	defer f.Close()
	entries, err := Read(f)
	var d *DamagedError
	if errors.As(err, &d) {
		d.Path = path
	}
	return entries, err
}
