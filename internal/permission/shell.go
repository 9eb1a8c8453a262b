package permission

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// part is the verdict on one thing a script would do: run a command, write
// through a redirection, set a variable that changes what runs later.
type part struct {
	v       Verdict
	rule    string
	reason  string
	what    string
	pattern tpat // narrowest allow pattern; zero when no rule could cover it
}

// shellCheck walks one bash command. Every simple command anywhere in the
// tree is checked; strings that are run later (eval, sh -c, aliases, traps,
// find -exec, xargs) are parsed and checked the same way.
type shellCheck struct {
	g        *Gate
	rs       *ruleSet
	cwd      string // "" once unknown (cd to a computed directory)
	parts    []part
	depth    int
	what     string          // the command being checked, for Parts
	taint    map[string]bool // variables set to text computed at run time
	taintAll bool            // a nameref: any name may be any variable
	repos    map[string]repoResult
	reads    map[string]wall // readWall per path, for this decision
}

type wall struct{ rule, reason string }

const maxDepth = 8

// systemDirs hold programs that are the same as their bare names.
var systemDirs = []string{"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin"}

func (g *Gate) decideBash(rs *ruleSet, cmd string) Decision {
	d := Decision{tool: "bash"}
	if strings.TrimSpace(cmd) == "" {
		d.Verdict, d.Rule = Allow, "empty command"
		return d
	}
	sc := &shellCheck{g: g, rs: rs, cwd: g.o.Project, taint: map[string]bool{}, repos: map[string]repoResult{}, reads: map[string]wall{}}
	sc.script(cmd, false)
	d.Verdict, d.Rule = Allow, "no command runs"
	weak := true // d.Rule says nothing of a command: "no command runs", a free write
	for _, p := range sc.parts {
		if p.v > d.Verdict || (p.v == d.Verdict && weak && !strings.HasPrefix(p.rule, "free: ")) {
			d.Verdict, d.Rule, d.Reason = p.v, p.rule, p.reason
			weak = false
		} else if p.v == d.Verdict && d.Rule == "no command runs" {
			d.Rule = p.rule
		}
		d.Parts = append(d.Parts, Part{What: p.what, Verdict: p.v, Rule: p.rule})
	}
	if g.o.Unsandboxed && d.Verdict != Deny {
		if d.Verdict == Allow {
			d.Rule = "ask: no sandbox (backend none), every command needs approval (was: " + d.Rule + ")"
		}
		d.Verdict = Ask
		return d
	}
	if d.Verdict == Ask {
		for _, p := range sc.parts {
			if p.v != Ask {
				continue
			}
			if p.pattern.pat == "" {
				d.patterns = nil
				break
			}
			if !slices.Contains(d.patterns, p.pattern) {
				d.patterns = append(d.patterns, p.pattern)
			}
		}
	}
	return d
}

func (sc *shellCheck) add(v Verdict, rule, reason string, pattern tpat) {
	sc.parts = append(sc.parts, part{v: v, rule: rule, reason: reason, what: sc.what, pattern: pattern})
}

func (sc *shellCheck) ask(rule string) { sc.add(Ask, rule, "", tpat{}) }

