package permission

import (
	"context"
	"io"
	"strings"
	"testing"
)

func TestTerminalPrompter(t *testing.T) {
	req := Request{Tool: "bash", Command: "go generate ./..."}
	d := Decision{Verdict: Ask, Rule: "default: ask", tool: "bash"}
	tests := []struct {
		in      string
		pattern string
		want    Answer
		wantErr bool
		out     []string
	}{
		{"y\n", "go generate ./...", Answer{Choice: Yes}, false, []string{"go generate ./...", "rule: default: ask", `[y]es / [n]o / [a]lways "go generate ./..." / or type a reason to refuse`}},
		{"YES\n", "", Answer{Choice: Yes}, false, []string{"[y]es / [n]o / or type a reason"}},
		{"a\n", "go generate ./...", Answer{Choice: Always}, false, []string{"always: allow bash go generate ./..."}},
		{"always\n", "", Answer{Choice: Yes}, false, nil}, // always not offered: once
		{"n\n", "x", Answer{Choice: No}, false, nil},
		{"\n", "x", Answer{Choice: No}, false, nil},
		{"  use make generate instead \n", "x", Answer{Choice: No, Reason: "use make generate instead"}, false, nil},
		{"no trailing newline", "x", Answer{Choice: No, Reason: "no trailing newline"}, false, nil},
		{"", "x", Answer{Choice: No}, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var out strings.Builder
			p := &TerminalPrompter{In: strings.NewReader(tt.in), Out: &out}
			got, err := p.Prompt(context.Background(), req, d, tt.pattern)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("Prompt(%q) = %+v, %v; want %+v, error %v", tt.in, got, err, tt.want, tt.wantErr)
			}
			for _, w := range tt.out {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output %q lacks %q", out.String(), w)
				}
			}
			if strings.Contains(out.String(), "\x1b[") {
				t.Error("colour without Color")
			}
		})
	}
}

func TestTerminalPrompterCancel(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	p := &TerminalPrompter{In: pr, Out: io.Discard, Color: true}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Prompt(ctx, Request{Tool: "bash", Command: "x"}, Decision{}, ""); err == nil {
		t.Fatal("cancelled prompt returned no error")
	}
	// The line typed later answers the next prompt, not a lost reader.
	go func() { _, _ = pw.Write([]byte("y\n")) }()
	got, err := p.Prompt(context.Background(), Request{Tool: "bash", Command: "x"}, Decision{}, "")
	if err != nil || got.Choice != Yes {
		t.Errorf("after cancel: %+v %v", got, err)
	}
}

func TestGlobs(t *testing.T) {
	for _, tt := range []struct {
		pat, s string
		want   bool
	}{
		{"*", "", true}, {"*", "a/b", true}, {"go*", "gofmt", true}, {"g?", "go", true},
		{"g?", "g", false}, {`a\*`, "a*", true}, {`a\*`, "ab", false}, {"-*f*", "-xfd", true},
		{"-*f*", "-x", false}, {"*.go", "a.go.bak", false}, {"a*b*c", "aXbYc", true},
	} {
		if got := globMatch(tt.pat, tt.s); got != tt.want {
			t.Errorf("globMatch(%q, %q) = %v", tt.pat, tt.s, got)
		}
	}
	for _, tt := range []struct {
		pat, s string
		want   bool
	}{
		{"/p/src/**", "/p/src/a/b.go", true}, {"/p/src/**", "/p/src", true}, {"/p/*.go", "/p/a/b.go", false},
		{"/p/**/*.pem", "/p/a/b/k.pem", true}, {"/**", "/etc/x", true}, {"/p/a", "/p/a/b", false},
	} {
		if got := pathMatch(tt.pat, tt.s); got != tt.want {
			t.Errorf("pathMatch(%q, %q) = %v", tt.pat, tt.s, got)
		}
	}
	// Patterns round-trip: the narrowest pattern of a word matches it and
	// only it.
	for _, w := range []string{"plain", "two words", "it's", `back\slash`, "star*", "q?", "", `"dq"`, "a;b"} {
		ws, err := splitPattern("cmd " + patternWord(w))
		if err != nil || len(ws) != 2 {
			t.Fatalf("splitPattern(%q) = %q, %v", patternWord(w), ws, err)
		}
		if !globMatch(ws[1], w) || (w != "" && globMatch(ws[1], w+"x")) {
			t.Errorf("pattern %q for %q does not match it exactly", ws[1], w)
		}
	}
}
