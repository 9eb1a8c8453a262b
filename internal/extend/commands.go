package extend

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"gopkg.in/yaml.v3"

	"github.com/harness-dev/harness/internal/termsafe"
)

// Opener opens a file harness feeds the model; a session's is its sandbox
// policy's OpenRead (links resolved, secrets refused, regular files only).
type Opener func(path string) (*os.File, error)

// maxCommandBytes bounds one command file.
const maxCommandBytes = 256 << 10

// Command is one custom slash command.
type Command struct {
	Name         string   // without the slash; subdirectories joined by ':'
	Description  string   // frontmatter description, else the first line of the body
	ArgumentHint string   // frontmatter argument-hint
	AllowedTools []string // frontmatter allowed-tools, as written (shown, see doc.go)
	Model        string   // frontmatter model, as written (shown, see doc.go)
	Body         string   // the prompt template
	Path         string   // the file it came from
	Scope        string   // "project" or "user"
	// Fetch, set, gives the prompt instead of Body: a command another
	// program offers (an MCP server's prompt, asked for when it is run).
	Fetch  func(ctx context.Context, args string) (string, error)
	gemini bool   // a Gemini CLI .toml: {{args}}, else the command is appended
	agents bool   // from a .agents directory (read-only to the agent in a project)
	alias  string // Claude Code's name for a namespaced command: the file's base name
	// reached: the file resolves where commands can write (see Distrust).
	reached bool
}

// Distrust marks the commands whose file the agent could have written
// although its place says otherwise: a user's command that resolves into
// a writable root (reach), a project's .agents command that is a link to
// a file commands can write (canWrite). Their allowed-tools then wait for
// the user's approval, as a .claude command's do.
func (cs *Commands) Distrust(reach, canWrite func(path string) bool) {
	if cs == nil {
		return
	}
	for i, c := range cs.list {
		switch {
		case c.Scope == "user" && reach != nil && reach(c.Path):
			cs.list[i].reached = true
		case c.Scope == "project" && c.agents && canWrite != nil && canWrite(c.Path):
			cs.list[i].reached = true
		}
	}
}

// Where says where the command came from, for /help.
func (c Command) Where() string { return c.Scope + ": " + c.Path }

// commandDir is one place commands are read from.
type commandDir struct {
	dir    string
	agents bool
	scope  string
	gemini bool
	claude bool
}

func commandDirs(project, home string) []commandDir {
	var out []commandDir
	if project != "" {
		out = append(out,
			commandDir{dir: filepath.Join(project, ".agents", "commands"), scope: "project", agents: true},
			commandDir{dir: filepath.Join(project, ".claude", "commands"), scope: "project", claude: true},
			commandDir{dir: filepath.Join(project, ".gemini", "commands"), scope: "project", gemini: true})
	}
	if home != "" {
		out = append(out,
			commandDir{dir: filepath.Join(home, ".agents", "commands"), scope: "user", agents: true},
			commandDir{dir: filepath.Join(home, ".claude", "commands"), scope: "user", claude: true},
			commandDir{dir: filepath.Join(home, ".gemini", "commands"), scope: "user", gemini: true})
	}
	return out
}

// Commands is a session's custom commands, sorted by name.
type Commands struct {
	list    []Command
	byName  map[string]int
	dynamic func() []Command // SetDynamic's
}

// SetDynamic adds commands that are listed anew whenever asked (an MCP
// server's prompts change during a session): List gives them after the
// files' commands, and a file's command of the same name wins.
func (cs *Commands) SetDynamic(f func() []Command) {
	if cs != nil {
		cs.dynamic = f
	}
}

