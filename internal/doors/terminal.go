package doors

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/harness-dev/harness/internal/extend"
	"github.com/harness-dev/harness/internal/termsafe"
)

// hostile is what a server's command, a file name or a settings file may
// carry to the user's terminal: a window title, a clipboard write (OSC
// 52), cursor moves and a screen clear, a C1 CSI, a bidi override, a byte
// that is not UTF-8.
const hostile = "x\x1b]0;owned\x07\x1b]52;c;aGk=\x1b\\\x1b[2J\x1b[1A\r\u009b2J\u202egnp.exe\xff\n"

func init() {
	register(probe{
		name: "terminal: escapes from servers, files, settings",
		run: func(ctx context.Context, w *world) (string, string) {
			// What the plain subcommands print passes the guard, in
			// whatever pieces it is written.
			var b strings.Builder
			g := termsafe.Guard(&b)
			for i := 0; i < len(hostile); i += 3 {
				g.Write([]byte(hostile[i:min(i+3, len(hostile))]))
			}
			if p := controlIn(b.String(), true); p != "" {
				return "the guard let " + p + " through", ""
			}
			// A name shown on one line cannot forge another.
			if l := termsafe.Line(hostile); strings.ContainsAny(l, "\n\r") || controlIn(l, false) != "" {
				return "a name kept a control character or a line break", ""
			}
			// A command file's front matter reaches menus and /help.
			dir := filepath.Join(w.project, ".claude", "commands")
			os.MkdirAll(dir, 0o755)
			md := "---\ndescription: \"" + strings.NewReplacer("\x1b", `\e`, "\x07", `\a`, "\n", `\n`, "\r", `\r`, "\u009b", `\x9b`).Replace(strings.ToValidUTF8(hostile, "")) + "\"\n---\nbody\n"
			if err := os.WriteFile(filepath.Join(dir, "x.md"), []byte(md), 0o644); err != nil {
				return "", "could not write the command file: " + err.Error()
			}
			cs, _ := extend.DiscoverCommands(w.project, w.home, nil, nil)
			for _, c := range cs.List() {
				if c.Name == "x" {
					if p := controlIn(c.Description, false); p != "" {
						return "a command file's description kept " + p, ""
					}
					return "", ""
				}
			}
			return "", "the command file was not loaded"
		},
	})
}

// controlIn names the first control character or sequence in s that must
// not reach a terminal; sgr allows colours, CR and erasing the line (what
// the guard lets through).
func controlIn(s string, sgr bool) string {
	if !utf8.ValidString(s) {
		return "a byte that is not UTF-8"
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == 0x1b && sgr && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';') {
				j++
			}
			if j < len(s) && (s[j] == 'm' || s[j] == 'K' && j-i <= 3) {
				i = j
				continue
			}
		}
		if c < 0x20 && c != '\n' && c != '\t' && !(sgr && c == '\r') || c == 0x7f {
			return termsafe.Line(s[i : i+1])
		}
	}
	for _, r := range s {
		if r >= 0x80 && r < 0xa0 || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
			return termsafe.Line(string(r))
		}
	}
	return ""
}
