package history

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/harness-dev/harness/internal/llm"
)

// Disk answers, for the input strip, what a file holds now.
type Disk interface {
	// Sum returns the SHA-256 of the file a tool call named path (relative
	// to the project, or absolute), when it is a regular file of exactly
	// size bytes that the harness may read and that the agent's commands
	// see at that same path (the project, not a sandbox-private /tmp).
	Sum(path string, size int) (sum [sha256.Size]byte, ok bool)
}

// inputStubFrom is the least size of a written body the input strip
// replaces (issue 19: from 200 chars).
const inputStubFrom = 200

// Write is a file body a tool call writes: a here-document redirected to
// a file by cat or tee, or write_file's content. From and To are the
// body's byte offsets in the command (both zero for write_file).
type Write struct {
	Path     string
	Body     string
	From, To int
}

// Writes returns the files a tool call's input writes in full. A bash
// command counts only a here-document whose text is literal (a quoted
// delimiter, or no expansion or backslash in it), fed to `cat` or
// `tee PATH` with its output redirected (> or >|, never >>) to a literal
// path, at the top of the command or in an && / || / ; chain with no
// cd, pushd or popd before it: then the path means the same as in the
// project directory where the command started.
func Writes(name string, input json.RawMessage) []Write {
	var in map[string]any
	if json.Unmarshal(input, &in) != nil {
		return nil
	}
	switch name {
	case "write_file":
		p, _ := in["path"].(string)
		c, okC := in["content"].(string)
		if p == "" || !okC {
			return nil
		}
		return []Write{{Path: p, Body: c}}
	case "bash":
		cmd, _ := in["command"].(string)
		return heredocWrites(cmd)
	}
	return nil
}

func heredocWrites(cmd string) []Write {
	if !strings.Contains(cmd, "<<") {
		return nil
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(cmd), "")
	if err != nil {
		return nil
	}
	var out []Write
	moved := false // a cd came first: relative paths mean something else
	var visit func(s *syntax.Stmt)
	visit = func(s *syntax.Stmt) {
		switch c := s.Cmd.(type) {
		case *syntax.BinaryCmd:
			if c.Op == syntax.AndStmt || c.Op == syntax.OrStmt {
				visit(c.X)
				visit(c.Y)
				return
			}
			return // a pipe: its parts run in subshells, skipped
		case *syntax.CallExpr:
			if len(c.Args) == 0 {
				return
			}
			name := c.Args[0].Lit()
			switch name {
			case "cd", "pushd", "popd":
				moved = true
				return
			}
			if !moved && !s.Background && !s.Negated {
				if w, ok := heredocWrite(cmd, name, c.Args, s.Redirs); ok {
					out = append(out, w)
				}
			}
		default:
			// A compound command (if, for, a subshell, a function...)
			// may run its here-documents any number of times, or never.
			moved = moved || containsCd(s)
		}
	}
	for _, s := range f.Stmts {
		visit(s)
	}
	return out
}

func containsCd(n syntax.Node) bool {
	found := false
	syntax.Walk(n, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 {
			switch c.Args[0].Lit() {
			case "cd", "pushd", "popd":
				found = true
			}
		}
		return !found
	})
	return found
}

func heredocWrite(src, name string, args []*syntax.Word, redirs []*syntax.Redirect) (Write, bool) {
	var path string
	switch {
	case name == "cat" && len(args) == 1:
	case name == "cat" && len(args) == 2 && args[1].Lit() == "-":
	case name == "tee" && len(args) == 2 && args[1].Lit() != "" && !strings.HasPrefix(args[1].Lit(), "-"):
		path = args[1].Lit()
	default:
		return Write{}, false
	}
	var doc *syntax.Redirect
	for _, r := range redirs {
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			if doc != nil {
				return Write{}, false
			}
			doc = r
		case syntax.RdrOut, syntax.RdrClob:
			if r.N != nil && r.N.Value != "1" {
				continue // 2>file: not the body
			}
			if name == "tee" {
				continue // tee's stdout copy (often /dev/null)
			}
			if path != "" || r.Word.Lit() == "" {
				return Write{}, false
			}
			path = r.Word.Lit()
		default:
			return Write{}, false
		}
	}
	if doc == nil || doc.Hdoc == nil || path == "" || len(doc.Hdoc.Parts) != 1 {
		return Write{}, false
	}
	lit, ok := doc.Hdoc.Parts[0].(*syntax.Lit)
	if !ok {
		return Write{}, false
	}
	from := int(lit.Pos().Offset())
	to := from + len(lit.Value)
	if to > len(src) || src[from:to] != lit.Value {
		return Write{}, false
	}
	body := lit.Value
	quoted := strings.ContainsAny(src[doc.Word.Pos().Offset():doc.Word.End().Offset()], `'"\`)
	if !quoted && strings.ContainsAny(body, "\\$`") {
		return Write{}, false
	}
	if doc.Op == syntax.DashHdoc {
		lines := strings.SplitAfter(body, "\n")
		for i, l := range lines {
			lines[i] = strings.TrimLeft(l, "\t")
		}
		body = strings.Join(lines, "")
	}
	return Write{Path: path, Body: body, From: from, To: to}, true
}

