package sessionlog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/harness-dev/harness/internal/llm"
)

// Summary describes one session for listing.
type Summary struct {
	ID       string
	Path     string
	Project  string
	Model    string
	Provider string
	Start    time.Time // the meta line's time
	Updated  time.Time // the last entry's time
	Used     time.Time // the main agent's last message's time, or its last resume: when the session was last used
	Title    string    // the first line of the first user message
	Steps    int       // replies of the main agent's model
	Messages int       // stored messages of the main agent
	Usage    llm.Usage // every request: main agent, sub-agents, compaction
	Torn     bool      // the last line was cut short by a crash
	Damaged  []int     // lines in the middle that could not be read (skipped)
}

// Started reports whether the session ever got a reply from the model:
// one whose first request failed (a wrong URL, no key) holds a prompt
// and nothing else, and is no conversation to go back to.
func (s Summary) Started() bool { return s.Steps > 0 }

// titleRunes bounds a listed title.
const titleRunes = 60

// Summarize condenses a session's entries. path may be "".
func Summarize(path string, entries []Entry) Summary {
	s := Summary{Path: path}
	for _, e := range entries {
		if s.Start.IsZero() {
			s.Start = e.Time
		}
		if e.Time.After(s.Updated) {
			s.Updated = e.Time
		}
		switch e.Type {
		case TypeMeta:
			if e.Meta != nil && s.ID == "" {
				s.ID, s.Project, s.Model, s.Provider = e.Meta.ID, e.Meta.Project, e.Meta.Model, e.Meta.Provider
			}
		case TypeResumed:
			if e.Agent == "" && e.Time.After(s.Used) {
				s.Used = e.Time
			}
		case TypeUsage:
			if e.Usage != nil {
				s.Usage = s.Usage.Add(*e.Usage)
			}
		case TypeMessage:
			if e.Agent != "" || e.Message == nil {
				continue
			}
			s.Messages++
			if e.Time.After(s.Used) {
				s.Used = e.Time
			}
			switch e.Message.Role {
			case llm.RoleAssistant:
				s.Steps++
			case llm.RoleUser:
				if s.Title == "" {
					s.Title = title(e.Message.PlainText())
				}
			}
		}
	}
	if s.ID == "" && path != "" {
		s.ID = idFromName(filepath.Base(path))
	}
	return s
}

func title(text string) string {
	text = strings.TrimSpace(text)
	if i := strings.IndexByte(text, '\n'); i >= 0 {
		text = strings.TrimSpace(text[:i]) + " …"
	}
	if utf8.RuneCountInString(text) > titleRunes {
		r := []rune(text)
		text = string(r[:titleRunes-1]) + "…"
	}
	return text
}

// idFromName extracts the id from a FileName.
func idFromName(name string) string {
	name = strings.TrimSuffix(name, ".jsonl")
	if i := strings.IndexByte(name, '-'); i >= 0 {
		return name[i+1:]
	}
	return name
}

// logNames returns the session logs in dir, newest first (FileName sorts
// by start time).
func logNames(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing sessions in %s: %w", dir, err)
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".jsonl") {
			out = append(out, e.Name())
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(out)))
	return out, nil
}

// List summarises every session in dir (one project's, see Dir), newest
// first. A log that cannot be read at all is left out and reported in the
// warnings; one with damaged lines is listed from its good entries and
// reported in the warnings too (with its path and lines); a torn last line
// is not a warning (Summary.Torn says it).
func List(dir string) ([]Summary, []error) {
	names, err := logNames(dir)
	if err != nil {
		return nil, []error{err}
	}
	var out []Summary
	var warns []error
	for _, n := range names {
		path := filepath.Join(dir, n)
		entries, err := ReadFile(path)
		torn := errors.Is(err, ErrTornLine)
		var dmg *DamagedError
		switch {
		case errors.As(err, &dmg):
			warns = append(warns, err)
		case err != nil && !torn:
			warns = append(warns, fmt.Errorf("%s: %w", path, err))
			continue
		}
		if len(entries) == 0 {
			continue // killed before its first line: nothing to resume
		}
		if entries[0].Meta == nil {
			if dmg == nil {
				warns = append(warns, fmt.Errorf("%s: not a harness session log (its first line is not the session's header)", path))
			}
			continue
		}
		s := Summarize(path, entries)
		s.Torn = torn
		if dmg != nil {
			s.Damaged = dmg.Lines
		}
		out = append(out, s)
	}
	newestFirst(out)
	return out, warns
}

