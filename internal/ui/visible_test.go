package ui

import "testing"

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