func (cs *Commands) dynamicList() []Command {
	if cs == nil || cs.dynamic == nil {
		return nil
	}
	var out []Command
	for _, c := range cs.dynamic() {
		if _, taken := cs.byName[c.Name]; !taken {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// DiscoverCommands finds the commands of a project and of the user: first
// the project's .agents/commands, .claude/commands and .gemini/commands,
// then the same under home; on a name clash the first wins, so a project
// overrides a personal habit (as Claude Code and Gemini CLI do). A file
// that cannot be used is skipped and reported.
func DiscoverCommands(project, home string, open Opener, reserved map[string]bool) (*Commands, []error) {
	cs := &Commands{byName: map[string]int{}}
	var warns []error
	var found []Command
	for _, d := range commandDirs(project, home) {
		found2, w := scanCommands(d, open)
		found, warns = append(found, found2...), append(warns, w...)
	}
	seen := map[string]bool{}
	for _, c := range found {
		if reserved[c.Name] {
			warns = append(warns, fmt.Errorf("%s: /%s is a built-in command; the file is ignored", c.Path, c.Name))
			continue
		}
		if seen[c.Name] {
			continue
		}
		seen[c.Name] = true
		cs.list = append(cs.list, c)
	}
	sort.Slice(cs.list, func(i, j int) bool { return cs.list[i].Name < cs.list[j].Name })
	for i, c := range cs.list {
		cs.byName[c.Name] = i
	}
	// Claude Code calls .claude/commands/frontend/component.md /component;
	// that name works too where nothing else has it.
	for i, c := range cs.list {
		if _, taken := cs.byName[c.alias]; c.alias != "" && !taken && !reserved[c.alias] {
			cs.byName[c.alias] = i
		}
	}
	return cs, warns
}

func scanCommands(d commandDir, open Opener) ([]Command, []error) {
	ext := ".md"
	if d.gemini {
		ext = ".toml"
	}
	var out []Command
	var warns []error
	// WalkDir does not follow links to directories beneath the root.
	err := filepath.WalkDir(d.dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path == d.dir {
				return fs.SkipDir
			}
			warns = append(warns, err)
			return nil
		}
		if e.IsDir() || !strings.HasSuffix(e.Name(), ext) {
			return nil
		}
		rel, _ := filepath.Rel(d.dir, path)
		name := strings.ReplaceAll(filepath.ToSlash(strings.TrimSuffix(rel, ext)), "/", ":")
		if termsafe.Line(name) != name {
			warns = append(warns, fmt.Errorf("command %s: its name has control characters, so it cannot be typed safely; skipped (rename the file)", termsafe.Line(path)))
			return nil
		}
		c, err := readCommand(path, open, d.gemini)
		if err != nil {
			warns = append(warns, fmt.Errorf("command %s: %w", termsafe.Line(path), err))
			return nil
		}
		c.shown()
		c.Name, c.Path, c.Scope, c.agents = name, path, d.scope, d.agents
		if d.claude && strings.Contains(name, ":") {
			c.alias = name[strings.LastIndex(name, ":")+1:]
		}
		out = append(out, c)
		return nil
	})
	if err != nil {
		warns = append(warns, err)
	}
	return out, warns
}

// shown sanitises what a command file says about itself: its front
// matter reaches the terminal in menus and /help, and a description, hint
// or model name has no business moving the cursor or setting the title.
func (c *Command) shown() {
	c.Description = termsafe.Line(c.Description)
	c.ArgumentHint = termsafe.Line(c.ArgumentHint)
	c.Model = termsafe.Line(c.Model)
	for i, t := range c.AllowedTools {
		c.AllowedTools[i] = termsafe.Line(t)
	}
}

func readCommand(path string, open Opener, gemini bool) (Command, error) {
	if open == nil {
		open = os.Open
	}
	f, err := open(path)
	if err != nil {
		return Command{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxCommandBytes+1))
	if err != nil {
		return Command{}, err
	}
	if len(data) > maxCommandBytes {
		return Command{}, fmt.Errorf("larger than %d KB", maxCommandBytes>>10)
	}
	if gemini {
		return parseGemini(data)
	}
	return parseMarkdown(data)
}

// parseGemini reads Gemini CLI's command format: prompt (required) and
// description.
func parseGemini(data []byte) (Command, error) {
	var v struct {
		Prompt      string `toml:"prompt"`
		Description string `toml:"description"`
	}
	if err := toml.Unmarshal(data, &v); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return Command{}, fmt.Errorf("not valid TOML: line %d, column %d: %w", row, col, err)
		}
		return Command{}, fmt.Errorf("not valid TOML: %w", err)
	}
	if strings.TrimSpace(v.Prompt) == "" {
		return Command{}, errors.New("no prompt = \"...\" in the file")
	}
	return Command{Body: v.Prompt, Description: oneLine(v.Description), gemini: true}, nil
}

