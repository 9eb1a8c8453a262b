package permission

import (
	"strings"
	"sync"
)

// Each tool whose options can write a file or run a program is described
// once, by its option grammar: which options take a value and what that
// value is. The parser then sees every spelling the tool itself accepts —
// bundled short options (-ao FILE), attached values (-oFILE, --output=FILE),
// separate values, and the unique prefixes getopt_long and git accept
// (--out FILE) — so no glob per spelling is needed and none is missed.

// role says what an option's value (or an operand) is to the tool.
type role uint8

const (
	rPlain   role = iota
	rWrite        // a file the tool writes: decided like write_file
	rRead         // a file the tool reads: secrets are refused
	rRun          // a program or command the tool runs: asks
	rAsk          // the option itself does more than read (why says what): asks
	rName         // a shell variable the shell assigns, subscript evaluated
	rScript       // a sed script: checked for commands that write or run
	rInPlace      // sed -i: the file operands are rewritten
	// rDir: a directory or file whose code or config the tool runs or
	// loads (make -C, pytest -c, cargo --manifest-path): allowed when it
	// is a literal path inside the project, asked about elsewhere (the
	// private /tmp is anyone's to fill).
	rDir
)

type argKind uint8

const (
	noArg argKind = iota
	needArg
	optArg // only attached: --opt=VALUE, -oVALUE
)

type opt struct {
	short byte   // 0: long only
	long  string // "": short only
	arg   argKind
	role  role
	why   string // for rAsk
	// ok, when set, says a value is harmless whatever the role (pytest
	// -p no:NAME disables a plugin); bad says it asks whatever the role
	// (cargo --config KEY=VALUE), with why.
	ok, bad func(v string) bool
}

// spec is one tool's option grammar.
type spec struct {
	opts []opt
	// abbrev: a long option may be shortened to a prefix (getopt_long,
	// git's parse-options). A prefix of several is ambiguous to the tool
	// (an error), but the gate takes the strictest reading.
	abbrev bool
	// oneDash: Go flag style: -name and --name alike, no bundling.
	oneDash bool
	// posix: options end at the first operand (time, a wrapper).
	posix bool
	// operands are the roles of the operands in order; the last repeats.
	operands []role
	// strip is a prefix long names may carry ("test." of go test's
	// -test.coverprofile, which the test binary reads too).
	strip string
}

func (s *spec) risky() bool {
	for _, o := range s.opts {
		if o.role != rPlain {
			return true
		}
	}
	for _, r := range s.operands {
		if r == rWrite || r == rRun {
			return true
		}
	}
	return false
}

// use is one option as the tool will read it.
type use struct {
	o     *opt   // nil: a word computed at run time in an option's place
	spell string // as written, for messages: "-o", "--output", "-ao"
	val   token
	has   bool // val is set
}

func (s *spec) short(c byte) *opt {
	for i := range s.opts {
		if s.opts[i].short == c {
			return &s.opts[i]
		}
	}
	return nil
}

// long finds a long option by exact name or, when the tool accepts
// abbreviations, by prefix: of several candidates the one with the
// strictest role is taken.
func (s *spec) long(name string) *opt {
	if s.strip != "" {
		name = strings.TrimPrefix(name, s.strip)
	}
	var best *opt
	for i := range s.opts {
		o := &s.opts[i]
		if o.long == "" {
			continue
		}
		if o.long == name {
			return o
		}
		if s.abbrev && len(name) > 0 && strings.HasPrefix(o.long, name) && (best == nil || o.role > best.role) {
			best = o
		}
	}
	return best
}

