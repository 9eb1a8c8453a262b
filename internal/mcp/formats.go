package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/pelletier/go-toml/v2"
)

// Format says which tool's file a definition was read from: each keeps
// its servers under its own key with its own field names.
type Format string

// The formats read, each as its tool documents it.
const (
	// Claude Code's .mcp.json and harness's own files (also Claude
	// Desktop's): {"mcpServers": {NAME: {command, args, env, type, url,
	// headers}}}; https://code.claude.com/docs/en/mcp.
	FormatClaude Format = "claude"
	// Cursor's .cursor/mcp.json and ~/.cursor/mcp.json: mcpServers, with
	// ${env:NAME}, ${userHome}, ${workspaceFolder} and envFile;
	// https://cursor.com/docs/mcp.
	FormatCursor Format = "cursor"
	// VS Code's .vscode/mcp.json and the profile's mcp.json: "servers"
	// and "inputs" (${input:ID}), type stdio|http|sse, envFile;
	// https://code.visualstudio.com/docs/copilot/reference/mcp-configuration.
	FormatVSCode Format = "vscode"
	// opencode's opencode.json(c): "mcp", type local|remote, command as
	// one array, environment, enabled; https://opencode.ai/docs/mcp-servers.
	FormatOpencode Format = "opencode"
	// Codex's config.toml: [mcp_servers.NAME] command, args, env,
	// env_vars, cwd, url, bearer_token_env_var, http_headers,
	// env_http_headers, enabled, startup_timeout_sec, tool_timeout_sec,
	// enabled_tools, disabled_tools; https://developers.openai.com/codex/mcp.
	FormatCodex Format = "codex"
	// crush's crush.json and .crush.json: "mcp", type stdio|http|sse,
	// command, args, env, url, headers, disabled, disabled_tools, timeout;
	// https://github.com/charmbracelet/crush (README, "MCPs").
	FormatCrush Format = "crush"
	// Gemini CLI's settings.json: mcpServers with command, args, env,
	// cwd, url (SSE), httpUrl (streamable HTTP), headers, timeout, trust,
	// includeTools, excludeTools; and mcp.allowed / mcp.excluded;
	// https://github.com/google-gemini/gemini-cli/blob/main/docs/tools/mcp-server.md.
	FormatGemini Format = "gemini"
)

// Title is the format's name for people.
func (f Format) Title() string {
	switch f {
	case FormatClaude:
		return "Claude Code mcpServers"
	case FormatCursor:
		return "Cursor mcp.json"
	case FormatVSCode:
		return "VS Code mcp.json"
	case FormatOpencode:
		return "opencode"
	case FormatCodex:
		return "Codex config.toml"
	case FormatCrush:
		return "crush"
	case FormatGemini:
		return "Gemini CLI settings.json"
	}
	return string(f)
}

// Source is one file servers are read from.
type Source struct {
	Path   string
	Scope  Scope
	Format Format
}

// Sources are the files Load reads, in order: a later definition of a
// name replaces an earlier one. Other tools' files come before harness's
// own at each level, the user's before the project's.
func Sources(home, project string) []Source {
	var out []Source
	if home != "" {
		vscodeUser := filepath.Join(home, ".config", "Code", "User", "mcp.json")
		if runtime.GOOS == "darwin" {
			vscodeUser = filepath.Join(home, "Library", "Application Support", "Code", "User", "mcp.json")
		}
		out = append(out,
			Source{filepath.Join(home, ".codex", "config.toml"), ScopeUser, FormatCodex},
			Source{filepath.Join(home, ".config", "opencode", "opencode.json"), ScopeUser, FormatOpencode},
			Source{filepath.Join(home, ".config", "opencode", "opencode.jsonc"), ScopeUser, FormatOpencode},
			Source{filepath.Join(home, ".config", "crush", "crush.json"), ScopeUser, FormatCrush},
			Source{filepath.Join(home, ".gemini", "settings.json"), ScopeUser, FormatGemini},
			Source{vscodeUser, ScopeUser, FormatVSCode},
			Source{filepath.Join(home, ".cursor", "mcp.json"), ScopeUser, FormatCursor},
			Source{UserFile(home), ScopeUser, FormatClaude},
		)
	}
	if project != "" {
		out = append(out,
			Source{filepath.Join(project, ".codex", "config.toml"), ScopeProject, FormatCodex},
			Source{filepath.Join(project, "opencode.json"), ScopeProject, FormatOpencode},
			Source{filepath.Join(project, "opencode.jsonc"), ScopeProject, FormatOpencode},
			Source{filepath.Join(project, "crush.json"), ScopeProject, FormatCrush},
			Source{filepath.Join(project, ".crush.json"), ScopeProject, FormatCrush},
			Source{filepath.Join(project, ".gemini", "settings.json"), ScopeProject, FormatGemini},
			Source{filepath.Join(project, ".vscode", "mcp.json"), ScopeProject, FormatVSCode},
			Source{filepath.Join(project, ".cursor", "mcp.json"), ScopeProject, FormatCursor},
			Source{ProjectFile(project), ScopeProject, FormatClaude},
		)
	}
	return out
}

