package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/harness-dev/harness/internal/config"
	"github.com/harness-dev/harness/internal/ledger"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/pricing"
	"github.com/harness-dev/harness/internal/sessionlog"
)

type sessionsOptions struct {
	All    bool
	JSON   bool
	Full   bool   // show: whole tool results
	Ledger bool   // show: the cost ledger instead of the transcript
	Format string // export: jsonl or markdown
	Output string // export: file, "" for stdout
}

func newSessionsCommand(g *globalOptions, stdio Stdio) *cobra.Command {
	o := &sessionsOptions{}
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List this project's sessions, newest first",
		Long: `List the sessions of this project, newest first: id, when it was last used,
steps (model replies), tokens, cost at list price, and the title (the first
user message); with --all, every project's, with a PROJECT column. A session
is saved from its first message on: one opened and left is not listed, and
one that never got a reply (its first request failed) is listed only with
--all.

Every session is an append-only log under ~/.agents/sessions/<project>/. Resume
one with "harness --resume ID" (or "harness run --resume ID PROMPT"), the latest
with "harness --continue" (the one whose last message is newest). An id prefix
works wherever an id does.
` + plainExitHelp,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSessions(cmd.Context(), g, o, stdio)
		},
	}
	cmd.PersistentFlags().StringVar(&g.Project, "project", "", "project directory (default: the git root of the working directory, else the working directory)")
	cmd.Flags().BoolVar(&o.All, "all", false, "list the sessions of every project, and those that never got a reply")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print one JSON object a line")

	show := &cobra.Command{
		Use:   "show [ID]",
		Short: "Print one session readably",
		Long: `Print one session of this project as Markdown: messages, tool calls and their
results (long results cut to 20 lines unless --full), history edits, permission
decisions, plan changes, and sub-agents' messages marked with their label.
Without ID, the latest session.

--ledger prints where the session's money went instead: for the session and
each turn, the input by cache tier (as the provider reported it) and by kind
(system, tools, tool_results, assistant, user, reminders, thinking,
summaries: estimated, scaled to the reported total), output and reasoning
tokens, dollars, and why requests cost what they did (a cache miss and its
cause — a model switch, an edit at message N by a named layer, an idle gap
past the cache's lifetime, a change of tools —, a large tool result, a
compaction, thinking). With --json: one object with the session, its turns
and every request's record. A session recorded before the ledger shows its
reported tiers and dollars only.
` + plainExitHelp,
		Args:         cobra.MaximumNArgs(1),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSessionsShow(cmd.Context(), g, o, firstArg(args), stdio)
		},
	}
	show.Flags().BoolVar(&o.Full, "full", false, "show tool input and results whole")
	show.Flags().BoolVar(&o.Ledger, "ledger", false, "show the cost ledger: tokens by cache tier and kind, dollars, reasons")
	show.Flags().BoolVar(&o.JSON, "json", false, "with --ledger: print it as one JSON object")

	export := &cobra.Command{
		Use:   "export [ID]",
		Short: "Write one session as JSONL or Markdown",
		Long: `Write one session of this project to stdout (or --output FILE):
  --format jsonl      the log's entries, one JSON object a line (keys already redacted)
  --format markdown   a readable transcript with every tool result whole
Without ID, the latest session.
` + plainExitHelp,
		Args:         cobra.MaximumNArgs(1),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSessionsExport(cmd.Context(), g, o, firstArg(args), stdio)
		},
	}
	export.Flags().StringVar(&o.Format, "format", "jsonl", "jsonl or markdown")
	export.Flags().StringVarP(&o.Output, "output", "o", "", "write to FILE instead of stdout")

	cmd.AddCommand(show, export)
	return cmd
}