// onDisk reports whether the file w names holds exactly w.Body now, by
// hash, and returns the hash's first 12 hex digits for the stub.
func (h *History) onDisk(w Write) (string, bool) {
	if h.cfg.Disk == nil {
		return "", false
	}
	got, ok := h.cfg.Disk.Sum(w.Path, len(w.Body))
	want := sha256.Sum256([]byte(w.Body))
	if !ok || got != want {
		return "", false
	}
	return hex.EncodeToString(want[:6]), true
}

func inputStubText(w Write, sum string) string {
	return fmt.Sprintf("[harness strip: these %d chars are what %s holds now (sha256 %s…); read that file to see them]", len(w.Body), w.Path, sum)
}

// stripInput returns a tool call's input with the bodies it wrote
// replaced by a note naming the file, each only when it is at least
// inputStubFrom chars and the file holds exactly it now (checked by hash
// through Config.Disk): a body whose file has changed since, failed to be
// written, or lies outside the project stays as it is, because the stub
// would hide what is nowhere else. The input stays a JSON object with the
// command around the body intact.
func (h *History) stripInput(b llm.Block) (json.RawMessage, bool) {
	if b.Type != llm.BlockToolUse || b.Layer != "" || !h.layers().Refine || len(b.Input) < inputStubFrom {
		return nil, false
	}
	writes := h.writesOf(b)
	var in map[string]any
	if len(writes) == 0 || json.Unmarshal(b.Input, &in) != nil {
		return nil, false
	}
	changed := false
	if b.Name == "write_file" {
		w := writes[0]
		if sum, ok := h.onDisk(w); ok && len(w.Body) >= inputStubFrom {
			in["content"] = inputStubText(w, sum)
			changed = true
		}
	} else {
		cmd := in["command"].(string)
		var sb strings.Builder
		at := 0
		for _, w := range writes {
			sum, ok := h.onDisk(w)
			if !ok || len(w.Body) < inputStubFrom || w.From < at {
				continue
			}
			sb.WriteString(cmd[at:w.From])
			sb.WriteString(inputStubText(w, sum) + "\n")
			at = w.To
			changed = true
		}
		sb.WriteString(cmd[at:])
		in["command"] = sb.String()
	}
	if !changed {
		return nil, false
	}
	out, err := json.Marshal(in)
	if err != nil || len(out) >= len(b.Input) {
		return nil, false
	}
	return out, true
}

// inputKey names a tool call's input for the caches below.
func inputKey(b llm.Block) string { return b.Name + "\x00" + string(b.Input) }

// writesOf is Writes, parsed once per input: the strip looks at every old
// call at every step.
func (h *History) writesOf(b llm.Block) []Write {
	k := inputKey(b)
	if w, ok := h.writeCache[k]; ok {
		return w
	}
	w := Writes(b.Name, b.Input)
	if h.writeCache == nil {
		h.writeCache = map[string][]Write{}
	}
	h.writeCache[k] = w
	return w
}

// oldInput is stripInput for a call that has left the latest two
// messages. A call it leaves alone then is left alone for good: its body
// was not on disk when it became old, and stubbing it later would rewrite
// an old message (a cache write) for a file that has been changed since.
func (h *History) oldInput(b llm.Block) (json.RawMessage, bool) {
	if b.Type != llm.BlockToolUse || b.Layer != "" {
		return nil, false
	}
	k := inputKey(b)
	if h.settled[k] {
		return nil, false
	}
	in, ok := h.stripInput(b)
	if !ok {
		if h.settled == nil {
			h.settled = map[string]bool{}
		}
		h.settled[k] = true
	}
	return in, ok
}
