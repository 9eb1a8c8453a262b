package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/harness-dev/harness/internal/llm/llmtest"
)

// TestUndoAfterSIGKILL: harness is killed (SIGKILL) in the middle of a
// turn, after one command changed files and while the next runs; harness
// undo, from a new process, sets back what the finished command changed.
func TestUndoAfterSIGKILL(t *testing.T) {
	e := newCrashEnv(t, "anthropic")
	writeFile(t, filepath.Join(e.proj, "a.txt"), "original\n")
	e.srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "bash", Input: `{"command":"echo agent > a.txt && rm -f gone && echo new > b.txt"}`}}})
	e.srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c2", Name: "bash", Input: `{"command":"sleep 300"}`}}})
	cmd, lines := e.start(t, "run", "--project", e.proj, "--yolo", "--output-format", "stream-json", "change then wait")
	n := 0
	for line := range lines {
		if strings.Contains(line, `"type":"tool_use"`) {
			if n++; n == 2 {
				break
			}
		}
	}
	waitFor(t, "the sleep to start", func() bool {
		out, _ := exec.Command("pgrep", "-f", "sleep 300").Output()
		return len(bytes.TrimSpace(out)) > 0
	})
	if b, _ := os.ReadFile(filepath.Join(e.proj, "a.txt")); string(b) != "agent\n" {
		t.Fatalf("the first command did not run: a.txt = %q", b)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	undo := exec.Command(harnessBinary(t), "undo", "--project", e.proj)
	undo.Env, undo.Dir = e.env, e.proj
	out, err := undo.CombinedOutput()
	if err != nil {
		t.Fatalf("harness undo after the kill: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(e.proj, "a.txt")); string(b) != "original\n" {
		t.Errorf("a.txt after undo: %q\n%s", b, out)
	}
	if _, err := os.Stat(filepath.Join(e.proj, "b.txt")); err == nil {
		t.Errorf("b.txt survived the undo\n%s", out)
	}
}

// TestUndoAfterSIGKILLMidChange: harness is killed while a command that
// already rewrote a file the turn's first command wrote is still running.
// harness undo takes the turn back whole: the killed call's change is the
// agent's (its marker says when it began), not a conflict of the user's.
func TestUndoAfterSIGKILLMidChange(t *testing.T) {
	e := newCrashEnv(t, "anthropic")
	writeFile(t, filepath.Join(e.proj, "a.txt"), "original\n")
	e.srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "bash", Input: `{"command":"echo first > a.txt"}`}}})
	e.srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c2", Name: "bash", Input: `{"command":"echo killed-call > a.txt; sleep 300"}`}}})
	cmd, lines := e.start(t, "run", "--project", e.proj, "--yolo", "--output-format", "stream-json", "change twice")
	n := 0
	for line := range lines {
		if strings.Contains(line, `"type":"tool_use"`) {
			if n++; n == 2 {
				break
			}
		}
	}
	waitFor(t, "the second command to write", func() bool {
		b, _ := os.ReadFile(filepath.Join(e.proj, "a.txt"))
		return string(b) == "killed-call\n"
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	undo := exec.Command(harnessBinary(t), "undo", "--project", e.proj)
	undo.Env, undo.Dir = e.env, e.proj
	out, err := undo.CombinedOutput()
	if err != nil {
		t.Fatalf("harness undo after the kill: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(e.proj, "a.txt")); string(b) != "original\n" {
		t.Errorf("a.txt after undo: %q\n%s", b, out)
	}
}