// DetectFormat guesses a --mcp-config file's format from its name, then
// from its top-level keys.
func DetectFormat(path string, data []byte) Format {
	base := filepath.Base(path)
	dir := filepath.Base(filepath.Dir(path))
	switch {
	case strings.HasSuffix(base, ".toml"):
		return FormatCodex
	case base == "opencode.json" || base == "opencode.jsonc":
		return FormatOpencode
	case base == "crush.json" || base == ".crush.json":
		return FormatCrush
	case dir == ".vscode" && base == "mcp.json":
		return FormatVSCode
	case dir == ".cursor" && base == "mcp.json":
		return FormatCursor
	case dir == ".gemini" && base == "settings.json":
		return FormatGemini
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(stripJSONC(data), &top) == nil {
		if _, ok := top["mcpServers"]; ok {
			return FormatClaude
		}
		if _, ok := top["servers"]; ok {
			return FormatVSCode
		}
		if raw, ok := top["mcp"]; ok {
			if bytes.Contains(raw, []byte(`"local"`)) || bytes.Contains(raw, []byte(`"remote"`)) {
				return FormatOpencode
			}
			return FormatCrush
		}
	}
	return FormatClaude
}

// EntryError is one server's definition that cannot be used: that server
// is skipped, the file's others are read.
type EntryError struct {
	File, Server, Field string
	Why                 string
}

func (e *EntryError) Error() string {
	field := ""
	if e.Field != "" {
		field = ", field " + e.Field
	}
	return fmt.Sprintf("MCP configuration %s: server %s%s: %s; that server is skipped", e.File, e.Server, field, e.Why)
}

// topKey is where each format keeps its servers.
func (f Format) topKey() string {
	switch f {
	case FormatVSCode:
		return "servers"
	case FormatOpencode, FormatCrush:
		return "mcp"
	case FormatCodex:
		return "mcp_servers"
	}
	return "mcpServers"
}

// decode reads a file of format f into generic values.
func decode(data []byte, f Format) (map[string]any, error) {
	var top map[string]any
	if f == FormatCodex {
		if err := toml.Unmarshal(data, &top); err != nil {
			return nil, err
		}
		return top, nil
	}
	dec := json.NewDecoder(bytes.NewReader(stripJSONC(data)))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil {
		return nil, err
	}
	return top, nil
}

// parseSource reads the servers of one file: a file that is not the
// format at all is err; a server that cannot be used is one of warns (an
// *EntryError) and the others are read; fields harness does not honour
// are said in warns too, and on the server (Ignored).
func parseSource(data []byte, src Source, project string) (servers []Server, warns []error, err error) {
	top, err := decode(data, src.Format)
	if err != nil {
		return nil, nil, fmt.Errorf("MCP configuration %s (%s): %w", src.Path, src.Format.Title(), err)
	}
	raw, ok := top[src.Format.topKey()]
	if !ok || raw == nil {
		return nil, nil, nil
	}
	entries, ok := raw.(map[string]any)
	if !ok {
		return nil, nil, fmt.Errorf("MCP configuration %s (%s): %q is %s, not an object of servers by name", src.Path, src.Format.Title(), src.Format.topKey(), kind(raw))
	}
	inputs := vscodeInputs(top)
	allowed, excluded := geminiLists(top, src.Format)
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		e := &cfgEntry{file: src.Path, name: name, used: map[string]bool{}}
		m, ok := entries[name].(map[string]any)
		if !ok {
			warns = append(warns, &EntryError{File: src.Path, Server: name, Why: "its definition is " + kind(entries[name]) + ", not an object"})
			continue
		}
		e.m = m
		s, err := convert(e, src.Format)
		if err != nil {
			warns = append(warns, err)
			continue
		}
		s.Name, s.Scope, s.File, s.Format, s.Project = safeName(name), src.Scope, src.Path, src.Format, project
		if s.Name != name {
			// VS Code's gallery names (io.github.owner/server) cannot be
			// part of a tool name, mcp__SERVER__TOOL.
			warns = append(warns, fmt.Errorf("MCP server %q (%s) is %s in harness: its tools are mcp__%s__TOOL (letters, digits, - and _ only)", name, src.Path, s.Name, s.Name))
		}
		if err := normalise(&s, src.Format, inputs); err != nil {
			var ee *EntryError
			if e, ok := err.(*EntryError); ok {
				ee = e
			} else {
				ee = &EntryError{Why: err.Error()}
			}
			ee.File, ee.Server = src.Path, name
			warns = append(warns, ee)
			continue
		}
		if err := s.validate(); err != nil {
			warns = append(warns, &EntryError{File: src.Path, Server: name, Why: strings.TrimPrefix(err.Error(), "server "+name+": ")})
			continue
		}
		switch {
		case allowed != nil && !allowed[name]:
			s.Off, s.Disabled = "not in mcp.allowed of "+src.Path, true
		case excluded[name]:
			s.Off, s.Disabled = "in mcp.excluded of "+src.Path, true
		}
		s.Ignored = append(s.Ignored, e.unknown()...)
		if len(s.Ignored) > 0 {
			warns = append(warns, fmt.Errorf("MCP server %s (%s): not supported, ignored: %s", name, src.Path, strings.Join(s.Ignored, "; ")))
		}
		servers = append(servers, s)
	}
	return servers, warns, nil
}

