package seatbelt

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/gitshadow"

	"github.com/harness-dev/harness/internal/sandbox/walls"
)

var update = flag.Bool("update", false, "rewrite golden files (a security profile's rewrite also fails the run, so it is reviewed)")

// sexp is one parsed SBPL expression: an atom, a string ("..." or a regex
// #"..."), or a list.
type sexp struct {
	atom, str string
	isStr     bool
	isRegex   bool
	list      []sexp
	isList    bool
}

func (e sexp) String() string {
	switch {
	case e.isList:
		var parts []string
		for _, c := range e.list {
			parts = append(parts, c.String())
		}
		return "(" + strings.Join(parts, " ") + ")"
	case e.isRegex:
		return `#"` + e.str + `"`
	case e.isStr:
		return fmt.Sprintf("%q", e.str)
	}
	return e.atom
}

// head is a list's first atom.
func (e sexp) head() string {
	if e.isList && len(e.list) > 0 && !e.list[0].isList {
		return e.list[0].atom
	}
	return ""
}

// parseSBPL parses a profile into its top-level forms; comments (;) are
// dropped. It fails on unbalanced parentheses or an unterminated string,
// as sandbox-exec would.
func parseSBPL(src string) ([]sexp, error) {
	i := 0
	var parse func() (sexp, error)
	skip := func() {
		for i < len(src) {
			switch {
			case src[i] == ';':
				for i < len(src) && src[i] != '\n' {
					i++
				}
			case strings.ContainsRune(" \t\r\n", rune(src[i])):
				i++
			default:
				return
			}
		}
	}
	str := func() (string, error) {
		i++ // opening quote
		var b strings.Builder
		for i < len(src) {
			c := src[i]
			switch c {
			case '\\':
				if i+1 >= len(src) {
					return "", fmt.Errorf("unterminated string")
				}
				b.WriteByte(src[i+1])
				i += 2
				continue
			case '"':
				i++
				return b.String(), nil
			}
			b.WriteByte(c)
			i++
		}
		return "", fmt.Errorf("unterminated string")
	}
	parse = func() (sexp, error) {
		skip()
		if i >= len(src) {
			return sexp{}, fmt.Errorf("unexpected end")
		}
		switch {
		case src[i] == '(':
			i++
			e := sexp{isList: true}
			for {
				skip()
				if i >= len(src) {
					return sexp{}, fmt.Errorf("unbalanced (")
				}
				if src[i] == ')' {
					i++
					return e, nil
				}
				c, err := parse()
				if err != nil {
					return sexp{}, err
				}
				e.list = append(e.list, c)
			}
		case src[i] == ')':
			return sexp{}, fmt.Errorf("unbalanced ) at %d", i)
		case src[i] == '"':
			s, err := str()
			return sexp{str: s, isStr: true}, err
		case strings.HasPrefix(src[i:], `#"`):
			i++
			s, err := str()
			return sexp{str: s, isStr: true, isRegex: true}, err
		}
		j := i
		for i < len(src) && !strings.ContainsRune(" \t\r\n();\"", rune(src[i])) {
			i++
		}
		return sexp{atom: src[j:i]}, nil
	}
	var out []sexp
	for {
		skip()
		if i >= len(src) {
			return out, nil
		}
		e, err := parse()
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
}

// walk calls f on e and every expression inside it.
func walk(e sexp, f func(sexp)) {
	f(e)
	for _, c := range e.list {
		walk(c, f)
	}
}

// rule is one (allow|deny op... filter...) form.
type rule struct {
	action  string
	ops     []string
	filters []sexp
	at      int // position among the top-level forms
}

func rules(forms []sexp) []rule {
	var out []rule
	for n, f := range forms {
		if h := f.head(); h != "allow" && h != "deny" {
			continue
		}
		r := rule{action: f.head(), at: n}
		for _, c := range f.list[1:] {
			if c.isList {
				r.filters = append(r.filters, c)
			} else {
				r.ops = append(r.ops, c.atom)
			}
		}
		out = append(out, r)
	}
	return out
}

// unfiltered are the operations a profile may allow without a filter.
var unfiltered = map[string]bool{
	"process-exec": true, "process-fork": true, "file-read*": true, "pseudo-tty": true,
	"ipc-posix-sem": true, "user-preference-read": true, "mach-host*": true,
}

// profileProblems checks a generated profile by its structure: what it
// allows, with which filters, in which order. It lists what is wrong.
func profileProblems(profile string, params []string, p *walls.Policy) (problems []string) {
	add := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	forms, err := parseSBPL(profile)
	if err != nil {
		return []string{"the profile does not parse: " + err.Error()}
	}
	if len(forms) < 2 || forms[0].String() != "(version 1)" || forms[1].String() != "(deny default)" {
		add("the profile must start (version 1) (deny default)")
	}
	defined := map[string]string{}
	for _, kv := range params {
		k, v, _ := strings.Cut(kv, "=")
		defined[k] = v
	}
	used := map[string]bool{}
	for _, f := range forms {
		if h := f.head(); h == "import" || h == "include" {
			add("the profile leans on another profile: %s", f)
		}
		walk(f, func(e sexp) {
			if e.head() == "param" {
				if len(e.list) != 2 || !e.list[1].isStr {
					add("malformed %s", e)
					return
				}
				if _, ok := defined[e.list[1].str]; !ok {
					add("%s is not a -D parameter", e)
				}
				used[e.list[1].str] = true
			}
			if e.isStr && !e.isRegex && strings.HasPrefix(e.str, "/") && !strings.HasPrefix(e.str, "/dev/") {
				add("a path is spliced into the profile: %s", e)
			}
		})
	}
	for k := range defined {
		if !used[k] {
			add("parameter %s is passed but never used", k)
		}
	}
	pos := map[string]int{}
	for _, r := range rules(forms) {
		for _, op := range r.ops {
			if r.action == "allow" && op == "default" {
				add("(allow default)")
			}
			if r.action == "allow" && len(r.filters) == 0 && !unfiltered[op] {
				add("%s is allowed without a filter", op)
			}
			if r.action == "allow" && strings.HasPrefix(op, "network") {
				for _, f := range r.filters {
					s := f.String()
					unixInTmp := regexp.MustCompile(`^\((local|remote) unix-socket \(subpath \(param "SOCK_\d+"\)\)\)$`).MatchString(s)
					loop := regexp.MustCompile(`^\((local|remote) ip "localhost:\*"\)$`).MatchString(s)
					if !unixInTmp && !(p.LoopbackTCP() && loop) {
						add("network allowed beyond the session's unix sockets: (allow %s %s)", op, s)
					}
				}
				if len(r.filters) == 0 {
					add("(allow %s) with no filter", op)
				}
			}
			if r.action == "allow" && op == "sysctl-read" {
				for _, f := range r.filters {
					if h := f.head(); (h != "sysctl-name" && h != "sysctl-name-prefix") || len(f.list) != 2 || !f.list[1].isStr {
						add("sysctl-read allowed by something other than a name: %s", f)
						continue
					}
					if name := f.list[1].str; strings.HasPrefix(name, "kern.procargs") || name == "kern." || name == "kern.proc." || name == "" {
						add("sysctl-read allows %q: any process's arguments and environment", name)
					}
				}
			}
			if r.action == "allow" && op == "mach-lookup" {
				for _, f := range r.filters {
					if !regexp.MustCompile(`^\((global|local)-name "com\.apple\.(system\.opendirectoryd\.libinfo|cfprefsd\.daemon|cfprefsd\.agent)"\)$`).MatchString(f.String()) {
						add("mach-lookup of an unnamed or network-capable service: %s", f)
					}
				}
			}
			if r.action == "allow" {
				for _, f := range r.filters {
					if tty := strings.Contains(f.String(), "/dev/tty") || strings.Contains(f.String(), "^/dev/tty"); tty &&
						!strings.Contains(f.String(), `(extension "com.apple.sandbox.pty")`) {
						add("a terminal the command did not create is allowed: (allow %s %s)", op, f)
					}
				}
			}
			key := r.action + " " + op
			if _, ok := pos[key]; !ok {
				pos[key] = r.at
			}
			pos[key+" last"] = r.at
		}
	}
	// Denials come after the grants they carve into (the last matching
	// rule wins): find each by what it names.
	find := func(action, op, names string) int {
		for _, r := range rules(forms) {
			if r.action != action || !gitshadow.Contains(r.ops, op) {
				continue
			}
			var fs []string
			for _, f := range r.filters {
				fs = append(fs, f.String())
			}
			if joined := strings.Join(fs, " "); names == "" && len(fs) == 0 || names != "" && strings.Contains(joined, names) {
				return r.at
			}
		}
		return -1
	}
	for _, o := range []struct{ first, then [3]string }{
		{[3]string{"allow", "file-read*", ""}, [3]string{"deny", "file-read*", `"DENY_0"`}},
		{[3]string{"allow", "file-read*", ""}, [3]string{"deny", "file-read*", `"/dev/tty"`}},
		{[3]string{"deny", "file-read*", `"/dev/tty"`}, [3]string{"allow", "file-read*", `com.apple.sandbox.pty`}},
		{[3]string{"allow", "file-write*", `"WRITE_0"`}, [3]string{"deny", "file-write*", `"RE_0"`}},
		{[3]string{"allow", "file-write*", `"WRITE_0"`}, [3]string{"deny", "file-write*", `"RO_0"`}},
	} {
		i, j := find(o.first[0], o.first[1], o.first[2]), find(o.then[0], o.then[1], o.then[2])
		switch {
		case o.then[2] == `"RO_0"` && len(p.ReadOnly())+len(p.Protected()) == 0:
		case o.then[2] == `"DENY_0"` && len(p.DenyRead()) == 0:
		case i < 0 || j < 0:
			add("missing (%s %s %s) or (%s %s %s)", o.first[0], o.first[1], o.first[2], o.then[0], o.then[1], o.then[2])
		case j <= i:
			add("(%s %s %s) must come after (%s %s %s), which it overrides", o.then[0], o.then[1], o.then[2], o.first[0], o.first[1], o.first[2])
		}
	}
	// A secret mapped executable is read too.
	for _, r := range rules(forms) {
		if r.action == "deny" && gitshadow.Contains(r.ops, "file-read*") && len(r.filters) > 0 && strings.Contains(r.filters[0].String(), `"DENY_0"`) && !gitshadow.Contains(r.ops, "file-map-executable") {
			add("the secrets' denial leaves file-map-executable open: (deny %s)", strings.Join(r.ops, " "))
		}
	}
	// The name patterns are parameters too: they compile, catch every case
	// of a new .git and leave .gitignore alone.
	for k, v := range defined {
		if !strings.HasPrefix(k, "RE_") {
			continue
		}
		if _, err := regexp.Compile(v); err != nil {
			add("%s=%s does not compile: %v", k, v, err)
		}
	}
	return problems
}

func plainFixture() walls.Fixture {
	return walls.Fixture{
		Project:   "/Users/me/proj",
		Writable:  []string{"/Users/me/proj"},
		ReadOnly:  []string{"/Users/me/proj/.git", "/Users/me/proj/.agents"},
		Protected: []string{"/Users/me/proj/.git", "/Users/me/proj/.agents", "/Users/me/proj/.githooks"},
		DenyRead:  []string{"/Users/me/.ssh", "/Users/me/.agents/env", "/Users/me/Library/Keychains"},
		Timeout:   time.Minute,
	}
}

func testPolicies() []struct {
	name string
	pol  *walls.Policy
} {
	return []struct {
		name string
		pol  *walls.Policy
	}{
		{"plain", plainFixture().Build()},
		{"hostile-names", walls.Fixture{
			Project:   `/Users/me/a "b") (allow file-write* (subpath "/"))`,
			Writable:  []string{`/Users/me/a "b") (allow file-write* (subpath "/"))`, "/private/tmp/extra dir"},
			ReadOnly:  []string{`/Users/me/a "b") (allow file-write* (subpath "/"))/.git`, `/Users/me/a "b") (allow file-write* (subpath "/"))/vendor/x/.git`},
			Protected: []string{`/Users/me/a "b") (allow file-write* (subpath "/"))/.git`, `/Users/me/a "b") (allow file-write* (subpath "/"))/.h[o]oks$`},
			DenyRead:  []string{"/Users/me/.ssh"},
		}.Build()},
		{"loopback", walls.Fixture{
			Project:     "/Users/me/proj",
			Writable:    []string{"/Users/me/proj"},
			Protected:   []string{"/Users/me/proj/.git"},
			DenyRead:    []string{"/Users/me/.ssh"},
			LoopbackTCP: true,
		}.Build()},
	}
}

// TestSeatbeltProfile checks the generated macOS profile by its structure
// (TestSeatbeltInvariantsCatch shows each check can fail), then against
// golden files so any change to it is seen in review.
func TestSeatbeltProfile(t *testing.T) {
	for _, tt := range testPolicies() {
		t.Run(tt.name, func(t *testing.T) {
			profile, params := seatbeltProfile(tt.pol, "/private/var/folders/xy/T/harness-session-1")
			if strings.Contains(profile, "/Users") || strings.Contains(profile, "/private/") {
				t.Errorf("a path was spliced into the profile:\n%s", profile)
			}
			if problems := profileProblems(profile, params, tt.pol); len(problems) > 0 {
				// Never write a golden that breaks an invariant.
				t.Fatalf("the profile breaks its invariants:\n  %s\n%s", strings.Join(problems, "\n  "), profile)
			}
			got := profile + "\n;; parameters\n" + strings.Join(params, "\n") + "\n"
			golden := filepath.Join("testdata", "seatbelt", tt.name+".golden")
			want, _ := os.ReadFile(golden)
			if *update && got != string(want) {
				os.MkdirAll(filepath.Dir(golden), 0o755)
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Fatalf("rewrote %s: a security profile changed; review `git diff %s` before committing, then rerun without -update", golden, golden)
			}
			if got != string(want) {
				t.Errorf("profile differs from %s (review the change, then go test -run TestSeatbeltProfile -update):\n%s", golden, got)
			}
		})
	}
}

// TestSeatbeltRegexes: the name patterns (passed as parameters) match every
// spelling of a carve-out and nothing beside it.
func TestSeatbeltRegexes(t *testing.T) {
	git := regexp.MustCompile(gitNameRegex("/Users/me/my proj (1)"))
	for path, want := range map[string]bool{
		"/Users/me/my proj (1)/.git":                       true,
		"/Users/me/my proj (1)/.GIT/config":                true,
		"/Users/me/my proj (1)/sub/deep/.Git":              true,
		"/users/ME/my proj (1)/sub/.gIt/hooks/x":           true,
		"/Users/me/my proj (1)/.gitignore":                 false,
		"/Users/me/my proj (1)/.github/ci.yml":             false,
		"/Users/me/my proj (1)/src/x.git":                  false,
		"/Users/me/my proj (1)x/.git":                      false,
		"/Users/me/my proj 11/.git":                        false, // ( ) are literal, not a group
		"/Users/me/other/.git":                             false,
		"/Users/me/my proj (1)/.git.bak/../.config":        false,
		"/System/Volumes/Data/Users/me/my proj (1)/x/.GIT": true, // through the firmlink
		"/system/volumes/DATA/Users/me/my proj (1)/.git":   true,
		"/Users/me/my proj (1)/x/.gi":                      false,
	} {
		if got := git.MatchString(path); got != want {
			t.Errorf("gitNameRegex matches %q = %v, want %v", path, got, want)
		}
	}
	hooks := regexp.MustCompile(pathRegex("/Users/me/p/.hooks$[x]"))
	for path, want := range map[string]bool{
		"/Users/me/p/.hooks$[x]":                       true,
		"/USERS/me/P/.HOOKS$[X]/pre":                   true,
		"/Users/me/p/.hoo\u212as$[x]":                  true, // the Kelvin sign is k on APFS
		"/U\u017fers/me/p/.hook\u017f$[x]":             true, // the long s is s
		"/System/Volumes/Data/Users/me/p/.hooks$[x]/x": true,
		"/Users/me/p/.hoo\u212a$[x]":                   false,
		"/Users/me/p/.hooks$x":                         false,
		"/Users/me/p/.hooks$[x]-other":                 false,
	} {
		if got := hooks.MatchString(path); got != want {
			t.Errorf("pathRegex matches %q = %v, want %v", path, got, want)
		}
	}
}

// TestSeatbeltInvariantsCatch: each structural check fails on a profile
// that breaks it, so a passing run means something.
func TestSeatbeltInvariantsCatch(t *testing.T) {
	pol := testPolicies()[0].pol
	good, params := seatbeltProfile(pol, "/private/var/folders/xy/T/s")
	for name, bad := range map[string]string{
		"allow network":         good + "\n(allow network-outbound)\n",
		"allow network ip":      good + "\n(allow network-outbound (remote ip \"*:443\"))\n",
		"loopback not asked":    good + "\n(allow network-outbound (remote ip \"localhost:*\"))\n",
		"blanket sysctl":        good + "\n(allow sysctl-read)\n",
		"procargs":              good + "\n(allow sysctl-read (sysctl-name \"kern.procargs2\"))\n",
		"sysctl by regex":       good + "\n(allow sysctl-read (sysctl-name-regex #\".*\"))\n",
		"tty":                   good + "\n(allow file-write* (literal \"/dev/tty\"))\n",
		"user terminals":        good + "\n(allow file-read* file-write* (regex #\"^/dev/ttys[0-9]+$\"))\n",
		"trustd":                good + "\n(allow mach-lookup (global-name \"com.apple.trustd.agent\"))\n",
		"system.sb":             strings.Replace(good, "(deny default)", "(deny default)\n(import \"system.sb\")", 1),
		"allow default":         good + "\n(allow default)\n",
		"spliced path":          good + "\n(deny file-read* (subpath \"/Users/me/.aws\"))\n",
		"unbalanced":            good + "\n(deny file-read*\n",
		"secret deny too early": strings.Replace(good, "(allow file-read*)\n", "", 1) + "\n(allow file-read*)\n",
		"secrets mappable":      strings.Replace(good, "(deny file-read* file-write* file-map-executable", "(deny file-read* file-write*", 1),
	} {
		t.Run(name, func(t *testing.T) {
			if len(profileProblems(bad, params, pol)) == 0 {
				t.Errorf("the invariants accept a profile with %s", name)
			}
		})
	}
}

// TestSeatbeltArgs: the sandbox-exec command line passes the profile and
// every path as -D, ends its options with --, and the environment points
// darwin's caches (which ignore XDG_CACHE_HOME) at writable places.
func TestSeatbeltArgs(t *testing.T) {
	fix := plainFixture()
	fix.Env = []string{"PATH=/usr/bin:/bin", "HOME=/Users/me"}
	pol := fix.Build()
	tmp := "/private/var/folders/xy/T/harness-session-1"
	argv, env := seatbeltArgs(pol, tmp)
	if argv[0] != "/usr/bin/sandbox-exec" || argv[1] != "-p" || argv[len(argv)-1] != "--" {
		t.Fatalf("argv = %q", argv[:2])
	}
	profile, params := seatbeltProfile(pol, tmp)
	if argv[2] != profile {
		t.Error("argv[2] is not the profile")
	}
	rest := argv[3 : len(argv)-1]
	if len(rest) != 2*len(params) {
		t.Fatalf("%d -D arguments for %d parameters", len(rest)/2, len(params))
	}
	for i, kv := range params {
		if rest[2*i] != "-D" || rest[2*i+1] != kv {
			t.Errorf("argument %d = %q %q, want -D %q", i, rest[2*i], rest[2*i+1], kv)
		}
	}
	get := func(env []string, k string) string {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				return v
			}
		}
		return ""
	}
	for _, k := range []string{"TMPDIR", "GOCACHE", "CLANG_MODULE_CACHE_PATH", "GOLANGCI_LINT_CACHE", "STATICCHECK_CACHE", "YARN_CACHE_FOLDER"} {
		if v := get(env, k); !strings.HasPrefix(v, tmp) {
			t.Errorf("%s=%q, want it under the session's directory", k, v)
		}
	}
	if get(env, "HARNESS_SANDBOX") != "seatbelt" {
		t.Error("HARNESS_SANDBOX is not seatbelt")
	}
	fix.Cache = "/Users/me/.cache/harness/proj-1"
	pol = fix.Build()
	_, env = seatbeltArgs(pol, tmp)
	if v := get(env, "CLANG_MODULE_CACHE_PATH"); !strings.HasPrefix(v, pol.Cache()) {
		t.Errorf("with a project cache, CLANG_MODULE_CACHE_PATH=%q", v)
	}
	profile, params = seatbeltProfile(pol, tmp)
	if !gitshadow.Contains(params, "WRITE_1="+pol.Cache()) {
		t.Errorf("the project's cache is not writable: %q", params)
	}
	if problems := profileProblems(profile, params, pol); len(problems) > 0 {
		t.Errorf("with a cache: %q", problems)
	}
}
