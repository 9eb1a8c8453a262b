package batch

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestReadTasks(t *testing.T) {
	tests := []struct {
		name, in, err string
		n             int
	}{
		{"ok", `{"id":"a","repo":"r","prompt":"p","timeout":"90s","budget_usd":1}` + "\n\n# note\n" + `{"id":"b","repo":"r","prompt":"p","timeout":30}`, "", 2},
		{"unknown field", `{"id":"a","repo":"r","prompt":"p","chek":"true"}`, `line 1: json: unknown field "chek"`, 0},
		{"duplicate", `{"id":"a","repo":"r","prompt":"p"}` + "\n" + `{"id":"a","repo":"r","prompt":"q"}`, `line 2: id "a" already used on line 1`, 0},
		{"bad id", `{"id":"../x","repo":"r","prompt":"p"}`, `id "../x"`, 0},
		{"no repo", `{"id":"a","prompt":"p"}`, "no repo", 0},
		{"blank prompt", `{"id":"a","repo":"r","prompt":"  "}`, "no prompt", 0},
		{"bad timeout", `{"id":"a","repo":"r","prompt":"p","timeout":"soon"}`, `timeout "soon"`, 0},
		{"negative budget", `{"id":"a","repo":"r","prompt":"p","budget_usd":-1}`, "negative", 0},
		{"empty", "\n# nothing\n", "no tasks", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tasks, err := ReadTasks(strings.NewReader(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.err)
				}
				return
			}
			if err != nil || len(tasks) != tt.n {
				t.Fatalf("got %d tasks, %v; want %d", len(tasks), err, tt.n)
			}
			if time.Duration(tasks[0].Timeout) != 90*time.Second || time.Duration(tasks[1].Timeout) != 30*time.Second {
				t.Fatalf("timeouts %v %v", tasks[0].Timeout, tasks[1].Timeout)
			}
		})
	}
	var te *TaskError
	_, err := ReadTasks(strings.NewReader(`{"id":"a"}`))
	if !errors.As(err, &te) || te.Line != 1 {
		t.Fatalf("want a *TaskError on line 1, got %v", err)
	}
}