// safeName is name with every character a tool name cannot hold made _,
// and no "__" (which separates server and tool).
func safeName(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	out := string(b)
	for strings.Contains(out, "__") {
		out = strings.ReplaceAll(out, "__", "_")
	}
	return out
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number, int64, float64, int:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// cfgEntry reads one server's fields, remembering which were read.
type cfgEntry struct {
	file, name string
	m          map[string]any
	used       map[string]bool
	ignored    []string
}

func (e *cfgEntry) bad(field, why string, args ...any) error {
	return &EntryError{File: e.file, Server: e.name, Field: field, Why: fmt.Sprintf(why, args...)}
}

func (e *cfgEntry) has(k string) bool { _, ok := e.m[k]; e.used[k] = true; return ok }

func (e *cfgEntry) str(k string) (string, error) {
	e.used[k] = true
	v, ok := e.m[k]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", e.bad(k, "want a string, got %s", kind(v))
	}
	return s, nil
}

func (e *cfgEntry) strs(k string) ([]string, error) {
	e.used[k] = true
	v, ok := e.m[k]
	if !ok || v == nil {
		return nil, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, e.bad(k, "want a list of strings, got %s", kind(v))
	}
	out := make([]string, len(l))
	for i, x := range l {
		s, ok := x.(string)
		if !ok {
			return nil, e.bad(k, "item %d is %s, not a string", i+1, kind(x))
		}
		out[i] = s
	}
	return out, nil
}

func (e *cfgEntry) strMap(k string) (map[string]string, error) {
	e.used[k] = true
	v, ok := e.m[k]
	if !ok || v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, e.bad(k, "want an object of strings, got %s", kind(v))
	}
	out := make(map[string]string, len(m))
	for name, x := range m {
		s, ok := x.(string)
		if !ok {
			return nil, e.bad(k, "the value of %s is %s, not a string", name, kind(x))
		}
		out[name] = s
	}
	return out, nil
}

