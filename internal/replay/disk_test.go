package replay

import (
	"crypto/sha256"
	"encoding/json"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/llm"
)

func bashCall(cmd string) llm.Block {
	in, _ := json.Marshal(map[string]string{"command": cmd})
	return llm.Block{Type: llm.BlockToolUse, Name: "bash", Input: in}
}

// The replay's disk holds a written body until a later command may have
// changed the file: one that names it other than to read it.
func TestSimDisk(t *testing.T) {
	body := strings.Repeat("print('x')\n", 30)
	for _, tc := range []struct {
		name  string
		later []string
		held  bool
	}{
		{"untouched", nil, true},
		{"read", []string{"cat /testbed/a.py", "python a.py", "grep -n x a.py && nl a.py", "sed -n 1,5p a.py", "git diff a.py"}, true},
		{"other files", []string{"sed -i s/x/y/ b.py", "echo hi > b.py"}, true},
		{"sed -i", []string{"sed -i s/x/y/ a.py"}, false},
		{"redirect", []string{"echo 1 >> /testbed/a.py"}, false},
		{"python -c", []string{"python -c \"open('a.py','w').write('')\""}, false},
		{"moved", []string{"mv a.py c.py"}, false},
		{"rewritten", []string{"cat > a.py <<'EOF'\nother\nEOF"}, false},
		{"written then changed in one command", []string{"cat > a.py <<'EOF'\n" + body + "EOF\nsed -i s/x/y/ a.py"}, false},
		{"unparsable", []string{"echo 'a.py"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newSimDisk()
			d.run(bashCall("cat > a.py <<'EOF'\n" + body + "EOF"))
			for _, c := range tc.later {
				d.run(bashCall(c))
			}
			sum, ok := d.Sum("/testbed/a.py", len(body))
			if held := ok && sum == sha256.Sum256([]byte(body)); held != tc.held {
				t.Errorf("after %q: holds the body %v, want %v", tc.later, held, tc.held)
			}
		})
	}
}

// mini-swe-agent's format-error feedback is loaded as the harness's own
// feedback; the task prompt and command outputs are not.
func TestFeedbackTagged(t *testing.T) {
	raw := `{"messages":[{"role":"system","content":"sys"},{"role":"user","content":"the task"},
{"role":"assistant","content":"two\n` + "```bash\\nls\\n```\\n```bash\\npwd\\n```" + `"},
{"role":"user","content":"Please always provide EXACTLY ONE action"},
{"role":"assistant","content":"` + "```bash\\nls\\n```" + `"},
{"role":"user","content":"<returncode>0</returncode>"}]}`
	tr, err := parseMiniSWE(strings.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	var layers []string
	for _, m := range tr.Messages {
		if m.Role == llm.RoleUser {
			layers = append(layers, m.Blocks[0].Layer)
		}
	}
	if strings.Join(layers, ",") != ",feedback," {
		t.Errorf("user message layers %q, want the feedback alone tagged", layers)
	}
}
