package config

import (
	"strings"
	"testing"
)

// FuzzParseEnv: any env file gives values or an error naming a line, never
// a panic.
func FuzzParseEnv(f *testing.F) {
	for _, s := range []string{"A=1\n# c\nexport B='x'\nC=\"y\\n\" # z\n", "=\n", "A=\"unterminated\n", "A='\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseEnv(strings.NewReader(s))
		if err != nil && !strings.Contains(err.Error(), "line ") {
			t.Fatalf("error without a line number: %v", err)
		}
		for k := range m {
			if k == "" || strings.ContainsAny(k, " \t=") {
				t.Fatalf("bad key %q", k)
			}
		}
	})
}
