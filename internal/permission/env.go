package permission

import (
	"slices"
	"strings"
)

// riskyVars change what later commands run or how the shell reads them:
// the shell's own, and those the build tools and test runners read as
// flags, programs, preloads or configs (GOFLAGS=-toolexec=…,
// PYTEST_ADDOPTS=-p…, NODE_OPTIONS=--import…, RUSTC_WRAPPER, MAKEFLAGS…).
var riskyVars = []string{"PATH", "BASH_ENV", "ENV", "PROMPT_COMMAND", "PS4", "SHELLOPTS",
	"BASHOPTS", "PAGER", "MANPAGER", "EDITOR", "VISUAL", "LESSOPEN", "LESSCLOSE",
	"RIPGREP_CONFIG_PATH", "GREP_OPTIONS", "BROWSER", "CDPATH", "GLOBIGNORE", "FIGNORE",
	// Runners and build tools.
	"GOFLAGS", "GOENV", "GOROOT", "GOTOOLCHAIN", "GOTOOLDIR", "CC", "CXX", "FC", "AR", "PKG_CONFIG",
	"CGO_CFLAGS", "CGO_CPPFLAGS", "CGO_CXXFLAGS", "CGO_FFLAGS", "CGO_LDFLAGS",
	"PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONINSPECT",
	"NODE_OPTIONS", "RUSTFLAGS", "RUSTDOCFLAGS", "RUSTC", "RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "RUSTDOC",
	"MAKEFLAGS", "MFLAGS", "GNUMAKEFLAGS", "MAKEFILES", "MAVEN_OPTS", "MAVEN_ARGS", "GRADLE_OPTS",
	"GRADLE_USER_HOME", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "JAVA_OPTS", "JAVA_HOME",
	"RUBYOPT", "SPEC_OPTS", "PERL5OPT", "DOTNET_ROOT", "DOTNET_STARTUP_HOOKS"}

// riskyPrefixes name families of such variables: every npm config key
// (npm_config_script_shell), Cargo's (CARGO_TARGET_*_RUNNER), yarn's,
// Bundler's, the .NET profiler's.
var riskyPrefixes = []string{"LD_", "DYLD_", "GIT_", "NPM_CONFIG_", "YARN_", "PNPM_", "CARGO_", "BUNDLE_", "CORECLR_", "COR_"}

// pathListVars add directories whose code later commands import: they
// pass when every entry is a literal path inside the project.
var pathListVars = []string{"PYTHONPATH", "NODE_PATH", "RUBYLIB", "PERL5LIB"}

func isRiskyVar(name string) bool {
	if slices.Contains(riskyVars, name) {
		return true
	}
	up := strings.ToUpper(name)
	if strings.HasPrefix(up, "CARGO_TERM_") {
		return false // colours and progress bars
	}
	for _, p := range riskyPrefixes {
		if strings.HasPrefix(up, p) {
			return true
		}
	}
	return false
}

// riskyAssign asks about an assignment of val to name that changes what
// later commands run, and reports whether it did.
func (sc *shellCheck) riskyAssign(name string, val token) bool {
	switch {
	case isRiskyVar(name):
		sc.ask("ask: sets " + name + ", which changes what later commands run")
		return true
	case slices.Contains(pathListVars, name):
		if val.dyn {
			sc.ask("ask: sets " + name + " to text computed at run time: later commands import code from there")
			return true
		}
		for _, p := range strings.Split(val.s, ":") {
			if p == "" {
				continue // the working directory
			}
			abs, ok := sc.path(p)
			if !ok || !sc.inside(abs) {
				sc.ask("ask: sets " + name + " to " + p + ", outside the project: later commands import code from there")
				return true
			}
		}
	}
	return false
}

// envLongOpts are GNU env's long options; getopt_long takes unique
// prefixes, and the gate reads an ambiguous one the strictest way.
var envLongOpts = []string{"ignore-environment", "null", "unset", "chdir", "split-string",
	"block-signal", "default-signal", "ignore-signal", "list-signal-handling", "debug", "help", "version"}