// boolean reads a true/false field; set says whether it was there.
func (e *cfgEntry) boolean(k string) (val, set bool, err error) {
	e.used[k] = true
	v, ok := e.m[k]
	if !ok || v == nil {
		return false, false, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, false, e.bad(k, "want true or false, got %s", kind(v))
	}
	return b, true, nil
}

// ignore marks k, when present, as a field harness does not honour, with
// what to do instead.
func (e *cfgEntry) ignore(k, instead string) {
	e.used[k] = true
	if _, ok := e.m[k]; ok {
		e.ignored = append(e.ignored, k+" ("+instead+")")
	}
}

// accept marks fields that change nothing for harness (descriptions,
// fields that say what harness does anyway).
func (e *cfgEntry) accept(ks ...string) {
	for _, k := range ks {
		e.used[k] = true
	}
}

// unknown is every field the format's reader did not name, plus the
// ignored ones.
func (e *cfgEntry) unknown() []string {
	var out []string
	for k := range e.m {
		if !e.used[k] {
			out = append(out, k+" (not a field harness knows in this format)")
		}
	}
	sort.Strings(out)
	return append(e.ignored, out...)
}

const (
	toolFilterHint = "harness starts every tool; refuse some with deny rules, deny mcp__SERVER__TOOL"
	timeoutHint    = "MCP_TIMEOUT bounds every server's start and MCP_TOOL_TIMEOUT each call"
	trustHint      = "every call passes harness's permission gate; allow mcp__SERVER in rules"
	envFileHint    = "harness reads no env file; name the variables in env"
)

// convert reads e in format f into a Server (before normalise).
func convert(e *cfgEntry, f Format) (Server, error) {
	r := &entryReader{e: e}
	e.accept("description", "name")
	switch f {
	case FormatClaude, FormatCursor, FormatVSCode, FormatCrush:
		r.claudeLike(f)
	case FormatGemini:
		r.gemini()
	case FormatOpencode:
		r.opencode()
	case FormatCodex:
		r.codex()
	}
	return r.s, r.err
}

// entryReader fills a Server from one entry's fields; the first error
// stops the reads after it.
type entryReader struct {
	e   *cfgEntry
	s   Server
	err error
}

func (r *entryReader) get(dst *string, k string) {
	if r.err == nil {
		*dst, r.err = r.e.str(k)
	}
}

func (r *entryReader) getList(dst *[]string, k string) {
	if r.err == nil {
		*dst, r.err = r.e.strs(k)
	}
}

func (r *entryReader) getMap(dst *map[string]string, k string) {
	if r.err == nil {
		*dst, r.err = r.e.strMap(k)
	}
}

// off turns the server off when boolean k is set to when, saying why.
func (r *entryReader) off(k string, when bool, why string) {
	if r.err != nil {
		return
	}
	v, set, err := r.e.boolean(k)
	if err != nil {
		r.err = err
		return
	}
	if set && v == when {
		r.s.Off, r.s.Disabled = why, true
	}
}

// claudeLike reads the mcpServers/servers entries of Claude Code,
// Cursor, VS Code and crush.
func (r *entryReader) claudeLike(f Format) {
	e, s := r.e, &r.s
	r.get(&s.Type, "type")
	r.get(&s.Command, "command")
	r.getList(&s.Args, "args")
	r.getMap(&s.Env, "env")
	r.get(&s.URL, "url")
	r.getMap(&s.Headers, "headers")
	r.get(&s.Cwd, "cwd")
	r.off("disabled", true, `"disabled": true in `+e.file)
	r.off("enabled", false, `"enabled": false in `+e.file)
	if f == FormatClaude && r.err == nil && e.has("oauth") {
		raw, _ := json.Marshal(e.m["oauth"])
		var o OAuth
		if jerr := json.Unmarshal(raw, &o); jerr != nil {
			r.err = e.bad("oauth", "%v", jerr)
		} else {
			s.OAuth = &o
		}
	}
	e.ignore("envFile", envFileHint)
	e.ignore("timeout", timeoutHint)
	e.ignore("disabled_tools", toolFilterHint)
	e.ignore("alwaysAllow", trustHint)
	e.ignore("autoApprove", trustHint)
	// VS Code's own: harness runs every stdio server in its walls
	// (sandboxEnabled, sandbox); gallery and version say where an
	// installed server came from; harness has no watch-and-restart
	// (dev).
	e.accept("sandboxEnabled", "sandbox", "gallery", "version")
	e.ignore("dev", "VS Code's watch-and-debug mode; harness starts the server as it is")
	if f == FormatCrush && s.Type == "" && s.URL == "" {
		s.Type = "stdio"
	}
}

