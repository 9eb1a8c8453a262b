package acp

import (
	"bytes"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
)

// mentionLimit bounds one attached file (the chat's bound).
const mentionLimit = 100 << 10

// mentionRe finds @path mentions in a prompt's text: an @ at a word
// start, then a path (the chat's syntax).
var mentionRe = regexp.MustCompile(`(?:^|\s)@([^\s@]+)`)

// attachFile reads a file the prompt points at (a resource_link, or an
// @path in its text) as a <file> block: only a regular text file inside
// the project, read through the policy (a hidden path is refused as a
// read_file would be), under mentionLimit. note says why not when block
// is "".
func (ss *session) attachFile(path string) (block, note string) {
	pol := ss.s.Sandbox.Policy()
	if !filepath.IsAbs(path) {
		path = filepath.Join(pol.Project(), path)
	}
	data, real, err := pol.ReadFile(path, mentionLimit)
	if err != nil {
		return "", fmt.Sprintf("%s: not attached: %v", path, err)
	}
	rel, err := filepath.Rel(pol.Project(), real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Sprintf("%s is outside the project: not attached", path)
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return "", fmt.Sprintf("%s is a binary file: not attached", rel)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<file path=%q>\n%s", rel, data)
	if len(data) > 0 && data[len(data)-1] != '\n' {
		b.WriteByte('\n')
	}
	b.WriteString("</file>")
	return b.String(), ""
}

// linkPath is the path a file: URI names ("" for another scheme).
func linkPath(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || u.Path == "" {
		return ""
	}
	return filepath.FromSlash(u.Path)
}

// attachMentions returns the <file> blocks of the files text mentions as
// @path that exist; a mention of nothing is left as typed (an @handle,
// a decorator), with a note for the log when it looked like a file.
func (ss *session) attachMentions(text string, linked map[string]bool, notes *[]string) []string {
	project := ss.s.Sandbox.Policy().Project()
	var blocks []string
	seen := map[string]bool{}
	for _, m := range mentionRe.FindAllStringSubmatch(text, -1) {
		name := strings.TrimRight(m[1], ".,;:!?)")
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		if abs := name; linked[abs] || linked[filepath.Join(project, abs)] {
			continue
		}
		block, note := ss.attachFile(name)
		if block != "" {
			blocks = append(blocks, block)
		} else if strings.ContainsAny(name, "./") {
			*notes = append(*notes, "@"+note)
		}
	}
	return blocks
}
