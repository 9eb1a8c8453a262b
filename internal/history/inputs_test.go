package history

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/llm"
)

// mapDisk is a project whose files are held in memory: path -> content.
type mapDisk map[string]string

func (d mapDisk) Sum(path string, size int) ([sha256.Size]byte, bool) {
	c, ok := d[path]
	if !ok || len(c) != size {
		return [sha256.Size]byte{}, false
	}
	return sha256.Sum256([]byte(c)), true
}

// stubRef matches an input stub: its size, file and hash, and the
// newline a here-document body's stub ends with.
var stubRef = regexp.MustCompile(`\[harness strip: these (\d+) chars are what (\S+) holds now \(sha256 ([0-9a-f]+)…\); read that file to see them\]\n?`)

func bashInput(cmd string) json.RawMessage {
	in, _ := json.Marshal(map[string]string{"command": cmd})
	return in
}

func TestWrites(t *testing.T) {
	body := "line one\n  line two\n"
	for _, tc := range []struct {
		name string
		cmd  string
		want []Write // From and To are checked against the body's place
	}{
		{"cat quoted", "cat > a.py <<'EOF'\n" + body + "EOF\npython a.py", []Write{{Path: "a.py", Body: body}}},
		{"cat redirect after", "cat <<\"EOF\" > /p/b.txt\n" + body + "EOF", []Write{{Path: "/p/b.txt", Body: body}}},
		{"unquoted literal", "cat > c <<EOF\n" + body + "EOF", []Write{{Path: "c", Body: body}}},
		{"tee", "tee d.cfg > /dev/null <<'EOF'\n" + body + "EOF", []Write{{Path: "d.cfg", Body: body}}},
		{"dash strips tabs", "cat > e <<-'EOF'\n\tx\n\t\ty\n\tEOF", []Write{{Path: "e", Body: "x\ny\n"}}},
		{"after a chain", "mkdir -p s && cat > s/f <<'EOF'\n" + body + "EOF", []Write{{Path: "s/f", Body: body}}},
		{"two files", "cat > g <<'A'\n" + body + "A\ncat > h <<'B'\nsecond\nB", []Write{{Path: "g", Body: body}, {Path: "h", Body: "second\n"}}},
		// Not a whole file the path names, or not literal text:
		{"append", "cat >> log <<'EOF'\n" + body + "EOF", nil},
		{"expansion", "cat > f <<EOF\nhome is $HOME\nEOF", nil},
		{"backslash", "cat > f <<EOF\na\\$b\nEOF", nil},
		{"command substitution", "cat > f <<EOF\n`date`\nEOF", nil},
		{"cd first", "cd sub && cat > f <<'EOF'\n" + body + "EOF", nil},
		{"cd on a line before", "cd /elsewhere\ncat > f <<'EOF'\n" + body + "EOF", nil},
		{"stdin of python", "python - <<'EOF'\n" + body + "EOF", nil},
		{"in a pipe", "cat <<'EOF' | sort > f\n" + body + "EOF", nil},
		{"inside if", "if true; then cat > f <<'EOF'\n" + body + "EOF\nfi", nil},
		{"in the background", "cat > f <<'EOF' &\n" + body + "EOF", nil},
		{"variable path", "cat > $F <<'EOF'\n" + body + "EOF", nil},
		{"cat of a file too", "cat x > f <<'EOF'\n" + body + "EOF", nil},
		{"not shell", "cat > f <<'EOF\n" + body, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Writes("bash", bashInput(tc.cmd))
			for i := range got {
				if got[i].From >= got[i].To || !strings.Contains(tc.cmd[got[i].From:got[i].To], strings.TrimLeft(got[i].Body, "\t")[:1]) {
					t.Errorf("write %d: offsets %d..%d do not hold the body", i, got[i].From, got[i].To)
				}
				got[i].From, got[i].To = 0, 0
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Writes(%q) = %+v, want %+v", tc.cmd, got, tc.want)
			}
		})
	}
	in, _ := json.Marshal(map[string]string{"path": "w.go", "content": body})
	if got := Writes("write_file", in); len(got) != 1 || got[0].Path != "w.go" || got[0].Body != body {
		t.Errorf("write_file: %+v", got)
	}
}