// parse splits args into the options the tool will see and its operands.
func (s *spec) parse(args []token) (uses []use, operands []token) {
	done := false
	for i := 0; i < len(args); i++ {
		t := args[i]
		if done || (!t.dyn && (t.s == "-" || !strings.HasPrefix(t.s, "-"))) ||
			(t.dyn && t.s != "" && !strings.HasPrefix(t.s, "-")) {
			operands = append(operands, t)
			if s.posix {
				done = true
			}
			continue
		}
		if t.dyn && (t.s == "" || t.s == "-" || t.s == "--" || strings.HasPrefix(t.s, "--") || s.oneDash) {
			// Could be any option (or an operand): the caller decides
			// how strict to be.
			uses = append(uses, use{spell: render([]token{t})})
			continue
		}
		if t.s == "--" {
			done = true
			continue
		}
		next := func() (token, bool) {
			if i+1 < len(args) {
				i++
				return args[i], true
			}
			return token{}, false
		}
		if s.oneDash || strings.HasPrefix(t.s, "--") {
			name, val, eq := strings.Cut(strings.TrimLeft(t.s, "-"), "=")
			o := s.long(name)
			if o == nil {
				continue // unknown to us; the tool refuses it or it is harmless
			}
			u := use{o: o, spell: "--" + name}
			if s.oneDash {
				u.spell = "-" + name
			}
			switch {
			case eq:
				u.val, u.has = token{s: val, dyn: t.dyn, split: t.split, glob: t.glob}, true
			case o.arg == needArg:
				u.val, u.has = next()
			}
			uses = append(uses, u)
			continue
		}
		// A bundle of short options: -abc, -oFILE, -ao FILE.
		for j := 1; j < len(t.s); j++ {
			o := s.short(t.s[j])
			if o == nil {
				continue
			}
			u := use{o: o, spell: t.s[:j+1]}
			if o.arg != noArg {
				if rest := t.s[j+1:]; rest != "" || t.dyn {
					u.val, u.has = token{s: rest, dyn: t.dyn, split: t.split, glob: t.glob}, true
				} else if o.arg == needArg {
					u.val, u.has = next()
				}
				uses = append(uses, u)
				break
			}
			uses = append(uses, u)
			if t.dyn && j == len(t.s)-1 {
				// More letters (or a value) are computed at run time.
				uses = append(uses, use{spell: render([]token{t})})
			}
		}
		if t.dyn && len(t.s) == 1 {
			uses = append(uses, use{spell: render([]token{t})})
		}
	}
	return uses, operands
}

func (s *spec) operandRole(i int) role {
	if len(s.operands) == 0 {
		return rPlain
	}
	if i >= len(s.operands) {
		return s.operands[len(s.operands)-1]
	}
	return s.operands[i]
}

