package agent

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/notice"
	"github.com/harness-dev/harness/internal/reminder"
	"github.com/harness-dev/harness/internal/sessionlog"
	"github.com/harness-dev/harness/internal/testenv"
)

func gitRepo(t *testing.T, dir string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		testenv.Missing(t, "git", "git is not installed")
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"commit", "-qm", "init", "--allow-empty"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// A file change made while requests are built but not sent (/context, a
// compaction's request) still reaches the next request's <file_changes>.
func TestBuildingARequestLosesNoFileChange(t *testing.T) {
	summary := "<summary>\nGoal: x\n</summary>"
	f := newFixture(t,
		toolCalls(use("1", "bash", `{"command":"echo changed > f.txt"}`)),
		text("done"),
		func(*llm.Request) (*llm.Reply, error) { // the /compact
			return &llm.Reply{Message: llm.Text(llm.RoleAssistant, summary), Usage: llm.Usage{Input: 5, Output: 5}}, nil
		},
		text("second"),
	)
	gitRepo(t, f.proj)
	f.agent.o.Reminder = reminder.New(f.proj, nil)
	ctx := context.Background()
	if _, err := f.agent.Run(ctx, "change f", nil); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(f.proj, "g.txt"), []byte("by the user\n"), 0o644)
	for i := 0; i < 2; i++ {
		f.agent.Request(ctx) // /context builds, does not send
	}
	if err := f.agent.Compact(ctx, "", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.agent.Run(ctx, "again", nil); err != nil {
		t.Fatal(err)
	}
	last := f.prov.reqs[len(f.prov.reqs)-1]
	if !strings.Contains(last.Reminder, "- g.txt (new)") {
		t.Errorf("the change made before /context and /compact was lost:\n%s", last.Reminder)
	}
	second := f.prov.reqs[1]
	if !strings.Contains(second.Reminder, "- f.txt (new)") {
		t.Errorf("the command's change was not reported in the next step:\n%s", second.Reminder)
	}
}

// The reminder's state goes to the session log and comes back on resume,
// so an edit made between two runs is reported.
func TestFileChangesAcrossResume(t *testing.T) {
	f := newFixture(t, text("one"), text("two"))
	gitRepo(t, f.proj)
	os.WriteFile(filepath.Join(f.proj, "a.txt"), []byte("v1\n"), 0o644)
	f.agent.o.Reminder = reminder.New(f.proj, nil)
	f.agent.o.OnReminder = func(st reminder.State) {
		raw, _ := json.Marshal(st)
		f.agent.o.Log.Append(sessionlog.Entry{Type: sessionlog.TypeReminder, Reminder: raw})
	}
	if _, err := f.agent.Run(context.Background(), "hi", nil); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(f.proj, "a.txt"), []byte("v2, while harness was off\n"), 0o644)
	entries, err := sessionlog.ReadFile(f.log)
	if err != nil {
		t.Fatal(err)
	}
	st, ok := LastReminder(entries)
	if !ok {
		t.Fatal("no reminder state in the log")
	}
	rem := reminder.New(f.proj, nil)
	rem.Restore(st)
	if got := rem.Build(context.Background(), ""); !strings.Contains(got, "- a.txt (new)") {
		t.Errorf("resumed session does not report the edit between runs:\n%s", got)
	}
}

// A compaction that fails is not retried on every step.
func TestFailedCompactionBacksOff(t *testing.T) {
	var steps []func(*llm.Request) (*llm.Reply, error)
	summaries := 0
	for i := 0; i < 12; i++ {
		steps = append(steps, func(req *llm.Request) (*llm.Reply, error) {
			if n := len(req.Messages); n > 0 && strings.Contains(req.Messages[n-1].PlainText(), "Write that note now") {
				summaries++
				return nil, &llm.Error{Kind: llm.ErrOverloaded, Message: "cannot summarise"}
			}
			return &llm.Reply{Message: llm.Message{Role: llm.RoleAssistant, Blocks: []llm.Block{use("c", "bash", `{"command":"true"}`)}},
				StopReason: llm.StopToolUse, Usage: llm.Usage{Input: 200000, Output: 10}}, nil
		})
	}
	f := newFixture(t, steps...)
	f.agent.o.MaxSteps = 8
	var notes []string
	_, err := f.agent.Run(context.Background(), "go", noticeRecorder{&notes})
	if err != nil {
		t.Fatal(err)
	}
	if summaries == 0 || summaries > 4 {
		t.Errorf("%d summarisation attempts over 8 steps over the budget; want a few, backing off", summaries)
	}
}

type noticeRecorder struct{ notes *[]string }

func (noticeRecorder) OnEvent(llm.Event)                             {}
func (noticeRecorder) OnToolStart(llm.Block)                         {}
func (noticeRecorder) OnToolEnd(llm.Block, llm.Block, time.Duration) {}
func (noticeRecorder) OnReply(*llm.Reply)                            {}
func (r noticeRecorder) OnNotice(n notice.Notice)                    { *r.notes = append(*r.notes, n.Text) }
