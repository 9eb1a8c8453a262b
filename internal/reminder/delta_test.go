package reminder

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Building a reminder has no effect until it is committed: a request built
// for display, or one that failed, loses no file change.
func TestPrepareHasNoSideEffects(t *testing.T) {
	dir := repo(t)
	b := New(dir, fixed)
	ctx := context.Background()
	b.Build(ctx, "")
	os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a // edited\n"), 0o644)
	for i := 0; i < 3; i++ {
		if p := b.Prepare(ctx, "", Full, false); !strings.Contains(p.Text, "- a.go (modified)") {
			t.Fatalf("uncommitted build %d lost the change:\n%s", i, p.Text)
		}
	}
	p := b.Prepare(ctx, "", Full, false)
	p.Commit()
	if again := b.Prepare(ctx, "", Full, false); strings.Contains(again.Text, "<file_changes>") {
		t.Errorf("committed change reported again:\n%s", again.Text)
	}
}

func TestDeltaCarriesOnlyWhatChanged(t *testing.T) {
	dir := repo(t)
	now := time.Date(2025, 3, 4, 5, 6, 0, 0, time.UTC)
	b := New(dir, func() time.Time { return now })
	ctx := context.Background()
	send := func(todos string, turnStart bool) string {
		p := b.Prepare(ctx, todos, Delta, turnStart)
		p.Commit()
		return p.Text
	}
	first := send("", true)
	for _, want := range []string{"time: 2025-03-04 05:06 UTC", "git branch: main"} {
		if !strings.Contains(first, want) {
			t.Errorf("first delta lacks %q:\n%s", want, first)
		}
	}
	now = now.Add(10 * time.Minute)
	if got := send("", false); got != "" {
		t.Errorf("nothing changed mid-turn, but the delta says:\n%s", got)
	}
	if got := send("", true); !strings.Contains(got, "time: 2025-03-04 05:16") || strings.Contains(got, "branch") {
		t.Errorf("turn start: want the time only:\n%s", got)
	}
	now = now.Add(50 * time.Minute) // 06:06: the hour changed
	if got := send("", false); !strings.Contains(got, "time: 2025-03-04 06:06") {
		t.Errorf("hour change: want the time:\n%s", got)
	}
	if got := send("- [ ] plan", false); got != "<todos>\n- [ ] plan\n</todos>" {
		t.Errorf("todos changed: got %q", got)
	}
	if got := send("- [ ] plan", false); got != "" {
		t.Errorf("todos unchanged: got %q", got)
	}
	git(t, dir, "checkout", "-q", "-b", "feature")
	os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a // edited\n"), 0o644)
	got := send("- [ ] plan", false)
	if !strings.Contains(got, "git branch: feature") || !strings.Contains(got, "- a.go (modified)") || strings.Contains(got, "time:") || strings.Contains(got, "todos") {
		t.Errorf("branch and file changed: got\n%s", got)
	}
}

// The committed state survives a restart: edits made between runs are
// reported by the first reminder of the resumed session.
func TestStateAcrossResume(t *testing.T) {
	dir := repo(t)
	ctx := context.Background()
	b := New(dir, fixed)
	b.Build(ctx, "")
	raw, err := json.Marshal(b.State())
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a // edited while harness was off\n"), 0o644)
	var st State
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	resumed := New(dir, fixed)
	resumed.Restore(st)
	if got := resumed.Build(ctx, ""); !strings.Contains(got, "- a.go (modified)") {
		t.Errorf("edit between runs not reported:\n%s", got)
	}
}
