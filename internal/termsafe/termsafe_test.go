package termsafe

import (
	"strings"
	"testing"
)

func TestVisible(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain path/é", "plain path/é"},
		{"a\nb\tc", "a\nb\tc"},
		{"repo\x1b[2K\x1b[1A\rfake", `repo\e[2K\e[1A\rfake`},
		{"\x1b]52;c;ZWNobyBoaQ==\x07", `\e]52;c;ZWNobyBoaQ==\x07`},
		{"csi\u009b2J", `csi\u009b2J`},
		{"del\x7f bad\xff", `del\x7f bad\xff`},
	} {
		if got := Visible(tc.in); got != tc.want {
			t.Errorf("Visible(%q) = %q, want %q", tc.in, got, tc.want)
		}
		for _, c := range Visible(tc.in) {
			if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f || c >= 0x80 && c < 0xa0 {
				t.Errorf("Visible(%q) left control %U", tc.in, c)
			}
		}
	}
}

func TestLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"src/main.go", "src/main.go"},
		{"a\nrestored /etc/passwd", `a\nrestored /etc/passwd`},
		{"tab\there", `tab\there`},
		{"title\x1b]0;owned\x07", `title\e]0;owned\x07`},
		{"evil\u202egnp.exe", `evil\u202egnp.exe`},
		{"bad\x9bbyte", `bad\x9bbyte`},
	} {
		if got := Line(tc.in); got != tc.want {
			t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTextDropsBidiAndInvalidBytes(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a\u202eb\u2066c", "abc"},
		{"lone \x9b[2J csi", "lone \ufffd[2J csi"},
	} {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestGuard(t *testing.T) {
	for _, tc := range []struct {
		name   string
		writes []string
		want   string
	}{
		{"plain", []string{"a\tb\nc"}, "a\tb\nc"},
		{"colours pass", []string{"\x1b[1;31mred\x1b[0m"}, "\x1b[1;31mred\x1b[0m"},
		{"line erase passes", []string{"\r\x1b[K3/4"}, "\r\x1b[K3/4"},
		{"title dropped", []string{"x\x1b]0;owned\x07y"}, "xy"},
		{"clipboard dropped", []string{"x\x1b]52;c;ZWNobw==\x1b\\y"}, "xy"},
		{"cursor and clear dropped", []string{"\x1b[2J\x1b[1A\x1b[10;10Hz"}, "z"},
		{"private modes dropped", []string{"\x1b[?1049h\x1b[?25lz"}, "z"},
		{"split across writes", []string{"x\x1b]5", "2;c;Zg==", "\x07y\x1b[3", "1mz"}, "xy\x1b[31mz"},
		{"C0 and C1 dropped", []string{"a\x07b\x00c\u009b2Jd\u0085e"}, "abc2Jde"},
		{"bidi dropped", []string{"a\u202eb"}, "ab"},
		{"invalid byte", []string{"a\xffb"}, "a\ufffdb"},
		{"rune split across writes", []string{"caf\xc3", "\xa9"}, "café"},
		{"two-byte escape dropped", []string{"a\x1bcb"}, "ab"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			g := Guard(&b)
			for _, w := range tc.writes {
				if n, err := g.Write([]byte(w)); err != nil || n != len(w) {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if got := b.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// FuzzGuard: whatever is written, in whatever pieces, no escape but SGR
// and erase-in-line and no control but newline, tab and CR comes out.
func FuzzGuard(f *testing.F) {
	f.Add([]byte("x\x1b]52;c;Zg==\x07\x1b[31m\x9b\u202e"), 3)
	f.Fuzz(func(t *testing.T, data []byte, cut int) {
		var b strings.Builder
		g := Guard(&b)
		if cut < 0 || cut > len(data) {
			cut = len(data) / 2
		}
		g.Write(data[:cut])
		g.Write(data[cut:])
		out := []byte(b.String())
		for i := 0; i < len(out); i++ {
			c := out[i]
			if c == 0x1b {
				end, complete := escapeEnd(out, i)
				if !complete || !allowedEscape(out[i:end]) {
					t.Fatalf("escape %q reached the output %q", out[i:min(end, len(out))], out)
				}
				i = end - 1
				continue
			}
			if c < 0x20 && c != '\n' && c != '\t' && c != '\r' || c == 0x7f {
				t.Fatalf("control %#x reached the output %q", c, out)
			}
		}
		for _, r := range string(out) {
			if r != '\n' && r != '\t' && r != '\r' && r != 0x1b && isControl(r) {
				t.Fatalf("control %U reached the output %q", r, out)
			}
		}
	})
}
