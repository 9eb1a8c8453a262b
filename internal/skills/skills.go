package skills

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"gopkg.in/yaml.v3"

	"github.com/harness-dev/harness/internal/termsafe"
)

// FileName is the name of a skill's file inside its directory.
const FileName = "SKILL.md"

// Scopes say where a skill was found.
const (
	ScopeProject = "project"
	ScopeUser    = "user"
)

// maxDescription bounds what one skill adds to every request's prefix.
const maxDescription = 1024

// Skill is one discovered skill.
type Skill struct {
	Name        string
	Description string
	Path        string // absolute path of the SKILL.md
	Scope       string // ScopeProject or ScopeUser
	open        Opener // how it was read (nil: OpenRegular)
}

// FrontMatter is the YAML header of a SKILL.md.
type FrontMatter struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
}

// ErrNoFrontMatter reports a SKILL.md that does not start with a "---" line.
var ErrNoFrontMatter = errors.New("no YAML front matter: the file must start with a line \"---\", then name: and description:, then \"---\"")

// Parse splits a SKILL.md into its front matter and body.
func Parse(data []byte) (FrontMatter, string, error) {
	var fm FrontMatter
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	if !strings.HasPrefix(text, "---\n") {
		return fm, text, ErrNoFrontMatter
	}
	rest := text[len("---\n"):]
	end := -1
	if strings.HasPrefix(rest, "---\n") || rest == "---" {
		end = 0
	} else if i := strings.Index(rest, "\n---\n"); i >= 0 {
		end = i + 1
	} else if strings.HasSuffix(rest, "\n---") {
		end = len(rest) - 3
	}
	if end < 0 {
		return fm, text, errors.New("the front matter is not closed: add a line \"---\" after it")
	}
	if err := yaml.Unmarshal([]byte(rest[:end]), &fm); err != nil {
		return fm, text, fmt.Errorf("the front matter is not valid YAML: %w", err)
	}
	body := strings.TrimPrefix(rest[end:], "---")
	body = strings.TrimPrefix(body, "\n")
	fm.Name = strings.TrimSpace(fm.Name)
	fm.Description = strings.Join(strings.Fields(fm.Description), " ")
	return fm, body, nil
}

// Set is the skills of one session, sorted by name so the prompt listing is
// byte-stable.
type Set struct {
	skills []Skill
}

// NewSet returns a set of the given skills; on a name clash the earlier
// one wins.
func NewSet(list ...Skill) *Set {
	s := &Set{}
	seen := map[string]bool{}
	for _, sk := range list {
		if seen[sk.Name] {
			continue
		}
		seen[sk.Name] = true
		s.skills = append(s.skills, sk)
	}
	sort.Slice(s.skills, func(i, j int) bool { return s.skills[i].Name < s.skills[j].Name })
	return s
}

// Discover finds the skills of a project and of the user whose home is
// home (either may be ""). A SKILL.md that cannot be used is skipped and
// reported in the returned warnings; a missing skills directory is not a
// problem.
//
// Files are read through open (nil means OpenRegular): a session passes
// its sandbox policy's, which refuses secrets and anything but a regular
// file after resolving links, so a SKILL.md that links to a credential is
// skipped with a warning.
func Discover(project, home string, open Opener) (*Set, []error) {
	if open == nil {
		open = OpenRegular
	}
	var found []Skill
	var warns []error
	if project != "" {
		s, w := scan(open, filepath.Join(project, ".agents", "skills"), ScopeProject)
		found, warns = append(found, s...), append(warns, w...)
	}
	if home != "" {
		s, w := scan(open, filepath.Join(home, ".agents", "skills"), ScopeUser)
		found, warns = append(found, s...), append(warns, w...)
	}
	return NewSet(found...), warns // project entries come first, so they win
}

// scan reads dir/*/SKILL.md.
func scan(open Opener, dir, scope string) ([]Skill, []error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, []error{fmt.Errorf("skills: reading %s: %w", dir, err)}
	}
	var out []Skill
	var warns []error
	for _, e := range ents { // ReadDir sorts by name
		if fi, err := os.Stat(filepath.Join(dir, e.Name())); err != nil || !fi.IsDir() {
			continue // a stray file, or a broken link
		}
		path := filepath.Join(dir, e.Name(), FileName)
		data, err := readAll(open, path)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				warns = append(warns, fmt.Errorf("skills: %s: %w", path, err))
			}
			continue
		}
		fm, _, err := Parse(data)
		if err != nil {
			warns = append(warns, fmt.Errorf("skills: %s skipped: %w", termsafe.Line(path), err))
			continue
		}
		if fm.Name == "" {
			fm.Name = e.Name()
		}
		if fm.Description == "" {
			warns = append(warns, fmt.Errorf("skills: %s skipped: it has no description; add description: to its front matter saying when to use it", termsafe.Line(path)))
			continue
		}
		if len(fm.Description) > maxDescription {
			fm.Description = fm.Description[:maxDescription] + "…"
		}
		// What a skill says of itself reaches the terminal (/skills) and
		// every request: no control characters in either.
		fm.Name, fm.Description = termsafe.Line(fm.Name), termsafe.Line(fm.Description)
		out = append(out, Skill{Name: fm.Name, Description: fm.Description, Path: path, Scope: scope, open: open})
	}
	return out, warns
}

// List returns the skills sorted by name.
func (s *Set) List() []Skill {
	if s == nil {
		return nil
	}
	return append([]Skill(nil), s.skills...)
}

// Names returns the skill names, sorted.
func (s *Set) Names() []string {
	var out []string
	for _, sk := range s.List() {
		out = append(out, sk.Name)
	}
	return out
}

// Lookup returns the skill of that name.
func (s *Set) Lookup(name string) (Skill, bool) {
	for _, sk := range s.List() {
		if sk.Name == name {
			return sk, true
		}
	}
	return Skill{}, false
}

// Prompt lists the skills for the system prompt, one "- name: description"
// line each; "" when there are none.
func (s *Set) Prompt() string {
	var sb strings.Builder
	for _, sk := range s.List() {
		fmt.Fprintf(&sb, "- %s: %s\n", sk.Name, sk.Description)
	}
	return sb.String()
}

// Read returns the whole SKILL.md of a skill, through the Opener it was
// found with (checked again: the file may have changed since).
func (sk Skill) Read() (string, error) {
	open := sk.open
	if open == nil {
		open = OpenRegular
	}
	data, err := readAll(open, sk.Path)
	if err != nil {
		return "", fmt.Errorf("reading skill %s: %w", sk.Name, err)
	}
	return string(data), nil
}

// Opener opens a file for reading (see Discover).
type Opener func(path string) (*os.File, error)

// maxSkillBytes bounds one SKILL.md.
const maxSkillBytes = 256 << 10

// OpenRegular is the Opener without a policy: regular files only, opened
// without blocking.
func OpenRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return f, nil
}

func readAll(open Opener, path string) ([]byte, error) {
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSkillBytes+1))
	if err == nil && len(data) > maxSkillBytes {
		return nil, fmt.Errorf("%s is over %d KB", path, maxSkillBytes>>10)
	}
	return data, err
}