func firstArg(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

// sessionsDir is this project's session directory and the sessions root.
func sessionsDir(ctx context.Context, g *globalOptions) (dir, root string, err error) {
	src, err := config.FromOS(g.configFlags())
	if err != nil {
		return "", "", err
	}
	proj, err := projectRoot(ctx, g.Project)
	if err != nil {
		return "", "", err
	}
	return sessionlog.Dir(src.Home, proj), sessionlog.Root(src.Home), nil
}

// sessionJSON is one line of "sessions --json".
type sessionJSON struct {
	ID       string    `json:"id"`
	Project  string    `json:"project"`
	Start    string    `json:"start"`
	Updated  string    `json:"updated"`
	Title    string    `json:"title"`
	Steps    int       `json:"steps"`
	Tokens   int       `json:"tokens"`
	Usage    usageJSON `json:"usage"`
	CostUSD  *float64  `json:"cost_usd,omitempty"`
	Model    string    `json:"model,omitempty"`
	Path     string    `json:"path"`
	TornLine bool      `json:"torn_line,omitempty"`
}

func runSessions(ctx context.Context, g *globalOptions, o *sessionsOptions, stdio Stdio) error {
	dir, root, err := sessionsDir(ctx, g)
	if err != nil {
		return err
	}
	var list []sessionlog.Summary
	var warns []error
	if o.All {
		list, warns = sessionlog.ListAll(root)
	} else {
		list, warns = sessionlog.List(dir)
	}
	hidden := 0
	if !o.All {
		list, hidden = startedOnly(list)
	}
	for _, w := range warns {
		fmt.Fprintln(stdio.Err, "harness: warning:", w)
	}
	if o.JSON {
		enc := json.NewEncoder(stdio.Out)
		for _, s := range list {
			u := s.Usage
			line := sessionJSON{
				ID: s.ID, Project: s.Project, Title: s.Title, Steps: s.Steps, Tokens: tokens(u),
				Start: s.Start.UTC().Format("2006-01-02T15:04:05Z"), Updated: s.Updated.UTC().Format("2006-01-02T15:04:05Z"),
				Usage: usageJSON{u.Input, u.CacheRead, u.CacheWrite, u.Output}, Model: s.Model, Path: s.Path, TornLine: s.Torn,
			}
			if c, ok := cost(s); ok {
				line.CostUSD = &c
			}
			if err := enc.Encode(line); err != nil {
				return err
			}
		}
		return nil
	}
	if hidden > 0 {
		defer fmt.Fprintf(stdio.Err, "%s that never got a reply (the first request failed) not listed; --all lists them\n", plural(hidden, "session"))
	}
	if len(list) == 0 {
		fmt.Fprintln(stdio.Err, "no sessions yet in this project; start one with harness (or list every project's with --all)")
		return nil
	}
	tw := tabwriter.NewWriter(stdio.Out, 0, 0, 2, ' ', 0)
	head := "ID\tLAST USED\tSTEPS\tTOKENS\tCOST\tTITLE"
	if o.All {
		head = "ID\tPROJECT\tLAST USED\tSTEPS\tTOKENS\tCOST\tTITLE"
	}
	fmt.Fprintln(tw, head)
	for _, s := range list {
		c := "?"
		if v, ok := cost(s); ok {
			c = usd(v)
		}
		t := s.Title
		if t == "" {
			t = "(no messages)"
		}
		if s.Torn {
			t += " [crashed]"
		}
		used := s.Used
		if used.IsZero() {
			used = s.Start
		}
		proj := ""
		if o.All {
			proj = homeRel(s.Project) + "\t"
		}
		fmt.Fprintf(tw, "%s\t%s%s\t%d\t%s\t%s\t%s\n", s.ID, proj, used.Local().Format("2006-01-02 15:04"), s.Steps, humanTokens(tokens(s.Usage)), c, t)
	}
	return tw.Flush()
}

// startedOnly drops the sessions that never got a reply (a first request
// that failed) and counts them.
func startedOnly(list []sessionlog.Summary) (kept []sessionlog.Summary, hidden int) {
	for _, s := range list {
		if s.Started() {
			kept = append(kept, s)
		} else {
			hidden++
		}
	}
	return kept, hidden
}

// usd is a cost at list price: cents are too coarse for one session, so
// below a dollar four decimals show.
func usd(v float64) string {
	if v < 1 {
		return fmt.Sprintf("$%.4f", v)
	}
	return fmt.Sprintf("$%.2f", v)
}

// homeRel writes a path under the home directory as ~/….
func homeRel(p string) string {
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		if rel, err := filepath.Rel(home, p); err == nil && !strings.HasPrefix(rel, "..") {
			return "~/" + rel
		}
	}
	return p
}

func tokens(u llm.Usage) int { return u.Prompt() + u.Output }

func cost(s sessionlog.Summary) (float64, bool) {
	p, ok := pricing.Lookup(s.Model)
	if !ok {
		return 0, false
	}
	return p.Cost(s.Usage), true
}

