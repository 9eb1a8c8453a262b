package extend

import (
	"context"
	"sort"
	"strings"
	"sync"
)

// Turn is what a slash command starts: the prompt of the turn and what
// the command's front matter asks of it.
type Turn struct {
	Prompt string
	// Model is the model the turn asks for (a command's model:); empty
	// keeps the session's.
	Model string
	// AllowedTools are Claude Code permission patterns the turn may use
	// without asking (a command's allowed-tools: "Bash(git add:*)",
	// "Edit", "mcp__github"); never over a deny rule or the walls.
	AllowedTools []string
	// Trusted says the patterns come from a file out of the agent's reach
	// (the user's own, or the project's .agents); patterns from a file the
	// agent could have written apply only once the user approves them.
	Trusted bool
	// Project says the patterns come from a project's file: they sit in
	// the project's layer of rules, which never loosens another's deny.
	Project bool
	// From names the command and where it came from, for the user.
	From string
}

// Entry is one slash command a source offers: the / menu lists it, /help
// shows it with where it came from, Tab completes it, and "/name args"
// (typed, or given to harness run) starts the turn Expand makes.
type Entry struct {
	Name   string // without the slash; "git:fix"
	Args   string // what it takes: "[pr-number] [priority]"
	Detail string // what it is, in a line
	// Kind groups entries in /help and the menu: "command", "skill",
	// "mcp prompt"…
	Kind  string
	Where string // the file or server it came from
	// Expand makes the turn from what followed the name.
	Expand func(ctx context.Context, args string) (Turn, error)
}

// Source lists the entries of one kind. It is asked again every time the
// menu opens or a command is looked up, so its list may change during a
// session (servers that start late, files that appear).
type Source func() []Entry

// Registry is every slash command a session has beyond the front end's
// own: custom commands, skills, and whatever else registers (MCP
// prompts). The first source registered wins a name; names reserved for
// the front end's built-in commands are never offered.
type Registry struct {
	mu       sync.Mutex
	sources  []Source
	reserved map[string]bool
}

// NewRegistry is an empty registry; reserved are the built-in commands'
// names, without the slash.
func NewRegistry(reserved ...string) *Registry {
	r := &Registry{reserved: map[string]bool{}}
	for _, n := range reserved {
		r.reserved[strings.TrimPrefix(n, "/")] = true
	}
	return r
}

// Register adds a source after those registered before.
func (r *Registry) Register(src Source) {
	if r == nil || src == nil {
		return
	}
	r.mu.Lock()
	r.sources = append(r.sources, src)
	r.mu.Unlock()
}

// Reserve keeps names (the front end's built-in commands) out of the
// registry.
func (r *Registry) Reserve(names ...string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	for _, n := range names {
		r.reserved[strings.TrimPrefix(n, "/")] = true
	}
	r.mu.Unlock()
}

// Entries is every entry, sources in the order they registered, the
// first of a name kept.
func (r *Registry) Entries() []Entry {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	srcs := append([]Source(nil), r.sources...)
	reserved := r.reserved
	r.mu.Unlock()
	var out []Entry
	seen := map[string]bool{}
	for _, src := range srcs {
		for _, e := range src() {
			if e.Name == "" || seen[e.Name] || reserved[e.Name] {
				continue
			}
			seen[e.Name] = true
			out = append(out, e)
		}
	}
	return out
}

// Lookup finds an entry by name (without the slash).
func (r *Registry) Lookup(name string) (Entry, bool) {
	for _, e := range r.Entries() {
		if e.Name == name {
			return e, true
		}
	}
	return Entry{}, false
}

// Start turns a line "/name args" into the turn it stands for; ok is
// false when the line names no entry (it then goes to the model as typed,
// or to the front end's built-ins).
func (r *Registry) Start(ctx context.Context, line string) (t Turn, e Entry, ok bool, err error) {
	if !strings.HasPrefix(line, "/") {
		return Turn{}, Entry{}, false, nil
	}
	name, args, _ := strings.Cut(strings.TrimPrefix(line, "/"), " ")
	if i := strings.IndexAny(name, "\n\t"); i >= 0 {
		name, args = name[:i], name[i+1:]+" "+args
	}
	e, ok = r.Lookup(name)
	if !ok || e.Expand == nil {
		return Turn{}, Entry{}, false, nil
	}
	t, err = e.Expand(ctx, strings.TrimSpace(args))
	if t.From == "" {
		t.From = "/" + e.Name + " (" + e.Where + ")"
	}
	return t, e, true, err
}

// CommandSource is the registry source of a session's custom commands.
func CommandSource(cs *Commands) Source {
	return func() []Entry {
		var out []Entry
		for _, c := range cs.List() {
			out = append(out, c.Entry())
		}
		// Claude Code's plain name of a namespaced command.
		if cs != nil {
			var aliases []string
			for alias, i := range cs.byName {
				if alias != cs.list[i].Name {
					aliases = append(aliases, alias)
				}
			}
			sort.Strings(aliases)
			for _, alias := range aliases {
				c := cs.list[cs.byName[alias]]
				e := c.Entry()
				e.Name, e.Detail = alias, strings.TrimSpace(e.Detail+" (/"+c.Name+")")
				out = append(out, e)
			}
		}
		return out
	}
}

// Entry is the command as the registry lists it.
func (c Command) Entry() Entry {
	if c.Fetch != nil {
		// Another program's prompt (an MCP server's): it asks nothing of
		// the turn's model or tools, and is never trusted to.
		return Entry{
			Name: c.Name, Args: c.ArgumentHint, Detail: c.Description, Kind: c.Scope + " prompt", Where: c.Path,
			Expand: func(ctx context.Context, args string) (Turn, error) {
				p, err := c.Fetch(ctx, args)
				return Turn{Prompt: p, From: "/" + c.Name + " (" + c.Where() + ")"}, err
			},
		}
	}
	kind := c.Scope + " command"
	return Entry{
		Name: c.Name, Args: c.ArgumentHint, Detail: c.Description, Kind: kind, Where: c.Path,
		Expand: func(_ context.Context, args string) (Turn, error) {
			return Turn{Prompt: c.Expand(args), Model: c.Model, AllowedTools: c.AllowedTools, Trusted: c.Trusted(), Project: c.Scope == "project",
				From: "/" + c.Name + " (" + c.Where() + ")"}, nil
		},
	}
}

// Trusted reports whether the command's file is out of the agent's reach:
// the user's own, or the project's .agents (read-only inside the walls).
// A project's .claude or .gemini command is a file the agent could have
// written, and so is one whose file resolves where commands write
// (Distrust).
func (c Command) Trusted() bool { return (c.Scope == "user" || c.agents) && !c.reached }