// script parses and checks src. extra marks commands that get more words
// appended at run time (an alias's arguments).
func (sc *shellCheck) script(src string, extra bool) {
	if sc.depth >= maxDepth {
		sc.ask("ask: commands nested too deeply to check")
		return
	}
	sc.depth++
	defer func() { sc.depth-- }()
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		sc.ask("ask: the command could not be parsed (" + err.Error() + ")")
		return
	}
	sc.taints(f)
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.ArithmExp:
			sc.arith(n.X, "$(( ))")
		case *syntax.ArithmCmd:
			sc.arith(n.X, "(( ))")
		case *syntax.LetClause:
			for _, x := range n.Exprs {
				sc.arith(x, "let")
			}
		case *syntax.CStyleLoop:
			sc.arith(n.Init, "for (( ))")
			sc.arith(n.Cond, "for (( ))")
			sc.arith(n.Post, "for (( ))")
		case *syntax.TestClause:
			sc.what = "[[ ]]"
			sc.testExpr(n.X)
		case *syntax.ParamExp:
			sc.paramExp(n)
		case *syntax.DeclClause:
			sc.decl(n)
		case *syntax.CallExpr:
			if len(n.Args) > 0 {
				toks := make([]token, 0, len(n.Args)+1)
				for _, w := range n.Args {
					toks = append(toks, sc.tok(w))
				}
				if extra {
					toks = append(toks, token{dyn: true, split: true})
				}
				sc.argv(toks)
			}
		case *syntax.Redirect:
			sc.redirect(n)
		case *syntax.Assign:
			sc.assign(n)
		}
		return true
	})
}

func (sc *shellCheck) tok(w *syntax.Word) token { return wordToken(w, sc.g.home, sc.cwd) }

func (sc *shellCheck) assign(a *syntax.Assign) {
	name := ""
	if a.Name != nil {
		name = a.Name.Value
	} else if a.Value != nil {
		// declare "NAME=value": the name is inside the word.
		t := sc.tok(a.Value)
		name, _, _ = strings.Cut(t.s, "=")
	}
	if a.Index != nil {
		sc.arith(a.Index, "an array subscript")
	}
	if a.Name == nil && a.Value != nil {
		t := sc.tok(a.Value)
		if !strings.HasPrefix(t.s, "-") && !strings.HasPrefix(t.s, "+") {
			target, _, _ := strings.Cut(t.s, "=")
			sc.evalName(token{s: target, dyn: t.dyn && !strings.Contains(t.s, "=")}, "declare")
		}
	}
	var val token
	if a.Value != nil {
		val = sc.tok(a.Value)
	}
	if sc.riskyAssign(name, val) {
		return
	}
	if a.Value != nil {
		t := val
		if strings.Contains(t.s, "$(") || strings.Contains(t.s, "`") {
			sc.ask("ask: assigns text that looks like a command substitution, which the shell may run later")
		}
	}
}

func (sc *shellCheck) redirect(r *syntax.Redirect) {
	if r.Word == nil {
		return
	}
	if len(r.Word.Parts) == 1 {
		if _, ok := r.Word.Parts[0].(*syntax.ProcSubst); ok {
			return // > >(cmd) writes to cmd, which is checked as a command
		}
	}
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll,
		syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob, syntax.RdrInOut:
		sc.writeAs(sc.tok(r.Word), "redirect "+r.Op.String())
		if r.Op == syntax.RdrInOut {
			sc.read(sc.tok(r.Word))
		}
	case syntax.DplOut, syntax.DplIn:
		t := sc.tok(r.Word)
		if t.dyn || !isFD(t.s) {
			if r.Op == syntax.DplOut {
				sc.writeAs(t, "redirect "+r.Op.String())
			} else {
				sc.read(t)
			}
		}
	case syntax.RdrIn:
		sc.read(sc.tok(r.Word))
	}
}

