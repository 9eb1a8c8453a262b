package replay

import (
	"crypto/sha256"
	"encoding/json"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/llm"
)

// simDisk stands for the project's files in a replay, for the input
// strip (history.Disk): a file holds what the last whole-file write of
// the trajectory put there until a later command may have changed it.
// A command may have changed a file when it names the file (its base
// name) anywhere but as an argument of a command known to only read, or
// does not parse. A script that changes a file it does not name goes
// unseen: the replay's figure for the input strip is that much
// optimistic, while the harness itself checks the real file by hash.
type simDisk struct {
	files map[string]simFile
}

type simFile struct {
	sum  [sha256.Size]byte
	size int
}

func newSimDisk() *simDisk { return &simDisk{files: map[string]simFile{}} }

// simRoot is where relative paths start: mini-swe-agent runs every
// command in the repository at /testbed.
const simRoot = "/testbed"

func simKey(p string) string {
	if !path.IsAbs(p) {
		p = path.Join(simRoot, p)
	}
	return path.Clean(p)
}

func (d *simDisk) Sum(p string, size int) ([sha256.Size]byte, bool) {
	f, ok := d.files[simKey(p)]
	if !ok || f.size != size {
		return [sha256.Size]byte{}, false
	}
	return f.sum, true
}

// run applies a tool call that has run to the simulated files.
func (d *simDisk) run(call llm.Block) {
	writes := history.Writes(call.Name, call.Input)
	var cmd string
	if call.Name == "bash" {
		var in struct {
			Command string `json:"command"`
		}
		_ = json.Unmarshal(call.Input, &in)
		cmd = in.Command
	}
	changed := d.touched(cmd)
	for _, w := range writes {
		if !changed[simKey(w.Path)] {
			d.files[simKey(w.Path)] = simFile{sha256.Sum256([]byte(w.Body)), len(w.Body)}
		}
	}
	for k := range changed {
		delete(d.files, k)
	}
}

// readOnly are commands that read the files they name.
var readOnly = map[string]bool{
	"cat": true, "head": true, "tail": true, "nl": true, "grep": true, "egrep": true, "fgrep": true, "rg": true,
	"wc": true, "ls": true, "diff": true, "less": true, "more": true, "file": true, "stat": true, "md5sum": true,
	"sha256sum": true, "echo": true, "pytest": true, "cut": true, "tr": true, "xxd": true, "od": true, "test": true, "[": true,
}

// touched returns the tracked files cmd may have changed, besides by a
// whole-file here-document (which the caller applies).
func (d *simDisk) touched(cmd string) map[string]bool {
	out := map[string]bool{}
	if cmd == "" || len(d.files) == 0 {
		return out
	}
	mentions := func(s string) []string {
		var ks []string
		for k := range d.files {
			if strings.Contains(s, path.Base(k)) {
				ks = append(ks, k)
			}
		}
		return ks
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(cmd), "")
	if err != nil {
		for _, k := range mentions(cmd) {
			out[k] = true
		}
		return out
	}
	src := func(n syntax.Node) string { return cmd[n.Pos().Offset():n.End().Offset()] }
	syntax.Walk(f, func(n syntax.Node) bool {
		s, ok := n.(*syntax.Stmt)
		if !ok {
			return true
		}
		heredoc := false
		for _, r := range s.Redirs {
			if r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc {
				heredoc = true
			}
		}
		for _, r := range s.Redirs {
			switch r.Op {
			case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll:
				if heredoc && r.Op != syntax.AppOut {
					continue // the whole-file write itself
				}
				for _, k := range mentions(src(r.Word)) {
					out[k] = true
				}
			}
		}
		c, ok := s.Cmd.(*syntax.CallExpr)
		if !ok || len(c.Args) == 0 {
			return true
		}
		name := c.Args[0].Lit()
		ro := readOnly[name] || (name == "tee" && heredoc)
		var args []string
		for _, a := range c.Args[1:] {
			args = append(args, src(a))
		}
		all := strings.Join(args, " ")
		switch name {
		case "python", "python3":
			ro = len(args) > 0 && !strings.HasPrefix(args[0], "-")
		case "sed", "awk", "sort":
			ro = !strings.Contains(all, "-i") && !strings.Contains(all, "-o")
		case "find":
			ro = !strings.Contains(all, "-delete") && !strings.Contains(all, "-exec")
		case "git":
			ro = len(args) > 0 && (args[0] == "diff" || args[0] == "show" || args[0] == "log" || args[0] == "status" || args[0] == "grep")
		}
		if !ro {
			for _, k := range mentions(all) {
				out[k] = true
			}
		}
		return true
	})
	return out
}
