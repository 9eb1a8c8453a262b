package history

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/harness-dev/harness/internal/llm"
)

// headShare is the share of Cap kept from the head of a long output; the
// rest is its tail, where errors and summaries usually are.
const headShare = 0.4

// spillPattern names spill files; Sweep removes only files of this shape.
const spillPattern = "spill-*.txt"

// Cap applies layer 1 to a fresh tool result before it is appended: over
// Config.Cap chars, it keeps the head and the tail inline around a marker
// saying how much was cut, where the whole text is and how to page it. It
// sets b.Layer to LayerCap. Other blocks and short results are left alone.
// An error means the spill file could not be written; b is still capped
// (the marker says the text is gone) so the agent can go on.
func (h *History) Cap(b *llm.Block) error {
	if b.Type != llm.BlockToolResult || len(b.Content) <= h.cfg.Cap {
		return nil
	}
	text := b.Content
	path, err := h.spill(b.ToolUseID, text)
	h.stats.Caps++
	b.Layer = LayerCap
	if h.layers().CapHeadOnly {
		// The reference: head only, so an error at the end is lost.
		head := cutAt(text, h.cfg.Cap, false)
		b.Content = head + capMarker(text, len(head), len(text), path)
		return err
	}
	headN := int(float64(h.cfg.Cap) * headShare)
	head := cutAt(text, headN, false)
	tail := cutAt(text, h.cfg.Cap-len(head), true)
	b.Content = head + capMarker(text, len(head), len(text)-len(tail), path) + tail
	return err
}

// capMarker describes text[from:to] cut out of an output.
func capMarker(text string, from, to int, path string) string {
	first := strings.Count(text[:from], "\n") + 1
	last := first + strings.Count(text[from:to], "\n")
	lines := strings.Count(text, "\n") + 1
	var sb strings.Builder
	fmt.Fprintf(&sb, "\n[harness cap: %d of %d chars cut here (lines %d-%d of %d).", to-from, len(text), first, last, lines)
	if path == "" {
		sb.WriteString(" The whole output was not saved; run the command again with a narrower filter to see the rest.]\n")
		return sb.String()
	}
	fmt.Fprintf(&sb, " The whole output is in %s: page it with `sed -n '%d,%dp' %s`, `head -n N`, `tail -n N` or `grep -n PATTERN` on that file, or read_file.", path, first, min(last, first+199), path)
	sb.WriteString(" The file is deleted when this turn ends.]\n")
	return sb.String()
}

// cutAt returns about n bytes from the start (or, with fromEnd, the end) of
// s, on a line boundary when one is near and never inside a UTF-8 sequence.
func cutAt(s string, n int, fromEnd bool) string {
	if n >= len(s) {
		return s
	}
	if n <= 0 {
		return ""
	}
	slack := n / 5
	if !fromEnd {
		cut := n
		if i := strings.LastIndexByte(s[:n], '\n'); i >= n-slack && i > 0 {
			cut = i + 1
		}
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return s[:cut]
	}
	// From the end, snap back to the start of the line: a little more
	// text, never less than asked.
	cut := len(s) - n
	if i := strings.LastIndexByte(s[:cut], '\n'); i >= 0 && cut-i <= slack {
		cut = i + 1
	}
	for cut < len(s) && !utf8.RuneStart(s[cut]) {
		cut++
	}
	return s[cut:]
}

// spill writes text to a new file in SpillDir and returns its path, or ""
// when there is no SpillDir.
func (h *History) spill(id, text string) (string, error) {
	if h.cfg.SpillDir == "" {
		return "", nil
	}
	if err := os.MkdirAll(h.cfg.SpillDir, 0o700); err != nil {
		return "", fmt.Errorf("creating spill directory: %w", err)
	}
	f, err := os.CreateTemp(h.cfg.SpillDir, "spill-"+safeName(id)+"-*.txt")
	if err != nil {
		return "", fmt.Errorf("creating spill file: %w", err)
	}
	_, werr := f.WriteString(text)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("writing spill file: %w", err)
	}
	path, err := filepath.Abs(f.Name())
	if err != nil {
		path = f.Name()
	}
	h.spills = append(h.spills, path)
	return path, nil
}

func safeName(id string) string {
	var sb strings.Builder
	for _, r := range id {
		if r < 128 && (r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			sb.WriteRune(r)
		}
		if sb.Len() >= 40 {
			break
		}
	}
	return sb.String()
}

// Sweep deletes the spill files: those this History wrote and any other
// spill file left in SpillDir (by a session that ended without sweeping).
func (h *History) Sweep() error {
	var errs []error
	for _, p := range h.spills {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	h.spills = nil
	if h.cfg.SpillDir != "" {
		left, _ := filepath.Glob(filepath.Join(h.cfg.SpillDir, spillPattern))
		for _, p := range left {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("deleting spill files: %w", err)
	}
	return nil
}
