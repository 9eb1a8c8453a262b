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
	all := make(map[string]Result, len(tasks))
	var spent float64
	finished := 0
	for id, res := range prev {
		all[id] = res
		if res.CostUSD != nil {
			spent += *res.CostUSD
		}
	}
	var todo []Task
	for _, t := range tasks {
		if res, ok := prev[t.ID]; ok && res.Status.Final() {
			finished++
			continue
		}
		todo = append(todo, t)
	}

	var (
		mu       sync.Mutex
		reserved float64 // budgets handed to running tasks
		running  int
		writeErr error
	)
	jobs := max(r.Jobs, 1)
	record := func(res Result) {
		// with mu held
		all[res.ID] = res
		if res.Status.Final() {
			finished++
		}
		if writeErr == nil && r.Results != nil {
			writeErr = writeLine(r.Results, res)
		}
		if r.OnResult != nil {
			r.OnResult(res, finished, len(tasks))
		}
	}
	// share decides a new task's budget: the task's own, bounded by a fair
	// share of what the batch has left, so tasks running side by side
	// cannot together spend more than the total — each can pass its share
	// by the cost of its last reply, since harness run checks after each
	// reply. ok false: nothing left.
	share := func(t Task) (float64, bool) {
		if r.BudgetUSD <= 0 {
			return t.BudgetUSD, true
		}
		left := r.BudgetUSD - spent - reserved
		if left <= 0 {
			return 0, false
		}
		b := left / float64(jobs-running)
		if t.BudgetUSD > 0 && t.BudgetUSD < b {
			b = t.BudgetUSD
		}
		return b, true
	}

	sem := make(chan struct{}, jobs)
	var wg sync.WaitGroup
	for _, t := range todo {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		mu.Lock()
		if writeErr != nil {
			mu.Unlock()
			<-sem
			break
		}
		budget, ok := share(t)
		if !ok {
			record(Result{ID: t.ID, Status: Skipped, Error: fmt.Sprintf("not started: the batch's budget of $%g is spent", r.BudgetUSD)})
			mu.Unlock()
			<-sem
			continue
		}
		reserved += budget
		running++
		if r.OnStart != nil {
			r.OnStart(t)
		}
		mu.Unlock()

		lim := Limits{Timeout: time.Duration(t.Timeout), BudgetUSD: budget}
		if lim.Timeout == 0 {
			lim.Timeout = r.Timeout
		}
		wg.Add(1)
		go func(t Task, lim Limits) {
			defer wg.Done()
			defer func() { <-sem }()
			res := r.Exec.Run(ctx, t, lim)
			res.ID = t.ID
			mu.Lock()
			defer mu.Unlock()
			reserved -= lim.BudgetUSD
			running--
			if res.CostUSD != nil {
				spent += *res.CostUSD
			}
			record(res)
		}(t, lim)
	}
	wg.Wait()
	if writeErr != nil {
		return all, fmt.Errorf("writing the results file: %w", writeErr)
	}
	return all, ctx.Err()
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
