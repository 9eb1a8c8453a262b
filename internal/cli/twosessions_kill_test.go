package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/checkpoint"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/llmtest"
)

// killRounds is how many times each of the two sessions is killed in
// TestTwoSessionsSIGKILLLoop: 25, the 50 kills in all issue #45 asks
// for, unless HARNESS_KILL_ROUNDS says otherwise (a longer soak); -short
// skips it.
func killRounds(t *testing.T) int {
	if testing.Short() {
		t.Skip("50 SIGKILLs of two sessions take about 20 s: not in -short")
	}
	if n, err := strconv.Atoi(os.Getenv("HARNESS_KILL_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 25
}

// scriptedRounds answers one session's requests by what the last user
// message holds, so a reply is never left queued for the wrong request
// when harness is killed before it asks: a prompt "round N" gets a bash
// call that appends a line and writes a file; its result gets a
// write_file call; that result, or any other prompt, a closing text.
func scriptedRounds(name string) func(llmtest.Request) llmtest.Reply {
	return func(r llmtest.Request) llmtest.Reply {
		var last llm.Message
		for _, m := range r.Messages {
			if m.Role == llm.RoleUser {
				last = m
			}
		}
		for _, b := range last.Blocks {
			if b.Type == llm.BlockText {
				if n, ok := strings.CutPrefix(strings.TrimSpace(b.Text), "round "); ok {
					cmd := fmt.Sprintf("printf '%s-%s\\n' >> %s.log; echo %s-%s > %s-%s.txt; sleep 0.2", name, n, name, name, n, name, n)
					in, _ := json.Marshal(map[string]string{"command": cmd})
					return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "toolu_" + name + "_" + n + "_bash", Name: "bash", Input: string(in)}}}
				}
			}
		}
		for _, b := range last.Blocks {
			if b.Type != llm.BlockToolResult {
				continue
			}
			if n, ok := strings.CutSuffix(strings.TrimPrefix(b.ToolUseID, "toolu_"+name+"_"), "_bash"); ok && n != b.ToolUseID {
				in, _ := json.Marshal(map[string]string{"path": name + "-w-" + n + ".txt", "content": name + " wrote " + n + "\n"})
				return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "toolu_" + name + "_" + n + "_write", Name: "write_file", Input: string(in)}}}
			}
		}
		return llmtest.Reply{Text: "ok"}
	}
}