func isFD(s string) bool {
	s = strings.TrimSuffix(s, "-")
	if s == "" {
		return true // ">&-" closes
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// path makes a literal path absolute against the tracked working
// directory; ok is false when it cannot be known.
func (sc *shellCheck) path(s string) (string, bool) {
	if !filepath.IsAbs(s) && !strings.HasPrefix(s, "~") && sc.cwd == "" {
		return "", false
	}
	return sc.g.abs(s, sc.cwd), true
}

// write checks a target of a command whose whole job is writing (rm, cp,
// mv, touch...): the walls decide here, and the command's own rule the rest.
func (sc *shellCheck) write(t token, what string) { sc.target(t, what, false) }

// writeAs checks a write by a redirection or an output option, decided
// like write_file on that path: the walls, then the write rules.
func (sc *shellCheck) writeAs(t token, what string) { sc.target(t, what, true) }

func (sc *shellCheck) target(t token, via string, rules bool) {
	g := sc.g
	saved := sc.what
	sc.what = via + " " + render([]token{t})
	defer func() { sc.what = saved }()
	if t.dyn || t.glob {
		prefix := t.s
		if i := strings.IndexAny(prefix, "*?["); t.glob && i >= 0 {
			prefix = prefix[:i]
		}
		if filepath.IsAbs(prefix) || strings.HasPrefix(prefix, "~") {
			dir := filepath.Dir(g.abs(prefix+"x", sc.cwd))
			if free, _ := g.privateTmp(dir); !free && !within(dir, "/dev") {
				if rule, reason := g.writeWall(dir); rule != "" {
					sc.add(Deny, rule, "Not run: "+reason, tpat{})
					return
				}
			}
		}
		sc.ask("ask: " + via + " target is computed at run time")
		return
	}
	abs, ok := sc.path(t.s)
	if !ok {
		sc.ask("ask: " + via + " target is relative to a directory computed at run time")
		return
	}
	if freeDevice(abs) {
		sc.add(Allow, "free: "+abs+" keeps nothing", "", tpat{})
		return
	}
	switch free, ask := g.privateTmp(abs); {
	case free:
		sc.add(Allow, "free: the sandbox's private /tmp", "", tpat{})
		return
	case ask:
		sc.ask("ask: " + abs + " goes through a symlink in the private /tmp, which may point anywhere")
		return
	}
	if rule, reason := g.writeWall(abs); rule != "" {
		sc.add(Deny, rule, "Not run: "+reason, tpat{})
		return
	}
	if !rules {
		return
	}
	best, c := fileRule(sc.rs, "bash", true, abs)
	pat := tpat{"write", g.relPattern(c)}
	switch {
	case best == nil:
		sc.add(Ask, "default: ask (no write rule covers "+g.relPattern(c)+")", "", pat)
	case best.verdict == Deny:
		sc.add(Deny, best.text(), fmt.Sprintf("Not run: it writes %s, which is denied by the rule %q (%s). Do not retry it or work around it; if it is really needed, tell the user.", abs, best.text(), best.origin), tpat{})
	case best.verdict == Ask:
		sc.add(Ask, best.text(), "", pat)
	default:
		sc.add(Allow, best.text(), "", tpat{})
	}
}

// read refuses deny-read paths named literally.
func (sc *shellCheck) read(t token) {
	if t.dyn || t.s == "" {
		return
	}
	abs, ok := sc.path(t.s)
	if !ok || stdStream(abs) {
		return
	}
	w, seen := sc.reads[abs]
	if !seen {
		w.rule, w.reason = sc.g.readWall(abs)
		sc.reads[abs] = w // a long script names the same paths many times
	}
	if rule, reason := w.rule, w.reason; rule != "" {
		saved := sc.what
		sc.what = "read " + t.s
		sc.add(Deny, rule, "Not run: "+reason, tpat{})
		sc.what = saved
	}
}

// cmdName splits a command word into the name rules see and whether it is
// a system program (bare name or in a system directory) rather than a
// path the project controls.
func cmdName(s string) (base string, system bool) {
	if !strings.Contains(s, "/") {
		return s, true
	}
	dir, base := filepath.Split(s)
	dir = filepath.Clean(dir)
	return base, slices.Contains(systemDirs, dir)
}

// argv checks one simple command, looking through wrappers to the command
// they run.
func (sc *shellCheck) argv(toks []token) {
	if len(toks) == 0 {
		return
	}
	name := toks[0]
	sc.what = render(toks)
	if name.dyn || name.glob {
		sc.ask("ask: the command name is computed at run time")
		return
	}
	for _, t := range toks[1:] {
		if !t.dyn && (strings.Contains(t.s, "/") || strings.HasPrefix(t.s, "~") || strings.HasPrefix(t.s, ".")) {
			sc.read(t)
		}
	}
	base, system := cmdName(name.s)
	if !utf8.ValidString(base) || strings.ContainsFunc(base, func(r rune) bool { return r > 0x7e || r < 0x21 }) {
		sc.ask("ask: the command name has unusual characters (a look-alike?)")
		return
	}
	sc.runnerOptions(base, toks[1:])
	if !system {
		sc.match(toks, base, false)
		return
	}
	sc.systemCommand(toks, base)
}

// systemCommand checks a system program: a wrapper is looked through to
// the command it runs, a few programs have a checker of their own, and the
// rest have their file and variable effects checked before the rules.
func (sc *shellCheck) systemCommand(toks []token, base string) {
	args := toks[1:]
	if rest, ok := sc.wrapped(base, args); ok {
		sc.wrapper(toks, rest)
		return
	}
	if sc.delegated(toks, base, args) {
		return
	}
	sc.effects(base, args)
	sc.match(toks, base, true)
}

// wrapperOpts names, for each wrapper that takes options before its
// command, the options that take a separate value.
var wrapperOpts = map[string][]string{
	"nice":    {"-n", "--adjustment"},
	"setsid":  nil,
	"stdbuf":  {"-i", "-o", "-e", "--input", "--output", "--error"},
	"ionice":  {"-c", "-n", "--class", "--classdata"},
	"timeout": {"-s", "--signal", "-k", "--kill-after"},
	"sudo":    sudoOpts,
	"doas":    sudoOpts,
	"exec":    {"-a"},
}

var sudoOpts = []string{"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "--user", "--group"}

// wrapped returns the command a wrapper runs, and false if base is not a
// wrapper.
func (sc *shellCheck) wrapped(base string, args []token) ([]token, bool) {
	switch base {
	case "nohup", "builtin":
		return args, true
	case "time":
		return sc.applySpec("time", specTime, args), true
	}
	opts, ok := wrapperOpts[base]
	if !ok {
		return nil, false
	}
	rest := skipOpts(args, opts...)
	if base == "timeout" && len(rest) > 0 {
		rest = rest[1:] // the duration
	}
	return rest, true
}

// delegated checks the programs that run other commands or change the
// shell's own state, each through its own checker; false if base is not
// one of them.
func (sc *shellCheck) delegated(toks []token, base string, args []token) bool {
	switch base {
	case "env":
		saved := sc.cwd
		sc.wrapper(toks, sc.skipEnv(args)) // env -C DIR moves sc.cwd for its command
		sc.cwd = saved
	case "command":
		if len(args) > 0 && !args[0].dyn && (strings.HasPrefix(args[0].s, "-v") || strings.HasPrefix(args[0].s, "-V")) {
			sc.match(toks, base, true) // only looks the name up
			return true
		}
		sc.wrapper(toks, skipOpts(args))
	case "xargs":
		sc.xargs(toks)
	case "find":
		sc.find(toks)
	case "git":
		sc.git(toks)
	case "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash":
		sc.shell(toks)
	case "eval":
		sc.eval(toks, "eval")
	case "trap":
		if len(args) > 1 && !args[0].dyn && !strings.HasPrefix(args[0].s, "-") {
			sc.eval(toks[:2], "trap")
		}
		sc.add(Allow, "trap: its command is checked", "", tpat{})
	case "alias":
		sc.alias(args)
	default:
		return false
	}
	return true
}

// effects checks what a system program does besides its rule: the files it
// writes or reads, the directory it moves to, the variables it names (an
// array subscript in a name is evaluated).
func (sc *shellCheck) effects(base string, args []token) {
	switch base {
	case "cd", "pushd", "popd":
		sc.cd(base, args)
	case "rm", "rmdir", "unlink", "touch", "mkdir", "truncate", "shred":
		sc.writeAll(operands(args), base)
	case "cp", "mv", "ln", "install", "rsync":
		sc.copyLike(base, args)
	case "chmod", "chown", "chgrp":
		ops := operands(args)
		if !slices.ContainsFunc(args, func(t token) bool { return strings.HasPrefix(t.s, "--reference") }) && len(ops) > 0 {
			ops = ops[1:] // the mode or owner
		}
		sc.writeAll(ops, base)
	case "dd":
		sc.dd(args)
	case "sed":
		sc.sed(args)
	case "file":
		sc.applySpec(base, specFile, args)
		sc.fileCompile(args)
	case "test", "[":
		for i, t := range args {
			if !t.dyn && (t.s == "-v" || t.s == "-R") && i+1 < len(args) {
				sc.evalName(args[i+1], base+" "+t.s)
			}
		}
	case "unset":
		sc.unset(args)
	case "getopts":
		if ops := operands(args); len(ops) > 1 {
			sc.evalName(ops[1], "getopts")
		}
	case "mapfile", "readarray":
		sc.mapfile(base, args)
	default:
		if base == "less" && slices.ContainsFunc(args, func(t token) bool { return t.dyn || strings.HasPrefix(t.s, "+") }) {
			sc.ask("ask: less +CMD runs commands at start, and ! in them runs a shell")
		}
		if s := specs()[base]; s != nil {
			sc.applySpec(base, s, args)
		}
	}
}

func (sc *shellCheck) writeAll(ts []token, cmd string) {
	for _, t := range ts {
		sc.write(t, cmd)
	}
}

// dd writes its of= file and reads its if= file.
func (sc *shellCheck) dd(args []token) {
	for _, t := range args {
		if strings.HasPrefix(t.s, "of=") {
			t.s = t.s[3:]
			sc.writeAs(t, "dd of=")
		} else if strings.HasPrefix(t.s, "if=") {
			t.s = t.s[3:]
			sc.read(t)
		}
	}
}

// unset names variables (evaluated) unless -f makes them functions.
func (sc *shellCheck) unset(args []token) {
	fn := false
	for _, t := range args {
		switch {
		case !t.dyn && t.s == "-f":
			fn = true
		case !t.dyn && strings.HasPrefix(t.s, "-"):
		case !fn:
			sc.evalName(t, "unset")
		}
	}
}

// mapfile runs its -C callback and names its array.
func (sc *shellCheck) mapfile(base string, args []token) {
	uses, ops := specMapfile.parse(args)
	for _, u := range uses {
		if u.o != nil && u.o.short == 'C' && u.has {
			if u.val.dyn {
				sc.ask("ask: " + base + " -C callback computed at run time")
				continue
			}
			sc.script(u.val.s, true) // run with the index and line appended
		}
	}
	for _, u := range uses {
		if u.o != nil && u.o.role == rName && u.has {
			sc.evalName(u.val, base)
		}
	}
	if len(ops) > 0 {
		sc.evalName(ops[len(ops)-1], base)
	}
}

// skipOpts drops leading options; the ones named take a separate value.
func skipOpts(args []token, withValue ...string) []token {
	for len(args) > 0 {
		t := args[0]
		if t.dyn || !strings.HasPrefix(t.s, "-") || t.s == "-" {
			return args
		}
		args = args[1:]
		if t.s == "--" {
			return args
		}
		if slices.Contains(withValue, t.s) && len(args) > 0 {
			args = args[1:]
		}
	}
	return args
}

// operands are the non-option arguments (all of them after "--").
func operands(args []token) []token {
	var out []token
	dash := false
	for _, t := range args {
		if !dash && !t.dyn && t.s == "--" {
			dash = true
			continue
		}
		if !dash && !t.dyn && strings.HasPrefix(t.s, "-") && t.s != "-" {
			continue
		}
		out = append(out, t)
	}
	return out
}

func (sc *shellCheck) copyLike(base string, args []token) {
	for i, t := range args {
		if t.dyn {
			continue
		}
		if (t.s == "-t" || t.s == "--target-directory") && i+1 < len(args) {
			sc.write(args[i+1], base)
			return
		}
		if v, ok := strings.CutPrefix(t.s, "--target-directory="); ok {
			t.s = v
			sc.write(t, base)
			return
		}
	}
	ops := operands(args)
	if len(ops) == 0 {
		return
	}
	sc.write(ops[len(ops)-1], base)
	if base == "mv" {
		for _, t := range ops[:len(ops)-1] {
			sc.write(t, base) // mv removes its sources
		}
	}
}

// chdir moves the tracked directory to t (unknown when computed).
func (sc *shellCheck) chdir(t token) {
	if p, ok := sc.path(t.s); ok && !t.dyn && !t.glob {
		sc.cwd = p
	} else {
		sc.cwd = ""
	}
}

func (sc *shellCheck) cd(base string, args []token) {
	ops := operands(args)
	switch {
	case base == "popd":
		sc.cwd = ""
	case len(ops) == 0:
		sc.cwd = sc.g.home
	case ops[0].dyn || ops[0].glob || ops[0].s == "-":
		sc.cwd = ""
	default:
		if p, ok := sc.path(ops[0].s); ok {
			sc.cwd = p
		} else {
			sc.cwd = ""
		}
	}
}

// eval checks the words after toks[0] joined by spaces as a script.
func (sc *shellCheck) eval(toks []token, what string) {
	var ss []string
	for _, t := range toks[1:] {
		if t.dyn {
			sc.ask("ask: " + what + " of text computed at run time")
			return
		}
		ss = append(ss, t.s)
	}
	sc.add(Allow, what+": its text is checked", "", tpat{})
	sc.script(strings.Join(ss, " "), false)
}

func (sc *shellCheck) alias(args []token) {
	for _, t := range args {
		if t.dyn {
			sc.ask("ask: alias with text computed at run time")
			continue
		}
		if _, v, ok := strings.Cut(t.s, "="); ok {
			sc.script(v, true)
		}
	}
	sc.add(Allow, "alias: its text is checked", "", tpat{})
}

// shell handles sh -c 'SCRIPT' by checking SCRIPT; a shell reading a file
// or standard input is decided by the rules (by default: ask).
func (sc *shellCheck) shell(toks []token) {
	args := toks[1:]
	hasC := false
	for i := 0; i < len(args); i++ {
		t := args[i]
		if t.dyn {
			if hasC {
				sc.ask("ask: " + toks[0].s + " -c with a script computed at run time")
				return
			}
			break
		}
		if t.s == "--" {
			args = args[i+1:]
			break
		}
		if !strings.HasPrefix(t.s, "-") && !strings.HasPrefix(t.s, "+") {
			if hasC {
				sc.wrapperRules(toks)
				sc.script(t.s, false)
				return
			}
			break
		}
		if !strings.HasPrefix(t.s, "--") && strings.ContainsRune(t.s[1:], 'c') {
			hasC = true
		}
		switch t.s {
		case "-o", "+o", "-O", "+O", "--rcfile", "--init-file":
			i++
		}
	}
	if hasC && len(args) > 0 && args[0].dyn {
		sc.ask("ask: " + toks[0].s + " -c with a script computed at run time")
		return
	}
	base, _ := cmdName(toks[0].s)
	sc.match(toks, base, true)
}

// wrapperRules applies a wrapper's own deny and ask rules.
func (sc *shellCheck) wrapperRules(toks []token) {
	base, _ := cmdName(toks[0].s)
	sure, _ := sc.rs.bashMatches(base, toks, true)
	if best := pick(sure); best != nil {
		if best.verdict == Deny {
			sc.add(Deny, best.text(), fmt.Sprintf("Not run: `%s` is denied by the rule %q (%s).", render(toks), best.text(), best.origin), tpat{})
		} else {
			sc.ask(best.text())
		}
	}
}

// xargs runs its command with words read at run time appended (or put in
// place of the -I string).
func (sc *shellCheck) xargs(toks []token) {
	args := toks[1:]
	repl := ""
	withValue := []string{"-n", "-P", "-L", "-s", "-d", "-E", "-a", "--max-args", "--max-procs",
		"--max-lines", "--max-chars", "--delimiter", "--eof", "--arg-file", "--process-slot-var"}
	for len(args) > 0 {
		t := args[0]
		if t.dyn || !strings.HasPrefix(t.s, "-") {
			break
		}
		args = args[1:]
		switch {
		case t.s == "--":
			goto done
		case t.s == "-I":
			if len(args) > 0 {
				repl = args[0].s
				args = args[1:]
			}
		case strings.HasPrefix(t.s, "-I"):
			repl = t.s[2:]
		case t.s == "-i" || t.s == "--replace":
			repl = "{}"
		case strings.HasPrefix(t.s, "-i"):
			repl = t.s[2:]
		case strings.HasPrefix(t.s, "--replace="):
			repl = strings.TrimPrefix(t.s, "--replace=")
		case slices.Contains(withValue, t.s):
			if len(args) > 0 {
				args = args[1:]
			}
		}
	}
done:
	inner := slices.Clone(args)
	if len(inner) == 0 {
		inner = []token{{s: "echo"}}
	}
	if repl != "" {
		for i := range inner {
			if !inner[i].dyn && strings.Contains(inner[i].s, repl) {
				inner[i] = token{s: inner[i].s[:strings.Index(inner[i].s, repl)], dyn: true}
			}
		}
	} else {
		inner = append(inner, token{dyn: true, split: true})
	}
	sc.wrapperRules(toks)
	sc.argv(inner)
}

// find: -exec and friends run a command per file ({} is the file name);
// -delete removes the start points' trees; -fprint and -fls write a file.
func (sc *shellCheck) find(toks []token) {
	args := toks[1:]
	var starts []token
	i := 0
	for ; i < len(args); i++ {
		t := args[i]
		if !t.dyn && (strings.HasPrefix(t.s, "-") || t.s == "(" || t.s == "!") {
			break
		}
		starts = append(starts, t)
	}
	if len(starts) == 0 {
		starts = []token{{s: "."}}
	}
	kept := []token{toks[0]}
	kept = append(kept, args[:i]...)
	for ; i < len(args); i++ {
		t := args[i]
		if t.dyn {
			kept = append(kept, t)
			continue
		}
		switch t.s {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && !(!args[j].dyn && (args[j].s == ";" || args[j].s == "+")) {
				j++
			}
			inner := slices.Clone(args[i+1 : j])
			for k := range inner {
				if !inner[k].dyn && strings.Contains(inner[k].s, "{}") {
					inner[k] = token{s: inner[k].s[:strings.Index(inner[k].s, "{}")], dyn: true}
				}
			}
			saved := sc.cwd
			if t.s == "-execdir" || t.s == "-okdir" {
				sc.cwd = "" // each match's own directory
			}
			sc.argv(inner)
			sc.cwd = saved
			i = j
			continue
		case "-delete":
			for _, s := range starts {
				sc.write(s, "find -delete")
			}
		case "-fprint", "-fprint0", "-fls", "-fprintf":
			if i+1 < len(args) {
				sc.writeAs(args[i+1], "find "+t.s)
			}
		}
		kept = append(kept, t)
	}
	sc.match(kept, "find", true)
}

// decl: declare -i makes every assignment arithmetic.
func (sc *shellCheck) decl(d *syntax.DeclClause) {
	sc.what = d.Variant.Value
	integer := false
	for _, a := range d.Args {
		if a.Naked && a.Value != nil {
			if t := sc.tok(a.Value); !t.dyn && strings.HasPrefix(t.s, "-") && strings.Contains(t.s, "i") {
				integer = true
			}
		}
	}
	if !integer {
		return
	}
	for _, a := range d.Args {
		if a.Name != nil && a.Value != nil {
			sc.arithWord(a.Value, d.Variant.Value+" -i")
		}
	}
}