// skipEnv reads env's options and assignments and returns the command
// it runs. -S STRING (--split-string) is split as env splits it and read
// in its place, so "env -S'touch x' ls" is "touch x ls".
func (sc *shellCheck) skipEnv(args []token) []token {
	for splits := 0; len(args) > 0; {
		t := args[0]
		args = args[1:]
		value := func(v string) (token, bool) {
			if v != "" || t.dyn {
				return token{s: v, dyn: t.dyn, split: t.split, glob: t.glob}, true
			}
			if len(args) == 0 {
				return token{}, false
			}
			v0 := args[0]
			args = args[1:]
			return v0, true
		}
		var opt string // the option that takes a value: u, C or S
		var val string
		switch {
		case t.dyn && (t.s == "" || strings.HasPrefix(t.s, "-")):
			sc.ask("ask: env has an option computed at run time, which could split a string into a command")
			return nil
		case t.dyn:
			return append([]token{t}, args...)
		case t.s == "--":
			return args
		case strings.HasPrefix(t.s, "--"):
			name, v, eq := strings.Cut(t.s[2:], "=")
			long := ""
			for _, o := range envLongOpts {
				if o == name {
					long = o
					break
				}
				if name != "" && strings.HasPrefix(o, name) && (long == "" || o == "split-string") {
					long = o
				}
			}
			switch long {
			case "unset":
				opt = "u"
			case "chdir":
				opt = "C"
			case "split-string":
				opt = "S"
			}
			if opt == "" {
				continue
			}
			val = v
			if !eq {
				val = ""
			}
		case strings.HasPrefix(t.s, "-") && t.s != "-":
			for j := 1; j < len(t.s); j++ {
				if c := t.s[j]; c == 'u' || c == 'C' || c == 'S' {
					opt, val = string(c), t.s[j+1:]
					break
				}
			}
			if opt == "" {
				continue
			}
		case strings.Contains(t.s, "="):
			name, v, _ := strings.Cut(t.s, "=")
			sc.riskyAssign(name, token{s: v})
			continue
		default:
			return append([]token{t}, args...)
		}
		v, ok := value(val)
		if !ok {
			return nil
		}
		switch opt {
		case "C":
			sc.chdir(v)
		case "S":
			if splits++; splits > maxDepth || v.dyn {
				sc.ask("ask: env -S splits a string computed at run time into a command")
				return nil
			}
			words, ok := envSplit(v.s)
			if !ok {
				sc.ask("ask: env -S string could not be split as env splits it")
				return nil
			}
			args = append(words, args...)
		}
	}
	return nil
}

// envSplit splits an env -S string as GNU env does: blanks separate
// words; '…' is literal; "…" and bare text take backslash escapes (\_ is
// a blank inside a word, \c ends the string); # starts a comment at a
// word's start; ${NAME} expands at run time.
func envSplit(s string) ([]token, bool) {
	var out []token
	var cur token
	in := false
	flush := func() {
		if in {
			out = append(out, cur)
		}
		cur, in = token{}, false
	}
	add := func(c byte) {
		if !cur.dyn {
			cur.s += string(c)
		}
		in = true
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r':
			flush()
		case c == '#' && !in:
			return out, true
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			for _, b := range []byte(s[i+1 : i+1+j]) {
				add(b)
			}
			in = true
			i += j + 1
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
					if s[i] == 'c' {
						return nil, false // not allowed inside quotes
					}
					add(envEscape(s[i]))
					continue
				}
				if s[i] == '$' {
					cur.dyn, cur.split, in = true, false, true
					continue
				}
				add(s[i])
			}
			if i >= len(s) {
				return nil, false
			}
			in = true
		case c == '\\' && i+1 < len(s):
			i++
			if s[i] == 'c' {
				flush()
				return out, true
			}
			add(envEscape(s[i]))
		case c == '$':
			cur.dyn, in = true, true
		default:
			add(c)
		}
	}
	flush()
	return out, true
}

func envEscape(c byte) byte {
	switch c {
	case '_':
		return ' '
	case 't':
		return '\t'
	case 'n':
		return '\n'
	case 'v':
		return '\v'
	case 'f':
		return '\f'
	case 'r':
		return '\r'
	}
	return c
}
