package ui

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
)

// MenuItem is one entry of a pop-up menu.
type MenuItem struct {
	Name   string // what replaces the word typed: "/compact", "@internal/ui/editor.go"
	Detail string // what it is, in a few words
	Source string // where it comes from: "built-in", "skill", "project command", "mcp: SERVER"
	// Args is what the command takes ("ID", "[focus]"); Enter on a command
	// whose argument is required inserts it for the argument to be typed,
	// on any other command sends it.
	Args string
}

// CommandSource lists slash commands for the / menu. Built-in commands,
// skills, custom commands and MCP prompts are each one source; the menu
// asks them every time it opens, so a source may change its list during
// a session.
type CommandSource func() []MenuItem

// Popup gives the menu for the word that ends at pos in line (pos counts
// runes): the word and the items that would replace it, best first. No
// items means no menu.
type Popup func(line string, pos int) (word string, items []MenuItem)

// popupRows is how many items a menu shows at most.
const popupRows = 8

// NewPopup is the pop-up of the interactive prompt: a line starting with
// "/" opens the commands of every source, a word starting with "@" the
// project's files (files may be nil). Both filter fuzzily as you type.
func NewPopup(commands []CommandSource, files func() []string) Popup {
	return func(line string, pos int) (string, []MenuItem) {
		rs := []rune(line)
		pos = min(pos, len(rs))
		start := pos
		for start > 0 && !unicode.IsSpace(rs[start-1]) {
			start--
		}
		word := string(rs[start:pos])
		switch {
		case start == 0 && strings.HasPrefix(word, "/"):
			var all []MenuItem
			for _, src := range commands {
				all = append(all, src()...)
			}
			return word, fuzzyItems(strings.TrimPrefix(word, "/"), all, func(it MenuItem) string { return strings.TrimPrefix(it.Name, "/") })
		case strings.HasPrefix(word, "@") && files != nil:
			var all []MenuItem
			for _, f := range files() {
				all = append(all, MenuItem{Name: "@" + f})
			}
			return word, fuzzyItems(strings.TrimPrefix(word, "@"), all, func(it MenuItem) string { return strings.TrimPrefix(it.Name, "@") })
		}
		return "", nil
	}
}

// fuzzyItems keeps the items whose key holds the query's characters in
// order (case-insensitive), best first: a prefix, then a contiguous
// match, then the tightest; ties by key.
func fuzzyItems(query string, items []MenuItem, key func(MenuItem) string) []MenuItem {
	type scored struct {
		it    MenuItem
		score int
	}
	var out []scored
	for _, it := range items {
		if s, ok := FuzzyScore(query, key(it)); ok {
			out = append(out, scored{it, s})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score < out[j].score
		}
		return key(out[i].it) < key(out[j].it)
	})
	res := make([]MenuItem, len(out))
	for i, s := range out {
		res[i] = s.it
	}
	return res
}

// FuzzyScore matches query against s as a subsequence, ignoring case. A
// lower score is a better match: 0 for a prefix, then a contiguous match
// by how late it starts, then a scattered one by its spread (and, for a
// path, how far its match lies from the base name).
func FuzzyScore(query, s string) (int, bool) {
	if query == "" {
		return 0, true
	}
	q, t := strings.ToLower(query), strings.ToLower(s)
	if strings.HasPrefix(t, q) {
		return 0, true
	}
	if i := strings.Index(t, q); i >= 0 {
		base := strings.LastIndexByte(t, '/') + 1
		if i >= base {
			return 1 + i - base, true // in the file's own name
		}
		return 1000 + i, true
	}
	qr := []rune(q)
	first, last, k := -1, -1, 0
	for i, r := range []rune(t) {
		if k < len(qr) && r == qr[k] {
			if first < 0 {
				first = i
			}
			last = i
			k++
		}
	}
	if k < len(qr) {
		return 0, false
	}
	return 10000 + (last - first) + first, true
}

// renderPopup draws items below the input, the selected one marked, each
// cut to the width; a last row says how many more match.
func renderPopup(st Style, items []MenuItem, sel, width int) []string {
	first := 0
	if sel >= popupRows {
		first = sel - popupRows + 1
	}
	nameW := 0
	for _, it := range items[first:min(len(items), first+popupRows)] {
		nameW = max(nameW, StringWidth(it.Name))
	}
	nameW = min(nameW, max(12, width/2))
	var rows []string
	for i := first; i < len(items) && i < first+popupRows; i++ {
		it := items[i]
		name := Truncate(it.Name, nameW)
		detail := it.Detail
		if it.Source != "" && it.Source != "built-in" {
			detail = strings.TrimSpace(detail + " (" + it.Source + ")")
		}
		room := width - 4 - nameW - 2
		row := "  " + name + strings.Repeat(" ", nameW-StringWidth(name))
		if room >= 8 && detail != "" {
			row += "  " + st.Dim(Truncate(detail, room))
		}
		if i == sel {
			row = st.BoldCyan("❯ ") + st.Bold(strings.TrimPrefix(row, "  "))
		}
		rows = append(rows, row)
	}
	if n := len(items) - first - popupRows; n > 0 {
		rows = append(rows, st.Dim(Truncate("  … "+strconv.Itoa(n)+" more (type to narrow)", width-1)))
	}
	return rows
}