// Option grammars, from each tool's manual (GNU coreutils, findutils,
// tree 2.x, file 5.x, ripgrep 14, bash builtins; go's are in runners.go).
var (
	specTee = &spec{abbrev: true, operands: []role{rWrite}, opts: []opt{
		{short: 'a', long: "append"}, {short: 'i', long: "ignore-interrupts"}, {short: 'p'},
		{long: "output-error", arg: optArg},
	}}
	specSort = &spec{abbrev: true, opts: []opt{
		{short: 'o', long: "output", arg: needArg, role: rWrite},
		{short: 'T', long: "temporary-directory", arg: needArg, role: rWrite},
		{long: "compress-program", arg: needArg, role: rRun},
		{long: "files0-from", arg: needArg, role: rRead},
		{long: "random-source", arg: needArg, role: rRead},
		{short: 'k', long: "key", arg: needArg}, {short: 't', long: "field-separator", arg: needArg},
		{short: 'S', long: "buffer-size", arg: needArg}, {long: "parallel", arg: needArg},
		{long: "batch-size", arg: needArg}, {long: "sort", arg: needArg},
		{long: "check", arg: optArg}, {long: "debug"},
	}}
	specUniq = &spec{abbrev: true, operands: []role{rRead, rWrite, rPlain}, opts: []opt{
		{short: 'f', long: "skip-fields", arg: needArg}, {short: 's', long: "skip-chars", arg: needArg},
		{short: 'w', long: "check-chars", arg: needArg}, {long: "all-repeated", arg: optArg},
		{long: "group", arg: optArg},
	}}
	// GNU time; its operands are the command it runs.
	specTime = &spec{abbrev: true, posix: true, opts: []opt{
		{short: 'o', long: "output", arg: needArg, role: rWrite},
		{short: 'f', long: "format", arg: needArg}, {short: 'a', long: "append"},
		{short: 'p', long: "portability"}, {short: 'v', long: "verbose"}, {short: 'q', long: "quiet"},
	}}
	specTree = &spec{opts: []opt{
		{short: 'o', arg: needArg, role: rWrite},
		{short: 'R', role: rAsk, why: "writes 00Tree.html into every directory it lists"},
		{short: 'L', arg: needArg}, {short: 'P', arg: needArg}, {short: 'I', arg: needArg},
		{short: 'H', arg: needArg}, {short: 'T', arg: needArg},
		{long: "charset", arg: needArg}, {long: "filelimit", arg: needArg},
		{long: "timefmt", arg: needArg}, {long: "sort", arg: needArg},
		{long: "gitfile", arg: needArg, role: rRead}, {long: "infofile", arg: needArg, role: rRead},
		{long: "hintro", arg: needArg, role: rRead}, {long: "houtro", arg: needArg, role: rRead},
	}}
	specFile = &spec{abbrev: true, opts: []opt{
		{short: 'C', long: "compile", role: rWrite}, // handled by fileCompile
		{short: 'm', long: "magic-file", arg: needArg, role: rRead},
		{short: 'f', long: "files-from", arg: needArg, role: rRead},
		{short: 'F', long: "separator", arg: needArg}, {short: 'e', long: "exclude", arg: needArg},
		{long: "exclude-quiet", arg: needArg}, {short: 'P', long: "parameter", arg: needArg},
	}}
	specRg = &spec{opts: []opt{
		{long: "pre", arg: needArg, role: rRun},
		{long: "hostname-bin", arg: needArg, role: rRun},
		{short: 'f', long: "file", arg: needArg, role: rRead},
		{long: "ignore-file", arg: needArg, role: rRead},
		{short: 'e', long: "regexp", arg: needArg}, {short: 'g', long: "glob", arg: needArg},
		{long: "iglob", arg: needArg}, {short: 't', long: "type", arg: needArg},
		{short: 'T', long: "type-not", arg: needArg}, {long: "type-add", arg: needArg},
		{long: "type-clear", arg: needArg}, {short: 'm', long: "max-count", arg: needArg},
		{short: 'A', long: "after-context", arg: needArg}, {short: 'B', long: "before-context", arg: needArg},
		{short: 'C', long: "context", arg: needArg}, {short: 'j', long: "threads", arg: needArg},
		{short: 'M', long: "max-columns", arg: needArg}, {short: 'r', long: "replace", arg: needArg},
		{short: 'E', long: "encoding", arg: needArg}, {short: 'd', long: "max-depth", arg: needArg},
		{long: "maxdepth", arg: needArg}, {long: "max-filesize", arg: needArg},
		{long: "dfa-size-limit", arg: needArg}, {long: "regex-size-limit", arg: needArg},
		{long: "context-separator", arg: needArg}, {long: "field-context-separator", arg: needArg},
		{long: "field-match-separator", arg: needArg}, {long: "path-separator", arg: needArg},
		{long: "colors", arg: needArg}, {long: "color", arg: needArg}, {long: "sort", arg: needArg},
		{long: "sortr", arg: needArg}, {long: "engine", arg: needArg}, {long: "generate", arg: needArg},
		{long: "hyperlink-format", arg: needArg}, {long: "pre-glob", arg: needArg},
	}}
	// bash's printf builtin: -v NAME assigns instead of printing.
	specPrintf = &spec{posix: true, opts: []opt{{short: 'v', arg: needArg, role: rName}}}
	specRead   = &spec{opts: []opt{
		{short: 'a', arg: needArg, role: rName}, {short: 'd', arg: needArg}, {short: 'i', arg: needArg},
		{short: 'n', arg: needArg}, {short: 'N', arg: needArg}, {short: 'p', arg: needArg},
		{short: 't', arg: needArg}, {short: 'u', arg: needArg},
	}, operands: []role{rName}}
	specMapfile = &spec{opts: []opt{
		{short: 'C', arg: needArg, role: rRun}, {short: 'c', arg: needArg}, {short: 'd', arg: needArg},
		{short: 'n', arg: needArg}, {short: 'O', arg: needArg}, {short: 's', arg: needArg},
		{short: 'u', arg: needArg},
	}, operands: []role{rName}}
	specSed = &spec{abbrev: true, opts: []opt{
		{short: 'e', long: "expression", arg: needArg, role: rScript},
		{short: 'f', long: "file", arg: needArg, role: rAsk, why: "reads its script from a file, which is not checked"},
		{short: 'i', long: "in-place", arg: optArg, role: rInPlace},
		{short: 'l', long: "line-length", arg: needArg},
		{short: 's', long: "separate"}, {short: 'n', long: "quiet"}, {long: "silent"},
		{short: 'E', long: "regexp-extended"}, {short: 'r'}, {short: 'u', long: "unbuffered"},
		{short: 'z', long: "null-data"}, {long: "posix"}, {long: "debug"}, {long: "sandbox"},
		{long: "follow-symlinks"}, {short: 'b', long: "binary"},
	}}
)

// base64: GNU's has no output option; the BSD one (macOS) writes -o FILE.
var specBase64 = &spec{abbrev: true, opts: []opt{
	{short: 'o', long: "output", arg: needArg, role: rWrite},
	{short: 'w', long: "wrap", arg: needArg}, {short: 'b', long: "break", arg: needArg},
	{long: "input", arg: needArg, role: rRead},
}}

