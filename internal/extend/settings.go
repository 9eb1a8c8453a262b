package extend

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// The events harness fires, by Claude Code's names.
const (
	PreToolUse       = "PreToolUse"
	PostToolUse      = "PostToolUse"
	UserPromptSubmit = "UserPromptSubmit"
	Stop             = "Stop"
	SubagentStop     = "SubagentStop"
	SessionStart     = "SessionStart"
	SessionEnd       = "SessionEnd"
	PreCompact       = "PreCompact"
	Notification     = "Notification"
)

// Events are the events harness fires, in the order /help lists them.
var Events = []string{SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Notification, Stop, SubagentStop, PreCompact, SessionEnd}

func knownEvent(e string) bool {
	for _, k := range Events {
		if k == e {
			return true
		}
	}
	return false
}

// DefaultHookTimeout is Claude Code's: a hook without a timeout gets 60 s.
const DefaultHookTimeout = 60 * time.Second

// Hook is one command hook from a settings file.
type Hook struct {
	Event   string
	Matcher string
	Command string
	Timeout time.Duration
	Source  string // the settings file, as named
	Real    string // the settings file's real path, as opened
	// Project is set for a hook the agent could have planted: from a
	// project file, from a user's file that lies where commands write, or
	// one that runs a file commands can write (Scripts). It runs inside
	// the walls, and only once the user approved this definition and the
	// content of those files (Key).
	Project bool
	// Why says, for the user, why it needs an approval.
	Why string
	// Scripts are the files the command names that commands can write,
	// with their content's digest when the hook was last looked at.
	Scripts []Pin
}

// Pin is one file a hook's command names, and its content's digest
// (sha256), or "absent" / "not a regular file".
type Pin struct {
	Path, Sum string
}

// Key identifies what an approval is for: the definition (Hash) and the
// content of every file it runs that commands can write. A hook naming
// no such file has its definition's hash.
func (h Hook) Key() string {
	if len(h.Scripts) == 0 {
		return h.Hash()
	}
	d := sha256.New()
	d.Write([]byte(h.Hash()))
	for _, p := range h.Scripts {
		d.Write([]byte("\x00" + p.Path + "\x00" + p.Sum))
	}
	return hex.EncodeToString(d.Sum(nil))
}

// Hash identifies the definition: the file, event, matcher, command and
// timeout. Any change to one of them is a new definition, approved anew.
func (h Hook) Hash() string {
	sum := sha256.Sum256([]byte(h.Source + "\x00" + h.Event + "\x00" + h.Matcher + "\x00" + h.Command + "\x00" + strconv.FormatInt(int64(h.Timeout), 10)))
	return hex.EncodeToString(sum[:])
}

// Where says where the hook came from, for /help.
func (h Hook) Where() string {
	if h.Project {
		return "project: " + h.Source
	}
	return "user: " + h.Source
}

// settingsFile is the part of Claude Code's settings JSON harness reads.
type settingsFile struct {
	Hooks map[string][]struct {
		Matcher string `json:"matcher"`
		Hooks   []struct {
			Type    string   `json:"type"`
			Command string   `json:"command"`
			Timeout *float64 `json:"timeout"`
		} `json:"hooks"`
	} `json:"hooks"`
}

// SettingsFiles are where hooks are read from: the user's files (trusted:
// ~/.agents/settings.json, ~/.claude/settings.json, then every --settings
// FILE) and the project's (.agents/settings.json, .claude/settings.json,
// .claude/settings.local.json).
type SettingsFiles struct {
	User    []string
	Project []string
}

// DefaultSettingsFiles are the settings files of a project and a user,
// with the --settings files given.
func DefaultSettingsFiles(project, home string, flags []string) SettingsFiles {
	var s SettingsFiles
	if home != "" {
		s.User = append(s.User, filepath.Join(home, ".agents", "settings.json"), filepath.Join(home, ".claude", "settings.json"))
	}
	s.User = append(s.User, flags...)
	if project != "" {
		s.Project = append(s.Project, filepath.Join(project, ".agents", "settings.json"),
			filepath.Join(project, ".claude", "settings.json"), filepath.Join(project, ".claude", "settings.local.json"))
	}
	return s
}

