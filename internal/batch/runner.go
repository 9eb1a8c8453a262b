package batch

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Limits bound one task's agent run.
type Limits struct {
	Timeout   time.Duration // zero: none
	BudgetUSD float64       // zero: none
}

// Executor runs one task to a Result. It never returns without one: a
// failure is a Result with a Status and an Error. When ctx is cancelled the
// task stops and its Result says Interrupted.
type Executor interface {
	Run(ctx context.Context, t Task, lim Limits) Result
}

// Runner schedules tasks on an Executor.
type Runner struct {
	Exec      Executor
	Jobs      int           // tasks at once; at least 1
	BudgetUSD float64       // for the whole batch, previous runs included; zero: none
	Timeout   time.Duration // a task's timeout when it gives none

	// Results receives one JSON line per result as soon as it is known;
	// an *os.File is synced after each line so a killed batch keeps it.
	Results io.Writer

	// OnStart and OnResult, when set, are called from the runner's
	// goroutines one at a time (progress display).
	OnStart  func(t Task)
	OnResult func(r Result, finished, total int)
}

// Run runs every task of tasks that has no final result in prev and
// returns all results, prev's included. It returns early with ctx's error
// when ctx is cancelled, after the running tasks have stopped and their
// Interrupted results are written. A write error on the results file stops
// the batch: a result that cannot be kept is not worth paying for.
func (r *Runner) Run(ctx context.Context, tasks []Task, prev map[string]Result) (map[string]Result, error) {
	b, todo := r.newBatchRun(tasks, prev)
	sem := make(chan struct{}, b.jobs)
	var wg sync.WaitGroup
	for _, t := range todo {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		lim, a := b.admit(t)
		if a != admitStart {
			<-sem
			if a == admitStop {
				break
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			b.finish(t, lim, r.Exec.Run(ctx, t, lim))
		}()
	}
	wg.Wait()
	if b.writeErr != nil {
		return b.all, fmt.Errorf("writing the results file: %w", b.writeErr)
	}
	return b.all, ctx.Err()
}

// batchRun is the state of one Run that its tasks' goroutines share,
// under mu.
type batchRun struct {
	r        *Runner
	jobs     int
	total    int // tasks, finished before this run included
	mu       sync.Mutex
	all      map[string]Result
	finished int     // tasks with a final result
	spent    float64 // by finished tasks, previous runs included
	reserved float64 // budgets handed to running tasks
	running  int
	writeErr error // the results file failed: the batch stops
}

// newBatchRun starts from prev's results and returns the tasks still to
// run: those without a final result.
func (r *Runner) newBatchRun(tasks []Task, prev map[string]Result) (*batchRun, []Task) {
	b := &batchRun{r: r, jobs: max(r.Jobs, 1), total: len(tasks), all: make(map[string]Result, len(tasks))}
	for id, res := range prev {
		b.all[id] = res
		if res.CostUSD != nil {
			b.spent += *res.CostUSD
		}
	}
	var todo []Task
	for _, t := range tasks {
		if res, ok := prev[t.ID]; ok && res.Status.Final() {
			b.finished++
			continue
		}
		todo = append(todo, t)
	}
	return b, todo
}

// admission is what the runner does with its next task.
type admission int

const (
	admitStart admission = iota
	admitSkip            // the batch's budget is spent: recorded as Skipped
	admitStop            // the results file failed: the batch stops
)

// admit decides whether t starts and, if so, reserves its budget and
// returns its limits.
func (b *batchRun) admit(t Task) (Limits, admission) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.writeErr != nil {
		return Limits{}, admitStop
	}
	budget, ok := b.share(t)
	if !ok {
		b.record(Result{ID: t.ID, Status: Skipped, Error: fmt.Sprintf("not started: the batch's budget of $%g is spent", b.r.BudgetUSD)})
		return Limits{}, admitSkip
	}
	b.reserved += budget
	b.running++
	if b.r.OnStart != nil {
		b.r.OnStart(t)
	}
	lim := Limits{Timeout: time.Duration(t.Timeout), BudgetUSD: budget}
	if lim.Timeout == 0 {
		lim.Timeout = b.r.Timeout
	}
	return lim, admitStart
}

// share decides a new task's budget: the task's own, bounded by a fair
// share of what the batch has left, so tasks running side by side cannot
// together spend more than the total — each can pass its share by the cost
// of its last reply, since harness run checks after each reply. ok false:
// nothing left. With mu held.
func (b *batchRun) share(t Task) (float64, bool) {
	if b.r.BudgetUSD <= 0 {
		return t.BudgetUSD, true
	}
	left := b.r.BudgetUSD - b.spent - b.reserved
	if left <= 0 {
		return 0, false
	}
	s := left / float64(b.jobs-b.running)
	if t.BudgetUSD > 0 && t.BudgetUSD < s {
		s = t.BudgetUSD
	}
	return s, true
}

// finish releases a task's reservation and records its result.
func (b *batchRun) finish(t Task, lim Limits, res Result) {
	res.ID = t.ID
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reserved -= lim.BudgetUSD
	b.running--
	if res.CostUSD != nil {
		b.spent += *res.CostUSD
	}
	b.record(res)
}

// record keeps a result, writes it to the results file and reports it.
// With mu held.
func (b *batchRun) record(res Result) {
	b.all[res.ID] = res
	if res.Status.Final() {
		b.finished++
	}
	if b.writeErr == nil && b.r.Results != nil {
		b.writeErr = writeLine(b.r.Results, res)
	}
	if b.r.OnResult != nil {
		b.r.OnResult(res, b.finished, b.total)
	}
}

func writeLine(w io.Writer, res Result) error {
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return err
	}
	// Sync a results file; a pipe or a terminal (a pod's log) cannot be.
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			return f.Sync()
		}
	}
	return nil
}