// TestTwoSessionsSIGKILLLoop: two sessions work in one project at once,
// each killed (SIGKILL, the whole process group) at a random moment of
// each of its runs and resumed by the next. Afterwards every log reads,
// every change a log reports done is on disk exactly once (and none twice),
// both sessions resume (the fake provider rejects a tool call without its
// result, as Anthropic does), and each session's undo takes back exactly
// its own files: first A's, leaving B's, then B's, leaving the project as
// it began.
func TestTwoSessionsSIGKILLLoop(t *testing.T) {
	e := newCrashEnv(t, "anthropic")
	writeFile(t, filepath.Join(e.proj, "README"), "the user's own file\n")
	rounds := killRounds(t)
	bin := harnessBinary(t)
	seed := time.Now().UnixNano()
	t.Logf("seed %d (kill delays), %d rounds a session", seed, rounds)

	type session struct {
		name  string
		srv   *llmtest.Server
		env   []string
		id    string
		asked chan struct{} // a request reached the session's provider
		trace []string      // its checkpoints' state before each run, shown on failure
	}
	var sessions []*session
	for _, name := range []string{"A", "B"} {
		s := &session{name: name, srv: llmtest.NewServer(t)}
		for _, kv := range e.env {
			if strings.HasPrefix(kv, "BASE_URL=") {
				kv = "BASE_URL=" + s.srv.URL
			}
			s.env = append(s.env, kv)
		}
		s.srv.Handle(scriptedRounds(name))
		s.asked = make(chan struct{}, 100)
		s.srv.Observe(func(llmtest.Request) {
			select {
			case s.asked <- struct{}{}:
			default:
			}
		})
		sessions = append(sessions, s)
	}

	// runOnce starts harness for s and kills it delay after its first
	// request to the provider, or after its start when early (a kill
	// while it starts), or, with a negative delay, lets it end; it
	// returns the session id it printed.
	runOnce := func(s *session, prompt string, delay time.Duration, early bool) (string, error) {
		for len(s.asked) > 0 {
			<-s.asked
		}
		args := []string{"run", "--project", e.proj, "--yolo", "--output-format", "stream-json"}
		if s.id != "" {
			args = append(args, "--resume", s.id)
		}
		cmd := exec.Command(bin, append(args, prompt)...)
		cmd.Env, cmd.Dir = s.env, e.proj
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		out, err := cmd.StdoutPipe()
		if err != nil {
			return "", err
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			return "", err
		}
		idc := make(chan string, 1)
		go func() {
			sc := bufio.NewScanner(out)
			sent := false
			for sc.Scan() {
				var ev struct {
					SessionID string `json:"session_id"`
				}
				if !sent && json.Unmarshal(sc.Bytes(), &ev) == nil && ev.SessionID != "" {
					idc <- ev.SessionID
					sent = true
				}
			}
			if !sent {
				close(idc)
			}
		}()
		var id string
		if s.id == "" {
			// The first run is killed only once it said its session, so
			// the next can resume it.
			select {
			case id = <-idc:
			case <-time.After(60 * time.Second):
			}
		}
		if delay >= 0 {
			if !early {
				select {
				case <-s.asked:
				case <-time.After(60 * time.Second):
				}
			}
			time.Sleep(delay)
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
			return id, nil
		}
		if err := cmd.Wait(); err != nil {
			return id, fmt.Errorf("%v\n%s", err, stderr.String())
		}
		return id, nil
	}

	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for i, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(seed), uint64(i)))
			for round := range rounds {
				// One run in five is killed while it starts; the others
				// anywhere from the first request to past the turn's end
				// (the command sleeps 200 ms; three requests a turn).
				early := rng.IntN(5) == 0
				delay := time.Duration(rng.IntN(700)) * time.Millisecond
				if early {
					delay = time.Duration(rng.IntN(300)) * time.Millisecond
				}
				s.trace = append(s.trace, fmt.Sprintf("round %d (early %v, delay %v): %s", round, early, delay, checkpointsNow(e.home, s.id)))
				id, err := runOnce(s, fmt.Sprintf("round %d", round), delay, early && s.id != "")
				if err != nil {
					errs <- err
					return
				}
				if s.id == "" {
					if id == "" {
						errs <- fmt.Errorf("session %s's first run said no session id", s.name)
						return
					}
					s.id = id
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	// Every log reads, and what it reports done is on disk exactly once.
	for _, s := range sessions {
		logs, _ := filepath.Glob(filepath.Join(e.home, ".agents", "sessions", "*", "*-"+s.id+".jsonl"))
		if len(logs) != 1 {
			t.Fatalf("session %s (%s): logs %v", s.name, s.id, logs)
		}
		done := map[string]bool{} // tool call ids with a result that is not an error
		for _, m := range mainMessages(readLog(t, logs[0])) {
			for _, b := range m.Blocks {
				if b.Type == llm.BlockToolResult && !b.IsError && !strings.Contains(b.Content, "interrupted") {
					done[b.ToolUseID] = true
				}
			}
		}
		lines, _ := os.ReadFile(filepath.Join(e.proj, s.name+".log"))
		count := map[string]int{}
		for _, l := range strings.Fields(string(lines)) {
			count[l]++
		}
		reported := 0
		for round := range rounds {
			n := strconv.Itoa(round)
			line := s.name + "-" + n
			if count[line] > 1 {
				t.Errorf("session %s round %d: its command's line is in %s.log %d times", s.name, round, s.name, count[line])
			}
			if done["toolu_"+s.name+"_"+n+"_bash"] {
				reported++
				if count[line] != 1 {
					t.Errorf("session %s round %d: the log reports the command done, but its line is in %s.log %d times", s.name, round, s.name, count[line])
				}
			}
			if done["toolu_"+s.name+"_"+n+"_write"] {
				b, err := os.ReadFile(filepath.Join(e.proj, s.name+"-w-"+n+".txt"))
				if err != nil || string(b) != s.name+" wrote "+n+"\n" {
					t.Errorf("session %s round %d: the log reports write_file done, the file holds %q (%v)", s.name, round, b, err)
				}
			}
		}
		t.Logf("session %s: %d of %d commands reported done", s.name, reported, rounds)
		if reported == 0 {
			// Nothing ran to the end: the loop tested nothing.
			t.Errorf("session %s: none of its %d commands is reported done", s.name, rounds)
		}
	}

	// Both resume: a dangling call would be refused by the provider.
	for _, s := range sessions {
		if _, err := runOnce(s, "final", -1, false); err != nil {
			t.Fatalf("session %s does not resume after the kills: %v", s.name, err)
		}
	}

	// Each session's undo takes back its own files, and only those.
	undo := func(s *session) string {
		t.Helper()
		cmd := exec.Command(bin, "undo", "--project", e.proj, "--session", s.id, "--turn", "1")
		cmd.Env, cmd.Dir = e.env, e.proj
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("harness undo --session %s (%s) --turn 1: %v\n%s", s.name, s.id, err, out)
		}
		return string(out)
	}
	files := func() []string {
		var out []string
		entries, _ := os.ReadDir(e.proj)
		for _, d := range entries {
			if !strings.HasPrefix(d.Name(), ".") { // .agents: the walls' carve-out, harness's own
				out = append(out, d.Name())
			}
		}
		return out
	}
	// Every session's checkpoints as the undos found them, shown when an
	// undo was not exact.
	var journals strings.Builder
	logJournals(&journals, e.home)
	defer func() {
		if t.Failed() {
			t.Logf("checkpoints before the undos:\n%s", journals.String())
			for _, s := range sessions {
				t.Logf("session %s before each run:\n  %s", s.name, strings.Join(s.trace, "\n  "))
			}
		}
	}()
	before := files()
	out := undo(sessions[0])
	for _, f := range before {
		isA := strings.HasPrefix(f, "A")
		_, err := os.Stat(filepath.Join(e.proj, f))
		if isA && err == nil {
			t.Errorf("A's undo left A's %s:\n%s", f, out)
		}
		if !isA && err != nil {
			t.Errorf("A's undo removed %s, which is not A's:\n%s", f, out)
		}
	}
	out = undo(sessions[1])
	if got := files(); len(got) != 1 || got[0] != "README" {
		t.Errorf("after both undos the project holds %v, want only README:\n%s", got, out)
	}
	if b, _ := os.ReadFile(filepath.Join(e.proj, "README")); string(b) != "the user's own file\n" {
		t.Errorf("README after both undos: %q", b)
	}
}