// gemini reads Gemini CLI's mcpServers entries.
func (r *entryReader) gemini() {
	e, s := r.e, &r.s
	r.get(&s.Command, "command")
	r.getList(&s.Args, "args")
	r.getMap(&s.Env, "env")
	r.get(&s.Cwd, "cwd")
	r.getMap(&s.Headers, "headers")
	var url, httpURL string
	r.get(&url, "url")
	r.get(&httpURL, "httpUrl")
	r.get(&s.Type, "type")
	if r.err == nil {
		// httpUrl is streamable HTTP, url SSE unless type says http.
		switch {
		case httpURL != "":
			s.URL, s.Type = httpURL, "http"
		case url != "":
			s.URL = url
			if s.Type == "" {
				s.Type = "sse"
			}
		}
	}
	r.off("disabled", true, `"disabled": true in `+e.file)
	e.ignore("timeout", timeoutHint)
	e.ignore("trust", trustHint)
	e.ignore("includeTools", toolFilterHint)
	e.ignore("excludeTools", toolFilterHint)
	e.ignore("oauth", "harness finds a server's OAuth itself: harness mcp login NAME")
	e.ignore("authProviderType", "harness finds a server's OAuth itself: harness mcp login NAME")
	e.ignore("targetAudience", "Google service-account login is not supported")
	e.ignore("targetServiceAccount", "Google service-account login is not supported")
	e.accept("extensionName")
}

// opencode reads opencode.json's mcp entries ("local" with a command
// list, or "remote").
func (r *entryReader) opencode() {
	e, s := r.e, &r.s
	var typ string
	r.get(&typ, "type")
	var words []string
	r.getList(&words, "command")
	r.getMap(&s.Env, "environment")
	r.get(&s.URL, "url")
	r.getMap(&s.Headers, "headers")
	r.off("enabled", false, `"enabled": false in `+e.file)
	e.ignore("timeout", timeoutHint)
	if e.m["oauth"] == false {
		e.accept("oauth") // opencode's "no OAuth": harness tries none unless asked (401)
	} else {
		e.ignore("oauth", "harness finds a server's OAuth itself: harness mcp login NAME")
	}
	if r.err != nil {
		return
	}
	switch typ {
	case "local":
		if len(words) == 0 {
			r.err = e.bad("command", `a local server needs "command": ["PROGRAM", "ARG", ...]`)
			return
		}
		s.Type, s.Command, s.Args = "stdio", words[0], words[1:]
	case "remote":
		s.Type = "http"
	case "":
		r.err = e.bad("type", `opencode needs "type": "local" or "remote"`)
	default:
		r.err = e.bad("type", `%q is not "local" or "remote"`, typ)
	}
}

