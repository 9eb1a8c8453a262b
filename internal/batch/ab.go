package batch

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Arm is one side of an A/B run: a name, the settings its harness runs
// get (KEY=VALUE, as in ~/.agents/env) and its results.
type Arm struct {
	Name     string            `json:"name"`
	Settings []string          `json:"settings"`
	Results  map[string]Result `json:"-"`
}

// ArmReport is what one arm came to over the task set.
type ArmReport struct {
	Name       string   `json:"name"`
	Settings   []string `json:"settings"`
	Checked    int      `json:"checked"`    // finished tasks with a check
	Solved     int      `json:"solved"`     // of those, checks passed
	SolveRate  float64  `json:"solve_rate"` // Solved / Checked; 0 with no check
	Finished   int      `json:"finished"`
	Unfinished int      `json:"unfinished"`
	MeanSteps  float64  `json:"mean_steps"` // over finished tasks
	CostUSD    float64  `json:"cost_usd"`   // over the tasks whose cost is known
	// PerSolved is dollars per solved task; nil when nothing was solved
	// or a task's cost is unknown.
	PerSolved   *float64 `json:"cost_per_solved_usd,omitempty"`
	CostUnknown int      `json:"cost_unknown,omitempty"`
}

// TaskDiff is a task the arms' checks disagree on.
type TaskDiff struct {
	ID string `json:"id"`
	A  Status `json:"a"`
	B  Status `json:"b"`
}

// ABReport compares two arms run on the same tasks.
type ABReport struct {
	Tasks   int         `json:"tasks"`
	A, B    ArmReport   `json:"-"`
	Arms    []ArmReport `json:"arms"`
	Differs []TaskDiff  `json:"differs"` // solved in one arm only, in task order
}

// CompareAB sums up both arms over tasks. Solve rate is by the tasks'
// checks (a task without one counts in neither numerator nor
// denominator); steps are the mean over finished tasks; dollars per
// solved task are the arm's whole cost over its solved tasks.
func CompareAB(tasks []Task, a, b Arm) ABReport {
	r := ABReport{Tasks: len(tasks), A: armReport(tasks, a), B: armReport(tasks, b)}
	r.Arms = []ArmReport{r.A, r.B}
	r.Differs = []TaskDiff{}
	for _, t := range tasks {
		ra, rb := a.Results[t.ID], b.Results[t.ID]
		if (ra.Status == Solved) != (rb.Status == Solved) {
			r.Differs = append(r.Differs, TaskDiff{t.ID, orNone(ra.Status), orNone(rb.Status)})
		}
	}
	return r
}

func orNone(s Status) Status {
	if s == "" {
		return "not run"
	}
	return s
}

func armReport(tasks []Task, arm Arm) ArmReport {
	s := Summarize(tasks, arm.Results)
	r := ArmReport{Name: arm.Name, Settings: append([]string{}, arm.Settings...), Checked: s.Checked, Solved: s.Solved,
		Finished: s.Finished, Unfinished: s.Unfinished, CostUSD: s.CostUSD, PerSolved: s.PerSolved, CostUnknown: s.CostUnknown}
	if r.Checked > 0 {
		r.SolveRate = float64(r.Solved) / float64(r.Checked)
	}
	steps := 0
	for _, t := range tasks {
		if res, ok := arm.Results[t.ID]; ok && res.Status.Final() {
			steps += res.Steps
		}
	}
	if r.Finished > 0 {
		r.MeanSteps = float64(steps) / float64(r.Finished)
	}
	return r
}

// WriteTable prints the report in its fixed format: one row per arm and
// a B−A row, then the tasks the arms disagree on.
func (r ABReport) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "A/B over %d task(s): solve rate by the tasks' checks, steps per finished task, dollars at list price\n\n", r.Tasks)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "arm\tsettings\tsolved\tsolve rate\tsteps\tcost\t$/solved\tunfinished")
	for _, a := range r.Arms {
		set := strings.Join(a.Settings, " ")
		if set == "" {
			set = "(defaults)"
		}
		cost := fmt.Sprintf("$%.4f", a.CostUSD)
		if a.CostUnknown > 0 {
			cost += fmt.Sprintf(" +%d unknown", a.CostUnknown)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%.1f%%\t%.2f\t%s\t%s\t%d\n", a.Name, set, a.Solved, a.Checked, 100*a.SolveRate, a.MeanSteps, cost, perSolved(a.PerSolved), a.Unfinished)
	}
	d := "n/a"
	if r.A.PerSolved != nil && r.B.PerSolved != nil {
		d = fmt.Sprintf("%+.4f", *r.B.PerSolved-*r.A.PerSolved)
	}
	fmt.Fprintf(tw, "%s−%s\t\t%+d\t%+.1f pts\t%+.2f\t%+.4f\t%s\t\n", r.B.Name, r.A.Name, r.B.Solved-r.A.Solved,
		100*(r.B.SolveRate-r.A.SolveRate), r.B.MeanSteps-r.A.MeanSteps, r.B.CostUSD-r.A.CostUSD, d)
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Differs) == 0 {
		_, err := fmt.Fprintln(w, "\nno task solved in one arm only")
		return err
	}
	fmt.Fprintf(w, "\nsolved in one arm only (%d):\n", len(r.Differs))
	for _, t := range r.Differs {
		fmt.Fprintf(w, "  %s: %s %s, %s %s\n", t.ID, r.A.Name, t.A, r.B.Name, t.B)
	}
	return nil
}

func perSolved(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("$%.4f", *v)
}