// parseMarkdown reads Claude Code's command format: optional YAML front
// matter (description, argument-hint, allowed-tools, model), then the body.
func parseMarkdown(data []byte) (Command, error) {
	text := strings.ReplaceAll(string(bytes.TrimPrefix(data, []byte("\ufeff"))), "\r\n", "\n")
	var c Command
	if rest, ok := strings.CutPrefix(text, "---\n"); ok {
		var head string
		if after, ok := strings.CutPrefix(rest, "---"); ok {
			rest = after // empty front matter
		} else if i := strings.Index(rest, "\n---"); i >= 0 {
			head, rest = rest[:i], rest[i+len("\n---"):]
		} else {
			return c, errors.New("the front matter is not closed: add a line \"---\" after it")
		}
		var fm struct {
			Description  string    `yaml:"description"`
			ArgumentHint yaml.Node `yaml:"argument-hint"`
			AllowedTools yaml.Node `yaml:"allowed-tools"`
			Model        string    `yaml:"model"`
		}
		if err := yaml.Unmarshal([]byte(head), &fm); err == nil {
			c.Description, c.Model = oneLine(fm.Description), fm.Model
			c.ArgumentHint = nodeText(fm.ArgumentHint)
			c.AllowedTools = nodeList(fm.AllowedTools)
		} else {
			// Claude Code reads "argument-hint: [pr] [priority]", which is
			// not YAML, as the text it says: so do we, one key a line.
			for _, l := range strings.Split(head, "\n") {
				k, v, ok := strings.Cut(l, ":")
				if !ok {
					continue
				}
				v = strings.Trim(strings.TrimSpace(v), `"'`)
				switch strings.TrimSpace(k) {
				case "description":
					c.Description = oneLine(v)
				case "argument-hint":
					c.ArgumentHint = v
				case "allowed-tools":
					c.AllowedTools = nodeList(yaml.Node{Value: v})
				case "model":
					c.Model = v
				}
			}
		}
		text = strings.TrimPrefix(rest, "\n")
	}
	c.Body = text
	if c.Description == "" {
		for _, l := range strings.Split(text, "\n") {
			if l = strings.TrimSpace(strings.TrimLeft(l, "# ")); l != "" {
				c.Description = clip(l, 80)
				break
			}
		}
	}
	return c, nil
}

// nodeText is a scalar, or a sequence joined by spaces (argument-hint is
// often written as a YAML list: [pr-number] [priority]).
func nodeText(n yaml.Node) string {
	if n.Kind == yaml.SequenceNode {
		var parts []string
		for _, c := range n.Content {
			parts = append(parts, "["+c.Value+"]")
		}
		return strings.Join(parts, " ")
	}
	return n.Value
}