func humanTokens(n int) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// loadSession finds and reads one session; a torn last line is a warning.
func loadSession(ctx context.Context, g *globalOptions, id string, stdio Stdio) ([]sessionlog.Entry, sessionlog.Summary, error) {
	dir, _, err := sessionsDir(ctx, g)
	if err != nil {
		return nil, sessionlog.Summary{}, err
	}
	path, err := sessionlog.Find(dir, id)
	if err != nil {
		return nil, sessionlog.Summary{}, err
	}
	entries, err := sessionlog.ReadFile(path)
	if err != nil && sessionlog.Readable(err) {
		fmt.Fprintln(stdio.Err, "harness: warning:", err)
	} else if err != nil {
		return nil, sessionlog.Summary{}, err
	}
	return entries, sessionlog.Summarize(path, entries), nil
}

func usageLine(s sessionlog.Summary) string {
	line := humanTokens(tokens(s.Usage)) + " tokens"
	if c, ok := cost(s); ok {
		line += fmt.Sprintf(", $%.4f at list price", c)
	}
	return line
}

func runSessionsShow(ctx context.Context, g *globalOptions, o *sessionsOptions, id string, stdio Stdio) error {
	entries, sum, err := loadSession(ctx, g, id, stdio)
	if err != nil {
		return err
	}
	if o.Ledger {
		return writeLedger(stdio.Out, entries, sum, o.JSON)
	}
	if o.JSON {
		return usageError("--json goes with --ledger (the transcript is Markdown; sessions export --format jsonl gives the log)")
	}
	mo := sessionlog.MarkdownOptions{MaxResultLines: 20, Usage: usageLine(sum)}
	if o.Full {
		mo.MaxResultLines = 0
	}
	return sessionlog.WriteMarkdown(stdio.Out, entries, mo)
}

func runSessionsExport(ctx context.Context, g *globalOptions, o *sessionsOptions, id string, stdio Stdio) error {
	if o.Format != "jsonl" && o.Format != "markdown" {
		return usageError("--format must be jsonl or markdown, not %q", o.Format)
	}
	entries, sum, err := loadSession(ctx, g, id, stdio)
	if err != nil {
		return err
	}
	var w io.Writer = stdio.Out
	var f *os.File
	if o.Output != "" {
		f, err = os.OpenFile(o.Output, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
		if err != nil {
			return fmt.Errorf("creating the export file: %w", err)
		}
		w = f
	}
	if o.Format == "jsonl" {
		err = sessionlog.WriteJSONL(w, entries)
	} else {
		err = sessionlog.WriteMarkdown(w, entries, sessionlog.MarkdownOptions{Usage: usageLine(sum)})
	}
	if f != nil {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// ledgerJSON is "sessions show --ledger --json".
type ledgerJSON struct {
	SessionID string          `json:"session_id"`
	Legacy    bool            `json:"legacy,omitempty"` // recorded before the ledger: no kinds, no reasons
	Session   ledger.Summary  `json:"session"`
	Turns     []turnLedger    `json:"turns"`
	Requests  []ledger.Record `json:"requests"`
}

type turnLedger struct {
	Turn int `json:"turn"`
	ledger.Summary
}

// writeLedger prints a session's cost ledger from its log.
func writeLedger(w io.Writer, entries []sessionlog.Entry, sum sessionlog.Summary, asJSON bool) error {
	rs := ledger.FromEntries(entries)
	legacy := false
	if len(rs) == 0 {
		legacy = true
		rs = ledger.Legacy(entries, sum.Model, pricing.Lookup)
	}
	if asJSON {
		out := ledgerJSON{SessionID: sum.ID, Legacy: legacy, Session: ledger.Summarize(rs), Requests: rs, Turns: []turnLedger{}}
		byTurn := map[int][]ledger.Record{}
		var order []int
		for _, r := range rs {
			if _, ok := byTurn[r.Turn]; !ok {
				order = append(order, r.Turn)
			}
			byTurn[r.Turn] = append(byTurn[r.Turn], r)
		}
		for _, n := range order {
			out.Turns = append(out.Turns, turnLedger{Turn: n, Summary: ledger.Summarize(byTurn[n])})
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	fmt.Fprintf(w, "cost ledger of session %s (%s)\n", sum.ID, sum.Model)
	if legacy {
		fmt.Fprintln(w, "recorded before the ledger: tiers and dollars from the reported usage, no split by kind, no reasons")
	}
	if len(rs) == 0 {
		fmt.Fprintln(w, "no model requests")
		return nil
	}
	ledger.WriteSession(w, rs)
	return nil
}
