package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
)

// Scope says where a server's definition came from; it decides whether the
// server needs the user's approval before it runs.
type Scope string

// The scopes, least trusted first.
const (
	ScopeProject Scope = "project" // <project>/.mcp.json: anyone who wrote the repository
	ScopeUser    Scope = "user"    // ~/.agents/mcp.json
	ScopeFlag    Scope = "flag"    // --mcp-config FILE
)

// Server is one server's definition in Claude Code's mcpServers format.
type Server struct {
	Name    string            `json:"-"`
	Type    string            `json:"type,omitempty"` // "stdio" (or empty), "http", "sse"
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	OAuth   *OAuth            `json:"oauth,omitempty"`
	// Cwd is the server's working directory (relative: to the project),
	// inside the walls like any command's.
	Cwd string `json:"cwd,omitempty"`
	// Forward names variables of harness's environment passed on to the
	// server when set (Codex's env_vars).
	Forward []string `json:"forward,omitempty"`

	Scope  Scope  `json:"-"`
	File   string `json:"-"` // the file it was read from
	Format Format `json:"-"` // the format of File
	// Project is the project the definition was read for: the value of
	// ${CLAUDE_PROJECT_DIR} (and VS Code's ${workspaceFolder}).
	Project string `json:"-"`
	// Off, when set, says why the server is not started: its file turns
	// it off (Disabled), or it needs what harness cannot give.
	Off      string `json:"-"`
	Disabled bool   `json:"disabled,omitempty"` // kept by Add (harness mcp add-json)
	// Ignored are the fields of its definition harness does not honour,
	// each with what to do instead.
	Ignored []string `json:"-"`
	// Pin is the digest of the files the server runs that commands can
	// write (set by the caller before asking for an approval): part of
	// Hash, so a rewritten script is a new definition.
	Pin string `json:"-"`
}

// Transport is the server's transport: stdio, http or sse.
func (s Server) Transport() string {
	if s.Type == "" {
		if s.URL != "" && s.Command == "" {
			return "http"
		}
		return "stdio"
	}
	if s.Type == "streamable-http" || s.Type == "streamableHttp" {
		return "http"
	}
	return s.Type
}

// Hash identifies the definition as written (before expansion): an
// approval is for this hash, so a changed definition asks again.
func (s Server) Hash() string {
	raw, _ := json.Marshal(s) // map keys are sorted: stable
	pre := s.Name + "\x00"
	if s.Pin != "" {
		pre += "pin " + s.Pin + "\x00"
	}
	sum := sha256.Sum256(append([]byte(pre), raw...))
	return hex.EncodeToString(sum[:])
}

