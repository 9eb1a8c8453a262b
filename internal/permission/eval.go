package permission

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/harness-dev/harness/internal/shellquote"
)

// The shell evaluates some text as code although no command is named:
// arithmetic ($(( )), (( )), let, [[ a -eq b ]], array subscripts,
// ${x:off:len}) expands command substitutions found in array subscripts,
// and recursively evaluates the values of the variables it names; the
// targets of printf -v, read, mapfile, unset, [[ -v ]] and declare are
// names whose subscripts are evaluated the same way. So a quoted
// 'a[$(touch x)]' runs touch when it reaches one of these places. Such
// text is allowed only when nothing in it can run: no $ or backquote, and
// no variable whose value was set at run time (tainted).

// taints collects the variables a script sets to text computed at run
// time. The pass is flow-insensitive, so a use before the assignment
// counts too.
func (sc *shellCheck) taints(f *syntax.File) {
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Assign:
			if n.Name != nil && (n.Array != nil || (n.Value != nil && sc.tok(n.Value).dyn)) {
				sc.taint[n.Name.Value] = true
			}
		case *syntax.WordIter:
			for _, w := range n.Items {
				if sc.tok(w).dyn {
					sc.taint[n.Name.Value] = true
				}
			}
		case *syntax.ForClause:
			if n.Select {
				if wi, ok := n.Loop.(*syntax.WordIter); ok {
					sc.taint[wi.Name.Value] = true
				}
			}
		case *syntax.DeclClause:
			for _, a := range n.Args {
				if a.Naked && a.Value != nil && strings.HasPrefix(sc.tok(a.Value).s, "-") && strings.Contains(sc.tok(a.Value).s, "n") {
					sc.taintAll = true // namerefs: any name may stand for another
				}
			}
		case *syntax.CallExpr:
			if len(n.Args) == 0 {
				break
			}
			switch sc.tok(n.Args[0]).s {
			case "read", "mapfile", "readarray", "printf", "getopts", "wait":
				for _, w := range n.Args[1:] {
					t := sc.tok(w)
					if t.dyn {
						continue
					}
					name := strings.TrimLeft(t.s, "-")
					if i := strings.IndexByte(name, '['); i >= 0 {
						name = name[:i]
					}
					if validName(name) {
						sc.taint[name] = true
					}
					if len(t.s) > 2 && t.s[0] == '-' && validName(t.s[2:]) {
						sc.taint[t.s[2:]] = true // -aNAME, -vNAME
					}
				}
				sc.taint["MAPFILE"], sc.taint["REPLY"] = true, true
			}
		}
		return true
	})
}

func validName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// arithSafe reports whether literal text evaluated as arithmetic can run
// nothing: no substitution, no tainted variable.
func (sc *shellCheck) arithSafe(s string) bool {
	if strings.ContainsAny(s, "$`") {
		return false
	}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) {
		if validName(w) && sc.tainted(w) {
			return false
		}
	}
	return true
}

func (sc *shellCheck) tainted(name string) bool {
	if sc.taintAll || sc.taint[name] {
		return true
	}
	// Positional parameters come from the caller: a function's or a
	// script's arguments.
	return name == "@" || name == "*" || (name != "" && name[0] >= '0' && name[0] <= '9')
}

// arithWord checks one word the shell evaluates as arithmetic.
func (sc *shellCheck) arithWord(w *syntax.Word, where string) {
	if w == nil {
		return
	}
	bad := ""
	var visit func(parts []syntax.WordPart)
	visit = func(parts []syntax.WordPart) {
		for _, p := range parts {
			switch p := p.(type) {
			case *syntax.Lit:
				if !sc.arithSafe(p.Value) {
					bad = "names a variable set at run time"
				}
			case *syntax.SglQuoted:
				if p.Dollar || !sc.arithSafe(p.Value) {
					bad = "quoted text that the shell evaluates"
				}
			case *syntax.DblQuoted:
				visit(p.Parts)
			case *syntax.ParamExp:
				if p.Param == nil || sc.tainted(p.Param.Value) || p.Excl {
					bad = "expands a variable set at run time"
				}
			case *syntax.CmdSubst, *syntax.ProcSubst:
				bad = "evaluates the output of a command"
			case *syntax.ArithmExp:
				// checked where it is walked
			default:
				bad = "text computed at run time"
			}
		}
	}
	visit(w.Parts)
	if bad != "" {
		sc.ask("ask: " + where + " " + bad + ", which can run commands (a[$(...)])")
	}
}

// arith checks an arithmetic expression.
func (sc *shellCheck) arith(x syntax.ArithmExpr, where string) {
	if x == nil {
		return
	}
	syntax.Walk(x, func(n syntax.Node) bool {
		if w, ok := n.(*syntax.Word); ok {
			sc.arithWord(w, where)
			return false
		}
		return true
	})
}

// testExpr checks the parts of [[ ]] that the shell evaluates.
func (sc *shellCheck) testExpr(x syntax.TestExpr) {
	switch x := x.(type) {
	case *syntax.BinaryTest:
		switch x.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			if w, ok := x.X.(*syntax.Word); ok {
				sc.arithWord(w, "[[ -eq ]] arithmetic")
			}
			if w, ok := x.Y.(*syntax.Word); ok {
				sc.arithWord(w, "[[ -eq ]] arithmetic")
			}
		default:
			sc.testExpr(x.X)
			sc.testExpr(x.Y)
		}
	case *syntax.UnaryTest:
		if x.Op == syntax.TsVarSet || x.Op == syntax.TsRefVar {
			if w, ok := x.X.(*syntax.Word); ok {
				sc.evalName(sc.tok(w), "[[ -v ]]")
			}
			return
		}
		sc.testExpr(x.X)
	case *syntax.ParenTest:
		sc.testExpr(x.X)
	}
}

// evalName checks a variable name the shell will assign or look up:
// NAME or NAME[SUBSCRIPT], the subscript evaluated as arithmetic.
func (sc *shellCheck) evalName(t token, where string) {
	if t.dyn {
		sc.ask("ask: " + where + " names a variable computed at run time; its subscript would be evaluated")
		return
	}
	name, sub, hasSub := strings.Cut(t.s, "[")
	if (!validName(name) && name != "") || (hasSub && !sc.arithSafe(sub)) {
		sc.ask("ask: " + where + " target " + shellquote.Quote(t.s) + " is evaluated by the shell and can run commands")
	}
}

// paramExp checks expansions that evaluate a value as code: indirection
// through a variable set at run time (${!x} with x='a[$(...)]') and
// prompt expansion (${x@P}), which runs the command substitutions in it.
func (sc *shellCheck) paramExp(p *syntax.ParamExp) {
	if p.Exp != nil && p.Exp.Op == syntax.OtherParamOps && p.Exp.Word != nil && p.Exp.Word.Lit() == "P" {
		sc.ask("ask: ${…@P} expands a value as a prompt, which runs the command substitutions in it")
	}
	if p.Excl && p.Param != nil && p.Index == nil && p.Names == 0 && sc.tainted(p.Param.Value) {
		sc.ask("ask: ${!" + p.Param.Value + "} looks up a name set at run time, whose subscript the shell evaluates")
	}
	if p.Index != nil {
		sc.arith(p.Index, "an array subscript")
	}
	if p.Slice != nil {
		sc.arith(p.Slice.Offset, "a ${…:offset}")
		sc.arith(p.Slice.Length, "a ${…:offset:length}")
	}
}