// Reader reads the files that grant power (settings, approvals): once,
// by descriptor, each with its real path and whether commands could have
// written it. A session's reads through its sandbox policy.
type Reader struct {
	// Open opens a file and returns it with its real path, read from the
	// opened descriptor (walls.Policy.OpenRead: links resolved, secrets
	// and what is not a regular file refused). Nil opens with os.Open and
	// resolves the path's links.
	Open func(path string) (*os.File, string, error)
	// Reach reports whether a real path lies where commands write
	// (walls.Policy.Reachable: the project, --add-dir roots, the build
	// cache, carve-outs included). Nil: nowhere.
	Reach func(real string) bool
}

// ReadFile reads path once, at most limit bytes, and says where it really
// is and whether commands can reach it there.
func (r Reader) ReadFile(path string, limit int64) (data []byte, real string, reach bool, err error) {
	var f *os.File
	if r.Open != nil {
		f, real, err = r.Open(path)
	} else {
		f, err = os.Open(path)
		if err == nil {
			if real, err = filepath.EvalSymlinks(path); err != nil {
				f.Close()
			}
		}
	}
	if err != nil {
		return nil, real, false, err
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, real, false, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, real, false, fmt.Errorf("%s is over %d bytes", path, limit)
	}
	return data, real, r.reach(real), nil
}

func (r Reader) reach(real string) bool { return r.Reach != nil && r.Reach(real) }

// maxSettingsBytes bounds one settings file.
const maxSettingsBytes = 1 << 20

// LoadHooks reads the hooks of every file, once; a missing file has none.
// Each file is opened by descriptor and judged by where it really is: a
// user's file (~/.claude/settings.json, a --settings FILE) that lies where
// commands write — named there, or a link that resolves there — is the
// project's, and its hooks are project hooks (Hook.Project, Hook.Why). A
// --settings file that is missing is an error, as is a file that is not
// valid JSON; hooks harness cannot run are skipped with a warning.
func LoadHooks(files SettingsFiles, r Reader, required []string) ([]Hook, []error) {
	var out []Hook
	var warns []error
	must := map[string]bool{}
	for _, f := range required {
		must[f] = true
	}
	load := func(path string, project bool) {
		hs, err := loadFile(path, r, project)
		if errors.Is(err, fs.ErrNotExist) && !must[path] {
			return
		}
		if err != nil {
			warns = append(warns, err)
		}
		out = append(out, hs...)
	}
	for _, f := range files.User {
		load(f, false)
	}
	for _, f := range files.Project {
		load(f, true)
	}
	return out, warns
}

func loadFile(path string, r Reader, project bool) ([]Hook, error) {
	data, real, reach, err := r.ReadFile(path, maxSettingsBytes)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("settings %s: %w", path, err)
	}
	why := ""
	switch {
	case project:
		why = path + " is a project file, which the agent or a clone could have written"
	case reach && real == path:
		project, why = true, path+" lies where commands can write it; move it out of the project to make its hooks yours"
	case reach:
		project, why = true, path+" resolves to "+real+", where commands can write it; make it a file outside the project to make its hooks yours"
	}
	var sf settingsFile
	if err := json.Unmarshal(data, &sf); err != nil {
		return nil, fmt.Errorf("settings %s: not valid JSON: %w", path, err)
	}
	var out []Hook
	var errs []error
	for _, event := range sortedKeys(sf.Hooks) {
		if !knownEvent(event) {
			errs = append(errs, fmt.Errorf("settings %s: harness does not fire %s; those hooks are ignored (it fires %v)", path, event, Events))
			continue
		}
		for _, m := range sf.Hooks[event] {
			for _, h := range m.Hooks {
				if h.Type != "command" {
					errs = append(errs, fmt.Errorf("settings %s: a %s hook of type %q is ignored: harness runs command hooks only", path, event, h.Type))
					continue
				}
				if h.Command == "" {
					continue
				}
				t := DefaultHookTimeout
				if h.Timeout != nil && *h.Timeout > 0 {
					t = time.Duration(*h.Timeout * float64(time.Second))
				}
				out = append(out, Hook{Event: event, Matcher: m.Matcher, Command: h.Command, Timeout: t, Source: path, Real: real, Project: project, Why: why})
			}
		}
	}
	return out, errors.Join(errs...)
}

func sortedKeys[V any](m map[string]V) []string {
	var ks []string
	for _, e := range Events { // harness's order, then nothing else
		if _, ok := m[e]; ok {
			ks = append(ks, e)
		}
	}
	for k := range m {
		if !knownEvent(k) {
			ks = append(ks, k)
		}
	}
	return ks
}