// logJournals writes every session's checkpoints (how each change was
// attributed) to w.
func logJournals(w io.Writer, home string) {
	journals, _ := filepath.Glob(filepath.Join(home, ".agents", "sessions", "*", "checkpoints", "*.jsonl"))
	for _, j := range journals {
		es, err := checkpoint.Entries(j)
		fmt.Fprintf(w, "journal %s (%v):\n", filepath.Base(j), err)
		for _, en := range es {
			var paths []string
			for _, c := range en.Changes {
				p := filepath.Base(c.Path)
				if len(c.Shared) > 0 {
					p += fmt.Sprintf(" (shared %v)", c.Shared)
				}
				paths = append(paths, p)
			}
			fmt.Fprintf(w, "  seq %d turn %d %s %s exact=%v attributed=%v killed=%v undo=%v %s..%s: %s\n", en.Seq, en.Turn, en.Tool, en.CallID,
				en.Exact, en.Attributed, en.Killed, en.Undo, en.Start.Format("05.000"), en.Time.Format("05.000"), strings.Join(paths, ", "))
		}
	}
}

// checkpointsNow is a session's checkpoint state between runs: its
// marker of a call in flight (or killed in flight), its write journal's
// size, and how many entries its journal holds.
func checkpointsNow(home, id string) string {
	if id == "" {
		return "no session yet"
	}
	dirs, _ := filepath.Glob(filepath.Join(home, ".agents", "sessions", "*", "checkpoints"))
	var b strings.Builder
	for _, d := range dirs {
		m, err := os.ReadFile(filepath.Join(d, "running", id))
		if err == nil {
			fi, _ := os.Stat(filepath.Join(d, "running", id))
			fmt.Fprintf(&b, "marker %s (beat %s)", m, fi.ModTime().Format("05.000"))
		} else {
			b.WriteString("no marker")
		}
		if fi, err := os.Stat(filepath.Join(d, "running", id+".writes")); err == nil {
			fmt.Fprintf(&b, ", writes %d bytes", fi.Size())
		}
		es, err := checkpoint.Entries(filepath.Join(d, id+".jsonl"))
		fmt.Fprintf(&b, ", %d entries (%v)", len(es), err)
	}
	return b.String()
}