// codex reads Codex's [mcp_servers.NAME] tables.
func (r *entryReader) codex() {
	e, s := r.e, &r.s
	r.get(&s.Command, "command")
	r.getList(&s.Args, "args")
	r.getMap(&s.Env, "env")
	r.get(&s.Cwd, "cwd")
	r.get(&s.URL, "url")
	r.getMap(&s.Headers, "http_headers")
	var fwd []string
	r.getList(&fwd, "env_vars")
	var bearer string
	r.get(&bearer, "bearer_token_env_var")
	var envHeaders map[string]string
	r.getMap(&envHeaders, "env_http_headers")
	r.off("enabled", false, "enabled = false in "+e.file)
	if r.err != nil {
		return
	}
	if s.URL != "" {
		s.Type = "http"
	}
	if r.err = r.codexEnv(fwd, bearer, envHeaders); r.err != nil {
		return
	}
	e.ignore("startup_timeout_sec", timeoutHint)
	e.ignore("startup_timeout_ms", timeoutHint)
	e.ignore("tool_timeout_sec", timeoutHint)
	e.ignore("enabled_tools", toolFilterHint)
	e.ignore("disabled_tools", toolFilterHint)
	e.ignore("required", "a server that does not start is said and the session goes on")
	e.ignore("oauth_resource", "harness finds a server's OAuth itself: harness mcp login NAME")
	e.ignore("scopes", "harness asks for the scopes the server names")
}

// codexEnv takes Codex's variables by name: env_vars pass from harness's
// environment when set (Codex forwards them as they are), the bearer
// token and env_http_headers become headers read from variables.
func (r *entryReader) codexEnv(fwd []string, bearer string, envHeaders map[string]string) error {
	e, s := r.e, &r.s
	for _, k := range fwd {
		if !envRE().MatchString(k) {
			return e.bad("env_vars", "%q is not a variable name", k)
		}
		s.Forward = append(s.Forward, k)
	}
	setHeader := func(k, v string) {
		if s.Headers == nil {
			s.Headers = map[string]string{}
		}
		s.Headers[k] = v
	}
	if bearer != "" {
		if !envRE().MatchString(bearer) {
			return e.bad("bearer_token_env_var", "%q is not a variable name", bearer)
		}
		setHeader("Authorization", "Bearer ${"+bearer+"}")
	}
	for h, v := range envHeaders {
		if !envRE().MatchString(v) {
			return e.bad("env_http_headers", "%q (for %s) is not a variable name", v, h)
		}
		setHeader(h, "${"+v+"}")
	}
	return nil
}