// Summary is one line saying what the server runs or reaches, for a list
// and an approval prompt; header and env values are not shown.
func (s Server) Summary() string {
	switch s.Transport() {
	case "stdio":
		words := []string{s.Command}
		words = append(words, s.Args...)
		out := strings.Join(words, " ")
		if len(s.Env) > 0 {
			out += " (env: " + strings.Join(sortedKeys(s.Env), ", ") + ")"
		}
		if len(s.Forward) > 0 {
			out += " (passed on: " + strings.Join(s.Forward, ", ") + ")"
		}
		if s.Cwd != "" {
			out += " (cwd: " + s.Cwd + ")"
		}
		return out
	default:
		out := s.Transport() + " " + s.URL
		if len(s.Headers) > 0 {
			out += " (headers: " + strings.Join(sortedKeys(s.Headers), ", ") + ")"
		}
		return out
	}
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var (
	nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,48}$`) })
	envRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
)

// validate says what is wrong with a definition, in the user's terms.
func (s Server) validate() error {
	if !nameRE().MatchString(s.Name) {
		return fmt.Errorf("server name %q: use letters, digits, - and _ (at most 48)", s.Name)
	}
	if strings.Contains(s.Name, "__") {
		return fmt.Errorf("server name %q: \"__\" separates server and tool in mcp__SERVER__TOOL", s.Name)
	}
	switch s.Transport() {
	case "stdio":
		if s.Command == "" {
			return fmt.Errorf("server %s: a stdio server needs \"command\"", s.Name)
		}
		for k, v := range s.Env {
			if !envRE().MatchString(k) {
				return fmt.Errorf("server %s: environment variable name %q is not valid", s.Name, k)
			}
			if strings.ContainsAny(v, "\n\x00") {
				return fmt.Errorf("server %s: the value of %s contains a newline or NUL", s.Name, k)
			}
		}
	case "http", "sse":
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("server %s: %q is not an http(s) URL", s.Name, s.URL)
		}
	default:
		return fmt.Errorf("server %s: unknown type %q (stdio, http or sse)", s.Name, s.Type)
	}
	return nil
}

// ParseFile reads one file in the mcpServers format. A file that does not
// exist is no servers, not an error.
func ParseFile(path string, scope Scope) ([]Server, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) && scope != ScopeFlag {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("MCP configuration: %w", err)
	}
	return Parse(raw, path, scope)
}

// Parse reads servers from data in the mcpServers format, strictly: a
// server that cannot be used is an error (for harness mcp add-json and
// remove, which edit the file).
func Parse(data []byte, path string, scope Scope) ([]Server, error) {
	ss, warns, err := parseSource(data, Source{Path: path, Scope: scope, Format: FormatClaude}, "")
	if err != nil {
		return nil, fmt.Errorf("%w (expected {\"mcpServers\": {\"NAME\": {\"command\": ..., \"args\": [...]}}})", err)
	}
	for _, w := range warns {
		var ee *EntryError
		if errors.As(w, &ee) {
			return nil, w
		}
	}
	return ss, nil
}

// UserFile is the user's MCP configuration under home.
func UserFile(home string) string { return filepath.Join(home, ".agents", "mcp.json") }

// ProjectFile is a project's MCP configuration, Claude Code's .mcp.json.
func ProjectFile(project string) string { return filepath.Join(project, ".mcp.json") }

// Load reads every file of Sources, then the --mcp-config files, in that
// order; a later definition of a name replaces an earlier one (a flag
// file beats the project, which beats the user's files, as in Claude
// Code). A file that does not parse is left out and said in warns, and a
// server that cannot be used is skipped and said, naming file, server and
// field; a --mcp-config file the user named must parse, every server of
// it (err).
func Load(home, project string, flagFiles []string) (servers []Server, warns []error, err error) {
	return LoadWith(home, project, flagFiles, nil)
}

// ReadFunc reads one configuration file once and says whether commands
// can write it where it really is (a link resolved).
type ReadFunc func(path string) (data []byte, reach bool, err error)

// LoadWith is Load reading through read (nil: os.ReadFile). A user's or
// --mcp-config file that commands can write is the project's: its servers
// need the user's approval as a project's do.
func LoadWith(home, project string, flagFiles []string, read ReadFunc) (servers []Server, warns []error, err error) {
	if read == nil {
		read = func(path string) ([]byte, bool, error) {
			data, err := os.ReadFile(path)
			return data, false, err
		}
	}
	byName := map[string]Server{}
	srcs := Sources(home, project)
	for _, f := range flagFiles {
		srcs = append(srcs, Source{Path: f, Scope: ScopeFlag})
	}
	for _, src := range srcs {
		if src.Path == "" {
			continue
		}
		data, reach, rerr := read(src.Path)
		if src.Scope != ScopeFlag && (errors.Is(rerr, os.ErrNotExist) || errors.Is(rerr, syscall.ENOTDIR)) {
			continue
		}
		if rerr != nil {
			rerr = fmt.Errorf("MCP configuration: %w", rerr)
			if src.Scope == ScopeFlag {
				return nil, nil, rerr
			}
			warns = append(warns, fmt.Errorf("%w; its servers are not started", rerr))
			continue
		}
		if reach {
			src.Scope = ScopeProject
		}
		if src.Format == "" {
			src.Format = DetectFormat(src.Path, data)
		}
		ss, ws, perr := parseSource(data, src, project)
		if perr != nil && src.Scope == ScopeFlag {
			return nil, nil, perr
		}
		if perr != nil {
			warns = append(warns, fmt.Errorf("%w; its servers are not started", perr))
			continue
		}
		for _, w := range ws {
			// A --mcp-config file was named for this run: a server of it
			// that cannot be used stops the run, as the whole file would.
			var ee *EntryError
			if src.Scope == ScopeFlag && errors.As(w, &ee) {
				return nil, nil, fmt.Errorf("%s; fix it or leave the file out of --mcp-config", strings.TrimSuffix(ee.Error(), "; that server is skipped"))
			}
			warns = append(warns, w)
		}
		for _, s := range ss {
			byName[s.Name] = s
		}
	}
	warns = append(warns, claudeDisabled(home, project, byName, read)...)
	out := make([]Server, 0, len(byName))
	for _, n := range sortedServerNames(byName) {
		out = append(out, byName[n])
	}
	return out, warns, nil
}

func sortedServerNames(m map[string]Server) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var varRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`) })

// Expand replaces ${VAR} and ${VAR:-default} in command, args, env, url,
// headers and cwd (the fields and forms Claude Code expands) from getenv,
// ${CLAUDE_PROJECT_DIR} with the project, and makes a relative cwd the
// project's. An unset
// variable without a default is an error naming it, rather than a literal
// "${VAR}" sent as a credential.
func (s Server) Expand(getenv func(string) string) (Server, error) {
	var missing []string
	exp := func(v string) string {
		return varRE().ReplaceAllStringFunc(v, func(m string) string {
			sub := varRE().FindStringSubmatch(m)
			// The project, as Claude Code sets it for hooks and servers.
			if sub[1] == "CLAUDE_PROJECT_DIR" && s.Project != "" {
				return s.Project
			}
			if val := getenv(sub[1]); val != "" {
				return val
			}
			if sub[2] != "" {
				return sub[3]
			}
			missing = append(missing, sub[1])
			return m
		})
	}
	out := s
	out.Command = exp(s.Command)
	out.URL = exp(s.URL)
	out.Cwd = exp(s.Cwd)
	if out.Cwd != "" && !filepath.IsAbs(out.Cwd) && s.Project != "" {
		out.Cwd = filepath.Join(s.Project, out.Cwd)
	}
	out.Args = nil
	for _, a := range s.Args {
		out.Args = append(out.Args, exp(a))
	}
	out.Env = expandMap(s.Env, exp)
	for _, k := range s.Forward {
		if _, ok := out.Env[k]; ok {
			continue
		}
		if v := getenv(k); v != "" {
			if out.Env == nil {
				out.Env = map[string]string{}
			}
			out.Env[k] = v
		}
	}
	out.Headers = expandMap(s.Headers, exp)
	if s.OAuth != nil {
		o := *s.OAuth
		o.ClientID, o.ClientSecret = exp(o.ClientID), exp(o.ClientSecret)
		out.OAuth = &o
	}
	if len(missing) > 0 {
		return s, fmt.Errorf("server %s: %s not set (its configuration in %s names ${%s}; set it or give a default with ${%s:-VALUE})",
			s.Name, strings.Join(missing, ", "), s.File, missing[0], missing[0])
	}
	if err := out.validate(); err != nil {
		return s, err
	}
	return out, nil
}

func expandMap(m map[string]string, exp func(string) string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = exp(v)
	}
	return out
}
