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
	Source  string // the settings file
	// Project is set for a hook from a project file: code the agent could
	// have written. It runs inside the walls, and only once the user
	// approved this exact definition (Hash).
	Project bool
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

// LoadHooks reads the hooks of every file; a missing file has none. User
// files are opened directly, project files through open (the sandbox
// policy's). A --settings file that is missing is an error, as is a file
// that is not valid JSON; hooks harness cannot run are skipped with a
// warning.
func LoadHooks(files SettingsFiles, open Opener, required []string) ([]Hook, []error) {
	var out []Hook
	var warns []error
	must := map[string]bool{}
	for _, f := range required {
		must[f] = true
	}
	load := func(path string, project bool) {
		opener := os.Open
		if project && open != nil {
			opener = open
		}
		hs, err := loadFile(path, opener, project)
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

func loadFile(path string, open Opener, project bool) ([]Hook, error) {
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("settings %s: %w", path, err)
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
				out = append(out, Hook{Event: event, Matcher: m.Matcher, Command: h.Command, Timeout: t, Source: path, Project: project})
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