var (
	// ${NAME:...} forms of VS Code and Cursor (env:, input:, config:, ...).
	colonVarRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{([A-Za-z]+):([^}]*)\}`) })
	// opencode's {env:NAME}.
	opencodeVarRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{env:([A-Za-z_][A-Za-z0-9_]*)\}`) })
	// $NAME without braces, as crush and Gemini expand it.
	bareVarRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$([A-Za-z_][A-Za-z0-9_]*)`) })
)

// normalise rewrites each format's variables into the one form Expand
// knows (${NAME}, ${NAME:-default}, ${CLAUDE_PROJECT_DIR} for the
// project), and turns off a server that needs a VS Code input.
func normalise(s *Server, f Format, inputs map[string]string) error {
	var fail error
	var needs []string
	rewrite := func(field, v string) string {
		if fail != nil {
			return v
		}
		switch f {
		case FormatVSCode, FormatCursor:
			v = strings.NewReplacer("${workspaceFolder}", "${CLAUDE_PROJECT_DIR}", "${userHome}", "${HOME}",
				"${pathSeparator}", "/", "${/}", "/").Replace(v)
			v = colonVarRE().ReplaceAllStringFunc(v, func(m string) string {
				sub := colonVarRE().FindStringSubmatch(m)
				if strings.HasPrefix(sub[2], "-") {
					return m // ${NAME:-default}
				}
				switch sub[1] {
				case "env":
					return "${" + sub[2] + "}"
				case "input":
					if f == FormatVSCode {
						needs = append(needs, sub[2])
						return m
					}
				case "workspaceFolder":
					return "${CLAUDE_PROJECT_DIR}" // ${workspaceFolder:NAME}: the one folder harness has
				}
				fail = &EntryError{Field: field, Why: fmt.Sprintf("%s is not a variable harness can fill (it knows ${env:NAME}, ${workspaceFolder}, ${userHome})", m)}
				return m
			})
		case FormatOpencode:
			// opencode's own substitution: {env:NAME}; {file:PATH} reads a file.
			if strings.Contains(v, "{file:") {
				fail = &EntryError{Field: field, Why: "{file:...} reads a file into the value; harness does not: use ${NAME}"}
				return v
			}
			v = opencodeVarRE().ReplaceAllString(v, "$${$1}")
		case FormatCrush, FormatGemini:
			if f == FormatCrush && strings.Contains(v, "$(") {
				fail = &EntryError{Field: field, Why: "$(...) runs a command to make the value; harness runs none: use ${NAME}"}
				return v
			}
			v = bareVarRE().ReplaceAllStringFunc(v, func(m string) string { return "${" + m[1:] + "}" })
		}
		return v
	}
	s.Command = rewrite("command", s.Command)
	for i := range s.Args {
		s.Args[i] = rewrite("args", s.Args[i])
	}
	for k, v := range s.Env {
		s.Env[k] = rewrite("env", v)
	}
	s.URL = rewrite("url", s.URL)
	for k, v := range s.Headers {
		s.Headers[k] = rewrite("headers", v)
	}
	s.Cwd = rewrite("cwd", s.Cwd)
	if fail != nil {
		return fail
	}
	if len(needs) > 0 && s.Off == "" {
		sort.Strings(needs)
		var desc []string
		for _, id := range needs {
			d := "${input:" + id + "}"
			if inputs[id] != "" {
				d += " (" + inputs[id] + ")"
			}
			desc = append(desc, d)
		}
		s.Off = "it needs the VS Code input " + strings.Join(desc, ", ") +
			", which harness does not ask for; put the value in an environment variable and write ${env:NAME} instead"
	}
	return nil
}

// vscodeInputs are a VS Code file's inputs: id to description.
func vscodeInputs(top map[string]any) map[string]string {
	out := map[string]string{}
	list, _ := top["inputs"].([]any)
	for _, x := range list {
		m, _ := x.(map[string]any)
		id, _ := m["id"].(string)
		d, _ := m["description"].(string)
		if id != "" {
			out[id] = d
		}
	}
	return out
}

// geminiLists are Gemini's mcp.allowed (nil: every server) and
// mcp.excluded.
func geminiLists(top map[string]any, f Format) (allowed, excluded map[string]bool) {
	if f != FormatGemini {
		return nil, nil
	}
	m, _ := top["mcp"].(map[string]any)
	set := func(v any) map[string]bool {
		l, ok := v.([]any)
		if !ok {
			return nil
		}
		out := map[string]bool{}
		for _, x := range l {
			if s, ok := x.(string); ok {
				out[s] = true
			}
		}
		return out
	}
	return set(m["allowed"]), set(m["excluded"])
}

// claudeDisabled turns off the .mcp.json servers Claude Code's settings
// name in disabledMcpjsonServers (~/.claude/settings.json, the project's
// .claude/settings.json and settings.local.json;
// https://code.claude.com/docs/en/settings). Only this direction is
// honoured: enabledMcpjsonServers and enableAllProjectMcpServers would
// approve a project's servers from a file the repository (or a command)
// writes, so a project's server still needs harness's own approval.
func claudeDisabled(home, project string, byName map[string]Server, read ReadFunc) (warns []error) {
	if project == "" {
		return nil
	}
	var files []string
	if home != "" {
		files = append(files, filepath.Join(home, ".claude", "settings.json"))
	}
	files = append(files, filepath.Join(project, ".claude", "settings.json"), filepath.Join(project, ".claude", "settings.local.json"))
	mcpJSON := ProjectFile(project)
	for _, f := range files {
		data, _, err := read(f)
		if err != nil {
			continue // absent, or said by the settings' own loader
		}
		var doc struct {
			Disabled []string `json:"disabledMcpjsonServers"`
		}
		if err := json.Unmarshal(stripJSONC(data), &doc); err != nil {
			warns = append(warns, fmt.Errorf("MCP: disabledMcpjsonServers of %s not read: %w", f, err))
			continue
		}
		for _, name := range doc.Disabled {
			s, ok := byName[name]
			if !ok || s.File != mcpJSON || s.Off != "" {
				continue
			}
			s.Off, s.Disabled = "listed in disabledMcpjsonServers of "+f, true
			byName[name] = s
		}
	}
	return warns
}
