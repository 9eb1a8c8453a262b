package ui

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// CommandCompleter completes slash commands in the first word of a line
// and hands every other word to next (which may be nil).
func CommandCompleter(commands []string, next Completer) Completer {
	return func(line string, pos int) []string {
		rs := []rune(line)
		head := string(rs[:pos])
		if strings.HasPrefix(head, "/") && !strings.ContainsAny(head, " \t\n") {
			var out []string
			for _, c := range commands {
				if strings.HasPrefix(c, head) {
					out = append(out, c)
				}
			}
			return out
		}
		if next == nil {
			return nil
		}
		return next(line, pos)
	}
}

// PathCompleter completes the word before the cursor as a path relative to
// root (absolute and ~/ paths too). Directories end in "/"; hidden entries
// are offered only when the word's last element starts with a dot.
func PathCompleter(root, home string) Completer {
	return func(line string, pos int) []string {
		rs := []rune(line)
		start := pos
		for start > 0 && !strings.ContainsRune(" \t\n", rs[start-1]) {
			start--
		}
		word := string(rs[start:pos])
		// "@path" mentions a file in a prompt: complete the path after @.
		at := ""
		if strings.HasPrefix(word, "@") {
			at, word = "@", word[1:]
		}
		dirPart, base := "", word
		if i := strings.LastIndexByte(word, '/'); i >= 0 {
			dirPart, base = word[:i+1], word[i+1:]
		}
		dir := dirPart
		switch {
		case strings.HasPrefix(dir, "~/") && home != "":
			dir = filepath.Join(home, dir[2:])
		case dir == "":
			dir = root
		case !filepath.IsAbs(dir):
			dir = filepath.Join(root, dir)
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil
		}
		var out []string
		for _, e := range ents {
			name := e.Name()
			if !strings.HasPrefix(name, base) || (strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".")) {
				continue
			}
			c := at + dirPart + name
			if e.IsDir() {
				c += "/"
			} else if e.Type()&os.ModeSymlink != 0 {
				if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.IsDir() {
					c += "/"
				}
			}
			out = append(out, c)
		}
		sort.Strings(out)
		if len(out) > 200 {
			out = out[:200]
		}
		return out
	}
}
