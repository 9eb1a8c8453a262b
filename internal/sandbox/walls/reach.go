package walls

import "path/filepath"

// What commands can reach decides who wrote a file harness takes power
// from (hooks, permission rules, MCP servers): a file beneath a writable
// root is the project's (the agent's, or a clone's), never the user's own,
// whatever path named it.

// Reachable reports whether path, every link resolved, lies at or beneath
// a root commands write (the project, the --add-dir roots, the build
// cache), carve-outs included and whatever the mode: what is there, a
// command wrote or a clone brought.
func (p *Policy) Reachable(path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return true // unknown is not the user's
	}
	l := p.locate(abs, nil)
	l.spellings = AppendUnique(l.spellings, abs)
	for _, r := range p.WriteRoots() {
		if p.under(l, r, true) {
			return true
		}
	}
	return false
}

// CommandsCanWrite reports whether a command could change what path
// reads as during the session: CheckWrite's answer for the file its links
// lead to, with plan mode set aside (it ends when the user accepts a
// plan). A link inside a read-only carve-out to a writable file is
// writable.
func (p *Policy) CommandsCanWrite(path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return true
	}
	abs = resolveFS(p.fileSys(), abs)
	l := p.locate(abs, nil)
	if p.cache != "" && p.under(l, p.cache, true) {
		return true // the build cache is the commands' too
	}
	return p.wallsWrite(abs, abs, l) == nil
}