// newestFirst sorts by start time (file names only have seconds), then
// by file name.
func newestFirst(list []Summary) {
	sort.SliceStable(list, func(i, j int) bool {
		if !list[i].Start.Equal(list[j].Start) {
			return list[i].Start.After(list[j].Start)
		}
		return filepath.Base(list[i].Path) > filepath.Base(list[j].Path)
	})
}

// ListAll summarises the sessions of every project under root (see Root),
// newest first.
func ListAll(root string) ([]Summary, []error) {
	ents, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []error{fmt.Errorf("listing sessions in %s: %w", root, err)}
	}
	var out []Summary
	var warns []error
	for _, e := range ents {
		if e.IsDir() {
			s, w := List(filepath.Join(root, e.Name()))
			out, warns = append(out, s...), append(warns, w...)
		}
	}
	newestFirst(out)
	return out, warns
}

// Find returns the log of the session whose id is id, or starts with id
// when that is unambiguous; with id "" the most recently used session in
// dir (see Latest).
func Find(dir, id string) (string, error) {
	if id == "" {
		return Latest(dir)
	}
	names, err := logNames(dir)
	if err != nil {
		return "", err
	}
	var matches []string
	for _, n := range names {
		nid := idFromName(n)
		if nid == id {
			return filepath.Join(dir, n), nil
		}
		if strings.HasPrefix(nid, id) {
			matches = append(matches, n)
		}
	}
	switch len(matches) {
	case 0:
		return "", fmt.Errorf("no session %q in this project; list them with harness sessions", id)
	case 1:
		return filepath.Join(dir, matches[0]), nil
	}
	var ids []string
	for _, m := range matches {
		ids = append(ids, idFromName(m))
	}
	return "", fmt.Errorf("%q matches %d sessions (%s); give more of the id", id, len(matches), strings.Join(ids, ", "))
}

// ErrNoSession is returned by Latest when dir holds no session with a
// message.
var ErrNoSession = errors.New("no session in this project yet; start one with harness")

// Latest returns the log of the session in dir used last (its last
// message, or its last resume, is the newest): the conversation the user
// was last in, not the last one opened.
// Sessions that never got a reply (opened and left, cleared at once, or
// a first request that failed) are skipped; ties go to the later start.
func Latest(dir string) (string, error) {
	list, warns := List(dir)
	var best *Summary
	for i := range list {
		s := &list[i]
		if !s.Started() {
			continue
		}
		if best == nil || s.Used.After(best.Used) {
			best = s // list is newest first, so a tie keeps the later start
		}
	}
	if best == nil {
		if len(warns) > 0 {
			// Say which logs could not be read rather than that there
			// are none.
			return "", fmt.Errorf("%w; but %w", ErrNoSession, errors.Join(warns...))
		}
		return "", ErrNoSession
	}
	return best.Path, nil
}

// LastTodos returns the main agent's latest todo list as logged, or nil
// when it never wrote one.
func LastTodos(entries []Entry) []byte {
	var last []byte
	for _, e := range entries {
		if e.Type == TypeTodos && e.Agent == "" {
			last = e.Todos
		}
	}
	return last
}

// InterruptedNote is the result given, on resume, to a tool call the log
// shows started but never finished.
const InterruptedNote = "not finished: harness stopped (killed or crashed) while this call was running, so its result was lost. " +
	"Any effects it had may or may not have happened: check before running it again."

// Unanswered returns the tool results that close the main agent's last
// message when it is an assistant message whose tool calls never got
// results (harness died while running them), or nil. Appending it keeps
// every tool_use paired with a tool_result, which providers require.
func Unanswered(entries []Entry) *llm.Message {
	var last *llm.Message
	for _, e := range entries {
		if e.Type == TypeMessage && e.Agent == "" && e.Message != nil {
			last = e.Message
		}
	}
	if last == nil || last.Role != llm.RoleAssistant {
		return nil
	}
	calls := last.ToolCalls()
	if len(calls) == 0 {
		return nil
	}
	m := &llm.Message{Role: llm.RoleUser}
	for _, c := range calls {
		m.Blocks = append(m.Blocks, llm.Block{Type: llm.BlockToolResult, ToolUseID: c.ID, Content: InterruptedNote, IsError: true})
	}
	return m
}
