package lsp

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"
)

// maxMessageText bounds one diagnostic's message.
const maxMessageText = 500

// format writes r for the model: the edited file's errors (and up to
// warnings warnings), then other files' errors, one line each as
// file:line:col: severity: message, at most maxBytes in all. "" when
// there is nothing to say.
func format(r report, project, text string, warnings, maxBytes int) string {
	var lines []string
	own := sorted(r.items)
	nWarn := 0
	for _, d := range own {
		switch sev := severity(d); {
		case sev == "error":
			lines = append(lines, line(rel(project, r.path), d, text, true))
		case sev == "warning" && nWarn < warnings:
			nWarn++
			lines = append(lines, line(rel(project, r.path), d, text, true))
		}
	}
	var other []string
	paths := make([]string, 0, len(r.others))
	for p := range r.others {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		for _, d := range sorted(r.others[p]) {
			if severity(d) == "error" {
				other = append(other, line(rel(project, p), d, "", false))
			}
		}
	}
	if len(other) > maxOtherFiles {
		other = append(other[:maxOtherFiles], fmt.Sprintf("… and %d more error(s) in other files", len(other)-maxOtherFiles))
	}
	if len(lines) == 0 && len(other) == 0 {
		return ""
	}
	var b strings.Builder
	if len(lines) > 0 {
		b.WriteString("The language server reports, for this version of " + rel(project, r.path) + ":\n")
		b.WriteString(strings.Join(lines, "\n"))
	}
	if len(other) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString("Errors the language server now reports in other files:\n")
		b.WriteString(strings.Join(other, "\n"))
	}
	return capBytes(b.String(), maxBytes)
}

func severity(d diagnostic) string {
	switch d.Severity {
	case severityWarning:
		return "warning"
	case severityInformation:
		return "info"
	case severityHint:
		return "hint"
	}
	return "error" // 1, or absent
}

func sorted(ds []diagnostic) []diagnostic {
	out := slices.Clone(ds)
	slices.SortStableFunc(out, func(a, b diagnostic) int {
		if a.Range.Start.Line != b.Range.Start.Line {
			return a.Range.Start.Line - b.Range.Start.Line
		}
		return a.Range.Start.Character - b.Range.Start.Character
	})
	return out
}

// line is one diagnostic as file:line:col: severity: message, the column
// in bytes (1-based) when the file's text is known.
func line(file string, d diagnostic, text string, known bool) string {
	col := d.Range.Start.Character + 1
	if known {
		col = byteColumn(text, d.Range.Start.Line, d.Range.Start.Character) + 1
	}
	msg := strings.Join(strings.Fields(d.Message), " ")
	msg = clip(msg, maxMessageText)
	return fmt.Sprintf("%s:%d:%d: %s: %s", file, d.Range.Start.Line+1, col, severity(d), msg)
}

// byteColumn turns an LSP character offset (UTF-16 code units) on line
// into a byte offset.
func byteColumn(text string, line, char int) int {
	for i := 0; i < line; i++ {
		nl := strings.IndexByte(text, '\n')
		if nl < 0 {
			return char
		}
		text = text[nl+1:]
	}
	if nl := strings.IndexByte(text, '\n'); nl >= 0 {
		text = text[:nl]
	}
	units, bytes := 0, 0
	for units < char && bytes < len(text) {
		r, size := utf8.DecodeRuneInString(text[bytes:])
		if r >= 0x10000 {
			units += 2
		} else {
			units++
		}
		bytes += size
	}
	return bytes
}

func rel(project, p string) string {
	if r, err := filepath.Rel(project, p); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return r
	}
	return p
}

// capBytes cuts s at a line boundary under max bytes, saying so.
func capBytes(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := s[:max]
	if i := strings.LastIndexByte(cut, '\n'); i > 0 {
		cut = cut[:i]
	}
	return cut + fmt.Sprintf("\n… (%d more bytes of diagnostics cut)", len(s)-len(cut))
}
