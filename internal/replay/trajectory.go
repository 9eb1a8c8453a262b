package replay

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/harness-dev/harness/internal/history"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/sessionlog"
)

// Trajectory is one recorded session in harness's terms.
type Trajectory struct {
	Name     string
	System   string
	Tools    []llm.Tool
	Messages []llm.Message
	// Usage holds the recorded provider usage of the request answered by
	// Messages[i], when i is an assistant message and the record has it.
	Usage map[int]llm.Usage
}

// bashTool is the one tool a mini-swe-agent trajectory uses.
var bashTool = llm.Tool{
	Name:        "bash",
	Description: "Run one bash command in the project and return its exit code and output.",
	Schema:      json.RawMessage(`{"type":"object","properties":{"command":{"type":"string","description":"the command"}},"required":["command"]}`),
}

// Load reads the trajectories at paths: files, or directories (every
// trajectory file directly inside, in name order). Files are
// mini-swe-agent *.traj.json(.gz) or harness session logs (*.jsonl).
func Load(paths []string) ([]Trajectory, error) {
	var files []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("reading trajectories: %w", err)
		}
		if !fi.IsDir() {
			files = append(files, p)
			continue
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			return nil, fmt.Errorf("reading trajectories: %w", err)
		}
		var names []string
		for _, e := range ents {
			if !e.IsDir() && isTrajectory(e.Name()) {
				names = append(names, filepath.Join(p, e.Name()))
			}
		}
		sort.Strings(names)
		files = append(files, names...)
	}
	if len(files) == 0 {
		return nil, errors.New("no trajectories found: pass *.traj.json.gz files, *.jsonl session logs or directories holding them")
	}
	out := make([]Trajectory, 0, len(files))
	for _, f := range files {
		t, err := LoadFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

func isTrajectory(name string) bool {
	for _, s := range []string{".traj.json.gz", ".traj.json", ".jsonl"} {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// LoadFile reads one trajectory file.
func LoadFile(path string) (Trajectory, error) {
	f, err := os.Open(path)
	if err != nil {
		return Trajectory{}, fmt.Errorf("reading trajectory: %w", err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			return Trajectory{}, fmt.Errorf("reading trajectory %s: %w", path, err)
		}
		defer gz.Close()
		r = gz
	}
	name := filepath.Base(path)
	var t Trajectory
	if strings.HasSuffix(path, ".jsonl") {
		t, err = parseSession(r)
	} else {
		t, err = parseMiniSWE(r)
	}
	if err != nil {
		return Trajectory{}, fmt.Errorf("reading trajectory %s: %w", path, err)
	}
	t.Name = name
	return t, nil
}

type miniSWE struct {
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
		Extra   struct {
			Response struct {
				Usage *struct {
					Prompt  int `json:"prompt_tokens"`
					Output  int `json:"completion_tokens"`
					Details struct {
						Cached int `json:"cached_tokens"`
					} `json:"prompt_tokens_details"`
				} `json:"usage"`
			} `json:"response"`
		} `json:"extra"`
	} `json:"messages"`
}

var bashBlock = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("(?s)```bash\\s*\n(.*?)\n?```") })

// contentText accepts a string or a list of {"type":"text","text":…}.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var sb strings.Builder
	for _, p := range parts {
		sb.WriteString(p.Text)
	}
	return sb.String()
}

// parseMiniSWE turns a mini-swe-agent trajectory into messages: an
// assistant message with exactly one bash block becomes text plus a bash
// tool call, and the user message after it becomes that call's result.
func parseMiniSWE(r io.Reader) (Trajectory, error) {
	var raw miniSWE
	if err := json.NewDecoder(r).Decode(&raw); err != nil {
		return Trajectory{}, err
	}
	t := Trajectory{Tools: []llm.Tool{bashTool}, Usage: map[int]llm.Usage{}}
	pending := ""
	for _, m := range raw.Messages {
		text := contentText(m.Content)
		switch m.Role {
		case "system":
			t.System += text
		case "user":
			if pending != "" {
				t.Messages = append(t.Messages, llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{{
					Type: llm.BlockToolResult, ToolUseID: pending, Content: text,
				}}})
				pending = ""
				continue
			}
			msg := llm.Text(llm.RoleUser, text)
			if n := len(t.Messages); n > 0 && t.Messages[n-1].Role == llm.RoleAssistant {
				// A user message after a reply with no call is
				// mini-swe-agent's own feedback (a format error).
				msg.Blocks[0].Layer = history.LayerFeedback
			}
			t.Messages = append(t.Messages, msg)
		case "assistant":
			if pending != "" { // a call never answered: answer it empty
				t.Messages = append(t.Messages, llm.Message{Role: llm.RoleUser, Blocks: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: pending}}})
				pending = ""
			}
			msg := llm.Message{Role: llm.RoleAssistant}
			if loc := bashBlock().FindAllStringSubmatchIndex(text, -1); len(loc) == 1 {
				thought := strings.TrimSpace(text[:loc[0][0]] + text[loc[0][1]:])
				if thought != "" {
					msg.Blocks = append(msg.Blocks, llm.Block{Type: llm.BlockText, Text: thought})
				}
				input, _ := json.Marshal(map[string]string{"command": text[loc[0][2]:loc[0][3]]})
				pending = fmt.Sprintf("call_%d", len(t.Messages))
				msg.Blocks = append(msg.Blocks, llm.Block{Type: llm.BlockToolUse, ID: pending, Name: "bash", Input: input})
			} else {
				msg.Blocks = append(msg.Blocks, llm.Block{Type: llm.BlockText, Text: text})
			}
			if u := m.Extra.Response.Usage; u != nil {
				t.Usage[len(t.Messages)] = llm.Usage{Input: u.Prompt - u.Details.Cached, CacheRead: u.Details.Cached, Output: u.Output}
			}
			t.Messages = append(t.Messages, msg)
		}
	}
	if len(t.Messages) == 0 {
		return Trajectory{}, errors.New("no messages")
	}
	return t, nil
}

// parseSession reads a harness session log: the prompt line gives the
// system prompt and tools, message lines the messages, and each usage line
// the recorded usage of the request answered by the next message (the loop
// logs a reply's usage just before the reply); every other line type, a
// compaction's usage and sub-agents' lines are skipped.
func parseSession(r io.Reader) (Trajectory, error) {
	t := Trajectory{Usage: map[int]llm.Usage{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		var line struct {
			Type    string       `json:"type"`
			Agent   string       `json:"agent"`
			Message *llm.Message `json:"message"`
			Usage   *llm.Usage   `json:"usage"`
			Text    string       `json:"text"`
			System  string       `json:"system"`
			Tools   []llm.Tool   `json:"tools"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Agent != "" {
			continue // a torn last line, or a sub-agent's
		}
		switch {
		case line.Type == sessionlog.TypeMessage && line.Message != nil:
			t.Messages = append(t.Messages, *line.Message)
		case line.Type == sessionlog.TypePrompt:
			t.System, t.Tools = line.System, line.Tools
		case line.Type == sessionlog.TypeUsage && line.Usage != nil && line.Text != sessionlog.UsageCompact:
			t.Usage[len(t.Messages)] = *line.Usage
		}
	}
	if err := sc.Err(); err != nil {
		return Trajectory{}, err
	}
	if len(t.Messages) == 0 {
		return Trajectory{}, errors.New("no messages")
	}
	return t, nil
}