// nodeList is a comma-separated scalar or a sequence.
func nodeList(n yaml.Node) []string {
	var out []string
	if n.Kind == yaml.SequenceNode {
		for _, c := range n.Content {
			out = append(out, c.Value)
		}
		return out
	}
	for _, p := range strings.Split(n.Value, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// List is every command: the files', sorted by name, then the dynamic
// ones (SetDynamic), sorted by name.
func (cs *Commands) List() []Command {
	if cs == nil {
		return nil
	}
	if cs.dynamic == nil {
		return cs.list
	}
	return append(append([]Command(nil), cs.list...), cs.dynamicList()...)
}

// Lookup finds a command by name (without the slash).
func (cs *Commands) Lookup(name string) (Command, bool) {
	if cs == nil {
		return Command{}, false
	}
	i, ok := cs.byName[name]
	if !ok {
		for _, c := range cs.dynamicList() {
			if c.Name == name {
				return c, true
			}
		}
		return Command{}, false
	}
	return cs.list[i], true
}

// Run turns "/name args" into the prompt it stands for, asking a dynamic
// command's program for it (err says why that failed); ok is false when
// line does not name a custom command.
func (cs *Commands) Run(ctx context.Context, line string) (prompt string, c Command, ok bool, err error) {
	name, args, ok := cs.split(line)
	if !ok {
		return "", Command{}, false, nil
	}
	if c, ok = cs.Lookup(name); !ok {
		return "", Command{}, false, nil
	}
	if c.Fetch != nil {
		prompt, err = c.Fetch(ctx, args)
		return prompt, c, true, err
	}
	return c.Expand(args), c, true, nil
}

func (cs *Commands) split(line string) (name, args string, ok bool) {
	if !strings.HasPrefix(line, "/") {
		return "", "", false
	}
	name, args, _ = strings.Cut(strings.TrimPrefix(line, "/"), " ")
	if i := strings.IndexAny(name, "\n\t"); i >= 0 {
		name, args = name[:i], name[i+1:]+" "+args
	}
	return name, strings.TrimSpace(args), true
}

// Expand turns "/name args" into the prompt it stands for; ok is false
// when line does not name a custom command whose prompt is its file's
// (a dynamic one's needs Run).
func (cs *Commands) Expand(line string) (prompt string, c Command, ok bool) {
	name, args, ok := cs.split(line)
	if !ok {
		return "", Command{}, false
	}
	c, ok = cs.Lookup(name)
	if !ok || c.Fetch != nil {
		return "", Command{}, false
	}
	return c.Expand(args), c, true
}

// Expand fills the template with args. Claude Code's form: $ARGUMENTS is
// all of them, $1 to $9 one each (split as a shell would, quotes kept
// together); a template with neither gets "ARGUMENTS: args" appended when
// there are any. Gemini CLI's: {{args}} is all of them; without it, the
// command as typed is appended after a blank line.
func (c Command) Expand(args string) string {
	body := strings.TrimRight(c.Body, "\n")
	if c.gemini {
		if strings.Contains(body, "{{args}}") {
			return strings.ReplaceAll(body, "{{args}}", args)
		}
		if args == "" {
			return body
		}
		return body + "\n\n/" + c.Name + " " + args
	}
	used := false
	pos := splitArgs(args)
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		if body[i] != '$' {
			b.WriteByte(body[i])
			continue
		}
		rest := body[i+1:]
		switch {
		case strings.HasPrefix(rest, "ARGUMENTS"):
			b.WriteString(args)
			i += len("ARGUMENTS")
			used = true
		case len(rest) > 0 && rest[0] >= '1' && rest[0] <= '9':
			n := int(rest[0] - '1')
			if n < len(pos) {
				b.WriteString(pos[n])
			}
			i++
			used = true
		default:
			b.WriteByte('$')
		}
	}
	out := b.String()
	if !used && args != "" {
		out += "\n\nARGUMENTS: " + args
	}
	return out
}

// splitArgs splits on blanks, keeping "double" and 'single' quoted words
// whole (without their quotes).
func splitArgs(s string) []string {
	var out []string
	var cur strings.Builder
	in, quote, had := false, byte(0), false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quote != 0:
			if ch == quote {
				quote = 0
			} else {
				cur.WriteByte(ch)
			}
		case ch == '"' || ch == '\'':
			quote, in, had = ch, true, true
		case ch == ' ' || ch == '\t' || ch == '\n':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(ch)
			in, had = true, true
		}
	}
	if in || (had && cur.Len() > 0) {
		out = append(out, cur.String())
	}
	return out
}
