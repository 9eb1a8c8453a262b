package batch

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// Status is how a task ended.
type Status string

const (
	Solved      Status = "solved"       // the agent finished and the check passed
	Failed      Status = "failed"       // the agent finished and the check failed
	Done        Status = "done"         // the agent finished; the task has no check
	AgentError  Status = "error"        // the agent stopped in error (provider, step limit)
	TimedOut    Status = "timeout"      // the task's timeout came first
	OverBudget  Status = "budget"       // the task's own budget ran out mid-run
	SetupFailed Status = "setup_failed" // checkout or setup failed; the agent never ran

	// Not final: a later run of the same batch runs these again.
	Interrupted Status = "interrupted" // the batch was interrupted while it ran
	Skipped     Status = "skipped"     // never started: the batch's total budget was spent
)

// Final reports whether a re-run of the batch leaves the task alone.
func (s Status) Final() bool { return s != Interrupted && s != Skipped && s != "" }

// Usage is tokens, as harness run reports them.
type Usage struct {
	Input      int `json:"input_tokens"`
	CacheRead  int `json:"cache_read_tokens"`
	CacheWrite int `json:"cache_write_tokens"`
	Output     int `json:"output_tokens"`
}

// Result is one line of the results file.
type Result struct {
	ID        string   `json:"id"`
	Status    Status   `json:"status"`
	Steps     int      `json:"steps"`
	Usage     Usage    `json:"usage"`
	CostUSD   *float64 `json:"cost_usd,omitempty"` // absent when the model's price is unknown
	Answer    string   `json:"answer,omitempty"`   // the agent's final text
	Diff      string   `json:"diff,omitempty"`     // what the agent changed, against the task's ref
	CheckExit *int     `json:"check_exit,omitempty"`
	CheckLog  string   `json:"check_log,omitempty"` // the check's output, tail kept
	SessionID string   `json:"session_id,omitempty"`
	Workspace string   `json:"workspace,omitempty"` // the checkout, kept for inspection and resume
	Seconds   float64  `json:"duration_s"`
	Error     string   `json:"error,omitempty"`
}

// ReadResults reads a results file; a later line for an id replaces an
// earlier one. A torn last line (the batch was killed while writing it) is
// ignored: its task simply runs again.
func ReadResults(r io.Reader) (map[string]Result, error) {
	out := map[string]Result{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
	var pending error
	for n := 1; sc.Scan(); n++ {
		if pending != nil {
			return nil, pending // a bad line that was not the last
		}
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var res Result
		if err := json.Unmarshal([]byte(line), &res); err != nil || res.ID == "" {
			pending = fmt.Errorf("results file line %d is not a result: remove it or use another --out", n)
			continue
		}
		out[res.ID] = res
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the results file: %w", err)
	}
	return out, nil
}

// Summary is what a batch came to.
type Summary struct {
	Tasks       int            `json:"tasks"`
	Finished    int            `json:"finished"`   // final results
	Checked     int            `json:"checked"`    // finished tasks that have a check
	Solved      int            `json:"solved"`     // checks passed
	Unfinished  int            `json:"unfinished"` // interrupted, skipped or never started
	CostUSD     float64        `json:"cost_usd"`   // over the tasks whose cost is known
	CostUnknown int            `json:"cost_unknown,omitempty"`
	PerSolved   *float64       `json:"cost_per_solved_usd,omitempty"`
	P50, P95    float64        `json:"-"`
	ByStatus    map[Status]int `json:"by_status"`
}

// Summarize sums up the results for the given tasks, in task order.
func Summarize(tasks []Task, results map[string]Result) Summary {
	s := Summary{Tasks: len(tasks), ByStatus: map[Status]int{}}
	var secs []float64
	for _, t := range tasks {
		r, ok := results[t.ID]
		if !ok || !r.Status.Final() {
			s.Unfinished++
			if ok {
				s.ByStatus[r.Status]++
			}
			if ok && r.CostUSD != nil {
				s.CostUSD += *r.CostUSD
			}
			continue
		}
		s.Finished++
		s.ByStatus[r.Status]++
		if r.CheckExit != nil {
			s.Checked++
		}
		if r.Status == Solved {
			s.Solved++
		}
		if r.CostUSD != nil {
			s.CostUSD += *r.CostUSD
		} else if r.Steps > 0 {
			s.CostUnknown++
		}
		secs = append(secs, r.Seconds)
	}
	if s.Solved > 0 && s.CostUnknown == 0 {
		v := s.CostUSD / float64(s.Solved)
		s.PerSolved = &v
	}
	s.P50, s.P95 = percentile(secs, 0.50), percentile(secs, 0.95)
	return s
}

// percentile is the nearest-rank percentile; 0 for no values.
func percentile(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	i := int(math.Ceil(p*float64(len(v)))) - 1
	return v[max(i, 0)]
}

// WriteTable prints the summary for people.
func (s Summary) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "tasks %d · finished %d · solved %d of %d checked · unfinished %d\n", s.Tasks, s.Finished, s.Solved, s.Checked, s.Unfinished)
	cost := fmt.Sprintf("cost $%.4f", s.CostUSD)
	if s.CostUnknown > 0 {
		cost += fmt.Sprintf(" (+%d task(s) at an unknown price)", s.CostUnknown)
	}
	if s.PerSolved != nil {
		cost += fmt.Sprintf(" · $%.4f per solved task", *s.PerSolved)
	}
	fmt.Fprintln(w, cost)
	fmt.Fprintf(w, "duration p50 %s · p95 %s\n", secs(s.P50), secs(s.P95))
	var parts []string
	for _, st := range []Status{Solved, Failed, Done, AgentError, TimedOut, OverBudget, SetupFailed, Interrupted, Skipped} {
		if n := s.ByStatus[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", st, n))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintln(w, strings.Join(parts, " · "))
	}
}

func secs(v float64) string {
	return (time.Duration(v * float64(time.Second))).Round(100 * time.Millisecond).String()
}
