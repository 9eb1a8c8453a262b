package cli

import (
	"bytes"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/harness-dev/harness/internal/ui"
)

// helpWidth is the width help is wrapped to: the terminal's when out is
// one, else 80 columns (a pipe, a file, a pager).
func helpWidth(out io.Writer) int {
	if f, ok := out.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 20 {
			return w
		}
	}
	return 80
}

// wrapHelp makes every command's help fit its width: cobra's text is
// rendered as usual, then each line wider than the width is wrapped at
// words, a flag's description hanging under itself, and a paragraph of
// prose that overflows is reflowed as a whole.
func wrapHelp(root *cobra.Command) {
	def := root.HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		out := c.OutOrStdout()
		var buf bytes.Buffer
		c.SetOut(&buf)
		def(c, args)
		c.SetOut(out)
		io.WriteString(out, fitHelp(buf.String(), helpWidth(out)))
	})
}

// fitHelp wraps help text to width. Consecutive lines that start at the
// left margin and hold no column gap (prose) are joined and wrapped again
// when any of them is too wide; every other line is wrapped alone, its
// continuation hanging under its text column (ui.Fit).
func fitHelp(text string, width int) string {
	lines := strings.Split(text, "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		if !isProse(lines[i]) {
			rows := ui.FitLines(lines[i], width)
			if len(rows) > 1 {
				// Lines that continue this one (indented to where its
				// rows hang) are wrapped with it.
				hang := len(rows[1]) - len(strings.TrimLeft(rows[1], " "))
				l := lines[i]
				for i+1 < len(lines) && hang > 0 && indent(lines[i+1]) == hang {
					i++
					l += " " + strings.TrimSpace(lines[i])
				}
				rows = ui.FitLines(l, width)
			}
			out = append(out, rows...)
			continue
		}
		j := i
		wide := false
		for j < len(lines) && isProse(lines[j]) {
			wide = wide || ui.StringWidth(lines[j]) > width
			j++
		}
		if wide {
			out = append(out, ui.Wrap(strings.Join(lines[i:j], " "), width)...)
		} else {
			out = append(out, lines[i:j]...)
		}
		i = j - 1
	}
	return strings.Join(out, "\n")
}

func indent(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }

// isProse reports whether a help line is running text: it starts at the
// margin, has no run of two spaces (a column), and does not end a
// heading.
func isProse(l string) bool {
	return l != "" && l[0] != ' ' && !strings.Contains(l, "  ") && !strings.HasSuffix(l, ":") && strings.ToUpper(l) != l
}