func TestReadResultsTornLastLine(t *testing.T) {
	in := `{"id":"a","status":"solved","duration_s":1}` + "\n" + `{"id":"a","status":"failed","duration_s":2}` + "\n" + `{"id":"b","stat`
	got, err := ReadResults(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got["a"].Status != Failed {
		t.Fatalf("got %+v: want only a, its later line winning", got)
	}
	// A bad line that is not the last is not a torn write: refuse it.
	if _, err := ReadResults(strings.NewReader("garbage\n" + `{"id":"a","status":"solved"}` + "\n")); err == nil {
		t.Fatal("a bad line in the middle was accepted")
	}
}

// fakeExec records concurrency and answers with a scripted cost.
type fakeExec struct {
	cost    float64
	delay   time.Duration
	running atomic.Int32
	peak    atomic.Int32
	mu      sync.Mutex
	ran     []string
	limits  map[string]Limits
}

func (f *fakeExec) Run(ctx context.Context, t Task, lim Limits) Result {
	n := f.running.Add(1)
	defer f.running.Add(-1)
	for {
		p := f.peak.Load()
		if n <= p || f.peak.CompareAndSwap(p, n) {
			break
		}
	}
	f.mu.Lock()
	f.ran = append(f.ran, t.ID)
	if f.limits == nil {
		f.limits = map[string]Limits{}
	}
	f.limits[t.ID] = lim
	f.mu.Unlock()
	select {
	case <-time.After(f.delay):
	case <-ctx.Done():
		return Result{Status: Interrupted}
	}
	c := f.cost
	if lim.BudgetUSD > 0 && c > lim.BudgetUSD {
		return Result{Status: OverBudget, CostUSD: &c}
	}
	return Result{Status: Solved, CostUSD: &c, Seconds: 1, CheckExit: new(int)}
}

func tasksN(n int) []Task {
	var ts []Task
	for i := range n {
		ts = append(ts, Task{ID: string(rune('a' + i)), Repo: "r", Prompt: "p"})
	}
	return ts
}

func TestRunnerBoundsJobsAndResumes(t *testing.T) {
	ex := &fakeExec{cost: 0.5, delay: 20 * time.Millisecond}
	var out bytes.Buffer
	r := &Runner{Exec: ex, Jobs: 3, Results: &out}
	prev := map[string]Result{
		"a": {ID: "a", Status: Solved},                    // final: not run again
		"b": {ID: "b", Status: Interrupted},               // runs again
		"c": {ID: "c", Status: Skipped},                   // runs again
		"z": {ID: "z", Status: Failed, CostUSD: ptr(9.0)}, // not in this task file: kept
	}
	all, err := r.Run(context.Background(), tasksN(8), prev)
	if err != nil {
		t.Fatal(err)
	}
	if p := ex.peak.Load(); p > 3 || p < 2 {
		t.Errorf("peak concurrency %d, want 2..3 with --jobs 3", p)
	}
	if len(ex.ran) != 7 || strings.Contains(strings.Join(ex.ran, ""), "a") {
		t.Errorf("ran %v: want every task but a", ex.ran)
	}
	if got := strings.Count(out.String(), "\n"); got != 7 {
		t.Errorf("%d result lines written, want 7", got)
	}
	if len(all) != 9 {
		t.Errorf("%d results, want 9 (8 tasks and z)", len(all))
	}
	s := Summarize(tasksN(8), all)
	if s.Solved != 8 || s.Unfinished != 0 || s.CostUSD != 3.5 || s.PerSolved == nil || *s.PerSolved != 3.5/8 {
		t.Errorf("summary %+v", s)
	}
}

func TestRunnerBudgetIsShared(t *testing.T) {
	ex := &fakeExec{cost: 0.4, delay: 10 * time.Millisecond}
	r := &Runner{Exec: ex, Jobs: 2, BudgetUSD: 1.0}
	all, err := r.Run(context.Background(), tasksN(6), nil)
	if err != nil {
		t.Fatal(err)
	}
	var spent float64
	skipped := 0
	for id, res := range all {
		if res.CostUSD != nil {
			spent += *res.CostUSD
		}
		if res.Status == Skipped {
			skipped++
		}
		if lim, ok := ex.limits[id]; ok && (lim.BudgetUSD <= 0 || lim.BudgetUSD > 1.0) {
			t.Errorf("%s ran with budget %v", id, lim.BudgetUSD)
		}
	}
	// Each running task gets at most its fair share and can pass it by one
	// reply (here a task's whole cost is one reply of 0.4), so two at once
	// can pass the total by at most 2 × 0.4; nothing starts once it is spent.
	if spent > 1.0+2*0.4 {
		t.Errorf("spent %.2f of a 1.00 budget", spent)
	}
	if skipped == 0 {
		t.Errorf("no task was skipped: %+v", all)
	}
}

func TestRunnerInterrupt(t *testing.T) {
	ex := &fakeExec{cost: 0, delay: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Runner{Exec: ex, Jobs: 2, OnStart: func(Task) {
		if ex.running.Load() >= 1 {
			cancel()
		}
	}}
	go func() {
		for ex.running.Load() < 2 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	all, err := r.Run(ctx, tasksN(5), nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	for id, res := range all {
		if res.Status != Interrupted {
			t.Errorf("%s: %s, want interrupted", id, res.Status)
		}
	}
	if len(all) > 2 {
		t.Errorf("%d tasks started after the interrupt", len(all)-2)
	}
}

func TestPercentile(t *testing.T) {
	v := []float64{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	if p := percentile(v, 0.5); p != 5 {
		t.Errorf("p50 = %v", p)
	}
	if p := percentile(v, 0.95); p != 10 {
		t.Errorf("p95 = %v", p)
	}
	if p := percentile(nil, 0.5); p != 0 {
		t.Errorf("empty p50 = %v", p)
	}
}

func ptr(f float64) *float64 { return &f }