// A stub never hides what is not on disk: a body is replaced only while
// its file holds exactly it, and everything else stays byte for byte.
func TestInputStubOnlyWhatIsOnDisk(t *testing.T) {
	body := strings.Repeat("def f():\n    return 1\n", 20) // 460 chars
	small := "x = 1\n"
	writeFile := func(path, content string) llm.Message {
		in, _ := json.Marshal(map[string]string{"path": path, "content": content})
		return llm.Message{Role: llm.RoleAssistant, Blocks: []llm.Block{{Type: llm.BlockToolUse, ID: "w", Name: "write_file", Input: in}}}
	}
	for _, tc := range []struct {
		name    string
		msg     llm.Message
		disk    mapDisk
		stubbed []string // bodies that must be gone; every other input byte stays
	}{
		{"heredoc on disk", call("a", "cat > a.py <<'EOF'\n"+body+"EOF\npython a.py"), mapDisk{"a.py": body}, []string{body}},
		{"file changed since", call("a", "cat > a.py <<'EOF'\n"+body+"EOF"), mapDisk{"a.py": body + "# edited\n"}, nil},
		{"changed, same size", call("a", "cat > a.py <<'EOF'\n"+body+"EOF"), mapDisk{"a.py": strings.Replace(body, "1", "2", 1)}, nil},
		{"file gone", call("a", "cat > a.py <<'EOF'\n"+body+"EOF"), mapDisk{}, nil},
		{"changed by the same command", call("a", "cat > a.py <<'EOF'\n"+body+"EOF\nsed -i s/1/2/ a.py"), mapDisk{"a.py": strings.ReplaceAll(body, "1", "2")}, nil},
		{"under 200 chars", call("a", "cat > s.py <<'EOF'\n"+small+"EOF"), mapDisk{"s.py": small}, nil},
		{"one of two changed", call("a", "cat > a.py <<'A'\n"+body+"A\ncat > b.py <<'B'\n"+body+"B"), mapDisk{"a.py": "other\n", "b.py": body}, []string{body}},
		{"to stdin, not a file", call("a", "python - <<'EOF'\n"+body+"EOF"), mapDisk{"-": body}, nil},
		{"relative after cd", call("a", "cd lib && cat > a.py <<'EOF'\n"+body+"EOF"), mapDisk{"a.py": body}, nil},
		{"write_file on disk", writeFile("w.py", body), mapDisk{"w.py": body}, []string{body}},
		{"write_file changed", writeFile("w.py", body), mapDisk{"w.py": body[1:]}, nil},
		{"no disk at all", call("a", "cat > a.py <<'EOF'\n"+body+"EOF"), nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{}
			if tc.disk != nil {
				cfg.Disk = tc.disk
			}
			h := New(cfg)
			h.Append(llm.Text(llm.RoleUser, "go"))
			h.Append(tc.msg)
			h.Append(result("a", "ok"))
			h.Append(call("b", "ls"))
			h.Append(result("b", "ok"))
			h.EndTurn()
			orig := tc.msg.Blocks[len(tc.msg.Blocks)-1]
			got := h.Messages()[1].Blocks[len(tc.msg.Blocks)-1]
			if len(tc.stubbed) == 0 {
				if got.Layer != "" || string(got.Input) != string(orig.Input) {
					t.Fatalf("input changed though its body is not on disk:\n%s", got.Input)
				}
				return
			}
			if got.Layer != LayerStrip || !json.Valid(got.Input) {
				t.Fatalf("not stubbed: layer %q", got.Layer)
			}
			// The stub and the disk give back the input, byte for byte.
			var before, after map[string]string
			json.Unmarshal(orig.Input, &before)
			json.Unmarshal(got.Input, &after)
			for k, v := range after {
				restored := stubRef.ReplaceAllStringFunc(v, func(m string) string {
					p := stubRef.FindStringSubmatch(m)
					content := tc.disk[p[2]]
					if strconv.Itoa(len(content)) != p[1] || !strings.HasPrefix(fmt.Sprintf("%x", sha256.Sum256([]byte(content))), p[3]) {
						t.Errorf("stub %q does not match what %s holds", m, p[2])
					}
					return content
				})
				if restored != before[k] {
					t.Errorf("%s: stub plus disk is not the input:\n%s\nwant\n%s", k, restored, before[k])
				}
			}
			if n := len(stubRef.FindAllString(string(got.Input), -1)); n != len(tc.stubbed) {
				t.Errorf("%d bodies stubbed, want %d", n, len(tc.stubbed))
			}
			s := string(got.Input)
			if !strings.Contains(s, "what ") || !strings.Contains(s, "holds now (sha256 ") {
				t.Errorf("the stub does not name the file and its hash: %s", s)
			}
		})
	}
}

// The input strip is the harness's alone: the reference and raw keep
// every input.
func TestInputStubStrategies(t *testing.T) {
	body := strings.Repeat("y", 500) + "\n"
	for _, st := range []Strategy{seed, raw} {
		h := New(Config{Strategy: st, Disk: mapDisk{"f": body}})
		h.Append(llm.Text(llm.RoleUser, "go"))
		c := call("a", "cat > f <<'EOF'\n"+body+"EOF")
		h.Append(c)
		h.Append(result("a", "ok"))
		h.Append(call("b", "ls"))
		h.Append(result("b", "ok"))
		h.EndTurn()
		if got := h.Messages()[1]; !reflect.DeepEqual(got, c) {
			t.Errorf("%s stubbed an input", st.Name())
		}
	}
}
