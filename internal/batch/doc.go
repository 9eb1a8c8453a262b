// Package batch runs many agent tasks and collects their results: a JSONL
// task file in, one JSONL result line per task out, and a summary.
//
// A Task names a repository (a path or a git URL, and a ref), a prompt,
// and optionally a setup command, a check command that decides whether the
// task was solved, a timeout and a budget. A Runner schedules tasks on an
// Executor, at most Jobs at once and within a total budget, appending each
// result to the results file as soon as it is known (synced, so a killed
// batch loses no finished task). Running the same batch again reads that
// file and runs only what is unfinished: a task whose last result is
// Final is skipped, anything else (interrupted, never started, skipped for
// budget) runs again from a fresh checkout.
//
// The Local executor gives each task its own clone, its own session and
// its own harness process (`harness run`), so a task is exactly what a
// user would run by hand, walls included. Setup runs on the host, before
// the agent, because it is the user's own command and may need the
// network; everything that runs after the agent has touched the checkout
// (the diff, the check) runs inside the sandbox, since the checkout may
// now hold code or git configuration of the agent's making.
//
// CompareAB sums up two arms of the same task set run under different
// settings (harness batch ab): solve rate by the tasks' checks, mean steps,
// cost and dollars per solved task, and the tasks solved in one arm only,
// in a fixed format (ABReport.WriteTable, golden-tested).
package batch