// Pagers: not allowed by default, but a user's "allow bash less *" or
// "allow bash man *" must not cover the options that run or write.
var (
	specLess = &spec{opts: []opt{
		{short: 'o', long: "log-file", arg: needArg, role: rWrite},
		{short: 'O', long: "LOG-FILE", arg: needArg, role: rWrite},
		{short: 'k', long: "lesskey-file", arg: needArg, role: rAsk, why: "reads key bindings that can run commands"},
		{long: "lesskey-src", arg: needArg, role: rAsk, why: "reads key bindings that can run commands"},
		{long: "lesskey-content", arg: needArg, role: rAsk, why: "sets key bindings that can run commands"},
		{short: 'b', arg: needArg}, {short: 'h', arg: needArg}, {short: 'j', arg: needArg},
		{short: 'p', long: "pattern", arg: needArg}, {short: 'P', long: "prompt", arg: needArg},
		{short: 't', long: "tag", arg: needArg}, {short: 'T', long: "tag-file", arg: needArg, role: rRead},
		{short: 'x', long: "tabs", arg: needArg}, {short: 'y', arg: needArg}, {short: 'z', arg: needArg},
		{short: '#', arg: needArg},
	}}
	specMan = &spec{abbrev: true, opts: []opt{
		{short: 'P', long: "pager", arg: needArg, role: rRun},
		{short: 'H', long: "html", arg: optArg, role: rRun},
		{short: 'X', long: "gxditview", arg: optArg, role: rRun},
		{short: 'C', long: "config-file", arg: needArg, role: rRead},
		{short: 'M', long: "manpath", arg: needArg}, {short: 'S', long: "sections", arg: needArg},
		{short: 's', arg: needArg}, {short: 'L', long: "locale", arg: needArg},
		{short: 'm', long: "systems", arg: needArg}, {short: 'p', long: "preprocessor", arg: needArg},
		{short: 'E', long: "encoding", arg: needArg}, {short: 'R', long: "recode", arg: needArg},
		{short: 'T', long: "troff-device", arg: optArg},
	}}
)

// specs are the tools checked by their option grammar wherever they run.
var specs = sync.OnceValue(func() map[string]*spec {
	return map[string]*spec{
		"base64": specBase64, "less": specLess, "man": specMan,
		"tee": specTee, "sort": specSort, "uniq": specUniq, "tree": specTree, "file": specFile,
		"rg": specRg, "printf": specPrintf, "read": specRead, "mapfile": specMapfile,
		"readarray": specMapfile,
	}
})

// applySpec checks the options and operands of one command by its
// grammar and returns the operands.
func (sc *shellCheck) applySpec(name string, s *spec, args []token) []token {
	uses, ops := s.parse(args)
	for _, u := range uses {
		if u.o == nil {
			if s.risky() {
				sc.ask("ask: " + name + " has an option computed at run time (" + u.spell + "), which could be one that writes a file or runs a program")
			}
			continue
		}
		what := name + " " + u.spell
		if u.has && !u.val.dyn && u.o.ok != nil && u.o.ok(u.val.s) {
			continue
		}
		if u.has && (u.val.dyn || (u.o.bad != nil && u.o.bad(u.val.s))) && (u.o.bad != nil || u.o.ok != nil) {
			sc.ask("ask: " + what + " " + u.o.why)
			continue
		}
		switch u.o.role {
		case rWrite:
			if u.has {
				sc.writeAs(u.val, what)
			}
		case rRead:
			if u.has {
				sc.read(u.val)
			}
		case rRun:
			sc.ask("ask: " + what + " runs a program")
		case rAsk:
			sc.ask("ask: " + what + " " + u.o.why)
		case rName:
			if u.has {
				sc.evalName(u.val, what)
			}
		case rDir:
			if u.has {
				sc.inProject(u.val, what, u.o.why)
			}
		}
	}
	for i, t := range ops {
		switch s.operandRole(i) {
		case rWrite:
			sc.writeAs(t, name)
		case rName:
			sc.evalName(t, name)
		}
	}
	return ops
}

// fileCompile: file -C writes NAME.mgc into the working directory for each
// magic file NAME given with -m (magic.mgc by default).
func (sc *shellCheck) fileCompile(args []token) {
	uses, _ := specFile.parse(args)
	compile := false
	var magic []token
	for _, u := range uses {
		if u.o == nil {
			continue
		}
		switch u.o.long {
		case "compile":
			compile = true
		case "magic-file":
			if u.has {
				magic = append(magic, u.val)
			}
		}
	}
	if !compile {
		return
	}
	if len(magic) == 0 {
		sc.writeAs(token{s: "magic.mgc"}, "file -C")
		return
	}
	for _, m := range magic {
		if m.dyn {
			sc.ask("ask: file -C writes a file named after a magic file computed at run time")
			continue
		}
		for _, p := range strings.Split(m.s, ":") {
			if p == "" {
				continue
			}
			base := p[strings.LastIndexByte(p, '/')+1:]
			sc.writeAs(token{s: base + ".mgc"}, "file -C")
		}
	}
}