// ProjectFiles lists the files under root for the @ picker, relative and
// with directories ending in "/": hidden entries, .git and the usual
// dependency and build directories are skipped, at most limit entries.
// The walk is cached for a few seconds so typing stays fast.
func ProjectFiles(root string, limit int) func() []string {
	var mu sync.Mutex
	var cached []string
	var at time.Time
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		if cached != nil && time.Since(at) < 5*time.Second {
			return cached
		}
		var out []string
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error { //nolint:errcheck // a partial list is still a list
			if err != nil || p == root {
				return nil
			}
			name := d.Name()
			if strings.HasPrefix(name, ".") || skipDirs[name] && d.IsDir() {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				rel += "/"
			} else if d.Type()&os.ModeSymlink != 0 {
				if fi, err := os.Stat(p); err == nil && fi.IsDir() {
					rel += "/"
				}
			}
			out = append(out, rel)
			if len(out) >= limit {
				return filepath.SkipAll
			}
			return nil
		})
		cached, at = out, time.Now()
		return out
	}
}

// skipDirs are directories of dependencies and build output: many files,
// none a person mentions.
var skipDirs = map[string]bool{"node_modules": true, "vendor": true, "target": true, "dist": true, "build": true, "__pycache__": true}

// applyPopup handles a key while the menu is open and reports whether it
// did: Up and Down move, Tab takes the entry, Enter takes it (and sends a
// command that needs no argument), Esc closes the menu.
func (e *Editor) applyPopup(s *lineState, k key) bool {
	if len(s.pop) == 0 || s.search || s.paste {
		return false
	}
	switch k.kind {
	case keyUp:
		s.popSel = (s.popSel + len(s.pop) - 1) % len(s.pop)
	case keyDown:
		s.popSel = (s.popSel + 1) % len(s.pop)
	case keyEscape:
		s.popShut, s.pop = s.popWord, nil
	case keyTab, keyEnter:
		it := s.pop[s.popSel]
		s.replaceWord(it.Name)
		s.pop = nil
		if k.kind == keyEnter && strings.HasPrefix(it.Name, "/") && (it.Args == "" || strings.HasPrefix(it.Args, "[")) {
			// Sent as if typed: the editor's Enter ends the line.
			e.in.Unread([]byte{'\r'})
			return true
		}
		if !strings.HasSuffix(it.Name, "/") {
			s.insert(' ')
		}
		s.popShut = s.wordBefore()
	default:
		return false
	}
	return true
}

// updatePopup opens, narrows or closes the menu after key changed the
// line. Only typing opens it: browsing history or moving the cursor
// closes it.
func (e *Editor) updatePopup(s *lineState, k key) {
	if k.kind == keyPoke {
		return // news shown above the input: the menu stays
	}
	if e.opts.Popup == nil || s.search || s.paste {
		s.pop = nil
		return
	}
	switch k.kind {
	case keyRune, keyBackspace, keyDelete, keyKillWord, keyYank:
	default:
		s.pop = nil
		return
	}
	word, items := e.opts.Popup(string(s.buf), s.pos)
	if word == "" || word == s.popShut || len(items) == 0 {
		s.pop = nil
		return
	}
	if word != s.popWord {
		s.popSel = 0
	}
	s.popWord, s.pop = word, items
	s.popSel = min(s.popSel, len(items)-1)
}

// wordBefore is the run of non-space characters before the cursor.
func (s *lineState) wordBefore() string {
	start := s.pos
	for start > 0 && !unicode.IsSpace(s.buf[start-1]) {
		start--
	}
	return string(s.buf[start:s.pos])
}

// replaceWord puts w in place of the word before the cursor.
func (s *lineState) replaceWord(w string) {
	start := s.pos
	for start > 0 && !unicode.IsSpace(s.buf[start-1]) {
		start--
	}
	rest := append([]rune(w), s.buf[s.pos:]...)
	s.buf = append(s.buf[:start], rest...)
	s.pos = start + len([]rune(w))
}
