package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/harness-dev/harness/internal/llm"
)

// mentionRe finds @path mentions: an @ at a word start, then a path.
var mentionRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:^|\s)@([^\s@]+)`) })

// mentionLimit bounds one attached file.
const mentionLimit = 100 << 10

// expandMentions attaches the files a prompt mentions as @path (relative
// to the project, or absolute inside it): each one's content follows the
// prompt in a <file path="…"> block, so the model has it without a read.
// Only regular files inside the project, outside the sandbox's hidden
// paths and under mentionLimit, are attached; notes say what was attached
// or why not.
func expandMentions(prompt, project string, hidden []string) (string, []string) {
	p, _, notes := attachMentions(prompt, project, hidden, false, nil)
	return p, notes
}

// attachMentions is expandMentions that also takes images: an @image.png
// (or a dropped absolute path to one, from anywhere the sandbox does not
// hide) becomes an image for a model that takes images (withImages), and
// is never attached as text. A mention skip reports (an MCP resource's,
// attachResources) is left alone.
func attachMentions(prompt, project string, hidden []string, withImages bool, skip func(string) bool) (string, []*llm.Image, []string) {
	var b strings.Builder
	var notes []string
	seen := map[string]bool{}
	var images []*llm.Image
	root, err := filepath.EvalSymlinks(project)
	if err != nil {
		return prompt, nil, nil
	}
	for _, m := range mentions(prompt) {
		name := strings.TrimRight(m.name, ".,;:!?)")
		if seen[name] || skip != nil && skip(name) {
			continue
		}
		seen[name] = true
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(project, p)
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			// Said, not dropped in silence: a typo in a path would
			// otherwise leave the model without the file unnoticed.
			notes = append(notes, fmt.Sprintf("@%s: no such file in the project: not attached (Tab completes paths after @)", name))
			continue
		}
		if llm.IsImagePath(real) {
			img, note := attachImage(name, real, hidden, withImages)
			if img != nil {
				images = append(images, img)
			}
			if note != "" {
				notes = append(notes, note)
			}
			continue
		}
		if m.bare {
			continue // a bare path is taken only for an image
		}
		rel, err := filepath.Rel(root, real)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			notes = append(notes, fmt.Sprintf("@%s is outside the project: not attached", name))
			continue
		}
		if isHidden(real, hidden) {
			notes = append(notes, fmt.Sprintf("@%s is hidden by the sandbox: not attached", name))
			continue
		}
		fi, err := os.Stat(real)
		if err != nil || !fi.Mode().IsRegular() {
			notes = append(notes, fmt.Sprintf("@%s is not a regular file: not attached (the model can list a directory)", name))
			continue
		}
		if fi.Size() > mentionLimit {
			notes = append(notes, fmt.Sprintf("@%s is %d KB, over %d KB: not attached (the model can read it)", name, fi.Size()>>10, mentionLimit>>10))
			continue
		}
		data, err := os.ReadFile(real)
		if err != nil {
			notes = append(notes, fmt.Sprintf("@%s: %v", name, err))
			continue
		}
		fmt.Fprintf(&b, "\n\n<file path=%q>\n%s", rel, data)
		if len(data) > 0 && data[len(data)-1] != '\n' {
			b.WriteByte('\n')
		}
		b.WriteString("</file>")
		notes = append(notes, fmt.Sprintf("attached %s (%d lines)", rel, strings.Count(string(data), "\n")))
	}
	if b.Len() == 0 {
		return prompt, images, notes
	}
	return prompt + b.String(), images, notes
}

// isHidden reports whether path is one of the sandbox's hidden paths or
// under one.
func isHidden(path string, hidden []string) bool {
	for _, h := range hidden {
		if path == h || strings.HasPrefix(path, strings.TrimSuffix(h, "/")+"/") {
			return true
		}
	}
	return false
}
