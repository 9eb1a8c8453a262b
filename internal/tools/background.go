package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/sandbox"
)

// Jobs are the session's background commands (bash with background: true):
// each runs through the same sandbox Run as any command, so inside the same
// walls and bounds, under a context that Close cancels, which kills it and
// everything it started (the sandbox kills the whole process tree, and its
// PID namespace dies with harness). They outlive the tool call, never the
// session.
type Jobs struct {
	Sandbox sandbox.Sandbox
	// Lifetime bounds a background command (default 12 h): a forgotten
	// server does not run for ever.
	Lifetime time.Duration
	// Keep is how much of a job's latest output is kept (default 1 MiB).
	Keep int

	mu     sync.Mutex
	ctx    context.Context
	cancel context.CancelFunc
	seq    int
	jobs   map[string]*job
	wg     sync.WaitGroup
	closed bool
	// inFlight are the foreground commands running under writable walls,
	// each with what stops it (narrow.go).
	inFlight map[*inflight]struct{}
}

type job struct {
	id, command string
	started     time.Time
	cancel      context.CancelFunc
	done        chan struct{}

	mu      sync.Mutex
	keep    int    // how much of the output is kept (Jobs.Keep)
	out     []byte // the latest keep bytes, and up to keep more before them
	total   int64  // bytes written in all
	read    int64  // bytes handed to the model so far
	res     *sandbox.Result
	err     error
	stopped bool
	// readOnly: it runs under the read-only walls (a sub-agent's, or
	// started in plan mode), so a switch into plan mode leaves it be.
	readOnly bool
	// narrowed: it was stopped because the walls narrowed (narrow.go).
	narrowed bool
	told     bool   // the narrowing was told again when the walls widened
	url      string // the first local URL it printed (a dev server's address)
	ended    time.Time
}

// localURL finds a local server's address in output: what dev servers
// print when ready (Vite, Next, Rails, python -m http.server…), in the
// first urlScanBytes of it.
const urlScanBytes = 16 << 20

var (
	localURL = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`https?://(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1?\]):\d+[^\s"'<>]*`)
	})
	ansiSeq = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`) })
)

// Write keeps the latest keep bytes of the output. out grows to twice
// keep, then its older half is dropped in place: each byte is copied once
// more at most, however the output comes (a job printing without end
// costs no allocation per write).
func (j *job) Write(p []byte) (int, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	n := len(p)
	j.total += int64(n)
	if j.keep > 0 && len(p) > j.keep {
		p = p[len(p)-j.keep:]
	}
	if j.keep > 0 && len(j.out)+len(p) > 2*j.keep {
		m := copy(j.out, j.out[len(j.out)-min(len(j.out), j.keep):])
		j.out = j.out[:m]
	}
	j.out = append(j.out, p...)
	if j.url == "" && j.total-int64(n) < urlScanBytes {
		// The new bytes and a little before them (a URL split across
		// writes), colours removed (Vite prints the port in bold); only
		// where a URL may be, as the regexps allocate.
		win := j.out[max(0, len(j.out)-len(p)-256):]
		if bytes.Contains(win, []byte("://")) {
			if m := localURL().Find(ansiSeq().ReplaceAll(win, nil)); m != nil {
				j.url = string(m)
			}
		}
	}
	return n, nil
}

// kept is the output kept: the latest keep bytes.
func (j *job) kept() []byte {
	if j.keep > 0 && len(j.out) > j.keep {
		return j.out[len(j.out)-j.keep:]
	}
	return j.out
}

// JobInfo is one background command, for /ps.
type JobInfo struct {
	ID, Command string
	Started     time.Time
	Running     bool
	ExitCode    int
	// Ended is when it ended (zero while it runs).
	Ended time.Time
	// URL is the first local address it printed (http://localhost:5173/).
	URL string
}

func (js *Jobs) init() {
	if js.jobs == nil {
		js.jobs = map[string]*job{}
		js.ctx, js.cancel = context.WithCancel(context.Background())
	}
}

// Start runs script in the background and returns its id.
func (js *Jobs) Start(script string, readOnly bool) (string, error) {
	js.mu.Lock()
	defer js.mu.Unlock()
	js.init()
	if js.closed {
		return "", fmt.Errorf("the session is ending")
	}
	js.seq++
	id := "job-" + strconv.Itoa(js.seq)
	life := js.Lifetime
	if life <= 0 {
		life = 12 * time.Hour
	}
	keep := js.Keep
	if keep <= 0 {
		keep = 1 << 20
	}
	// The walls are chosen here, under js.mu, and passed on explicitly: a
	// switch into plan mode either comes first (the job runs read-only) or
	// finds the job in js.jobs and stops it (Narrow).
	readOnly = readOnly || projectReadOnly(js.Sandbox)
	ctx, cancel := context.WithCancel(js.ctx)
	j := &job{id: id, command: script, started: time.Now(), cancel: cancel, done: make(chan struct{}), keep: keep, readOnly: readOnly}
	js.jobs[id] = j
	js.wg.Add(1)
	go func() {
		defer js.wg.Done()
		defer close(j.done)
		defer cancel()
		res, err := js.Sandbox.Run(ctx, sandbox.Cmd{Script: script, Timeout: life, ReadOnly: readOnly, Stdout: j, Stderr: j})
		j.mu.Lock()
		j.res, j.err, j.ended = res, err, time.Now()
		j.mu.Unlock()
	}()
	return id, nil
}

// running reports whether a background command runs now.
func (js *Jobs) running() bool {
	if js == nil {
		return false
	}
	js.mu.Lock()
	all := make([]*job, 0, len(js.jobs))
	for _, j := range js.jobs {
		all = append(all, j)
	}
	js.mu.Unlock()
	for _, j := range all {
		select {
		case <-j.done:
		default:
			return true
		}
	}
	return false
}

func (js *Jobs) get(id string) (*job, bool) {
	js.mu.Lock()
	defer js.mu.Unlock()
	j, ok := js.jobs[strings.TrimSpace(id)]
	return j, ok
}

// List returns the background commands, oldest first.
func (js *Jobs) List() []JobInfo {
	js.mu.Lock()
	var all []*job
	for _, j := range js.jobs {
		all = append(all, j)
	}
	js.mu.Unlock()
	sort.Slice(all, func(a, b int) bool { return all[a].started.Before(all[b].started) })
	var out []JobInfo
	for _, j := range all {
		out = append(out, j.info())
	}
	return out
}

func (j *job) info() JobInfo {
	j.mu.Lock()
	defer j.mu.Unlock()
	in := JobInfo{ID: j.id, Command: j.command, Started: j.started, Running: j.res == nil && j.err == nil, URL: j.url, Ended: j.ended}
	if j.res != nil {
		in.ExitCode = j.res.ExitCode
	}
	return in
}

// view narrows what bash_output returns of the new output: only the
// lines matching filter, then only the last tail of them. What it leaves
// out is read all the same (said in a note), as with Claude Code's filter.
type view struct {
	filter *regexp.Regexp
	tail   int
}

// news returns the output not yet read, narrowed by v, and the job's state.
func (j *job) news(v view) string {
	j.mu.Lock()
	defer j.mu.Unlock()
	var sb strings.Builder
	out := j.kept()
	start := j.total - int64(len(out)) // offset of out[0]
	if j.read < start {
		fmt.Fprintf(&sb, "[%d bytes of output were not kept: harness keeps the latest %s of a background command's output; they follow]\n", start-j.read, sizeText(j.keep))
		j.read = start
	}
	fresh := string(out[j.read-start:])
	j.read = j.total
	if v.filter != nil || v.tail > 0 {
		lines := strings.SplitAfter(fresh, "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		all := len(lines)
		if v.filter != nil {
			var keep []string
			for _, l := range lines {
				if v.filter.MatchString(strings.TrimRight(l, "\r\n")) {
					keep = append(keep, l)
				}
			}
			if n := all - len(keep); n > 0 {
				fmt.Fprintf(&sb, "[%d of %d new lines did not match %q and are not shown]\n", n, all, v.filter.String())
			}
			lines = keep
		}
		if v.tail > 0 && len(lines) > v.tail {
			fmt.Fprintf(&sb, "[%d earlier lines not shown; the last %d follow]\n", len(lines)-v.tail, v.tail)
			lines = lines[len(lines)-v.tail:]
		}
		fresh = strings.Join(lines, "")
	}
	sb.WriteString(fresh)
	if sb.Len() > 0 && !strings.HasSuffix(sb.String(), "\n") {
		sb.WriteByte('\n')
	}
	switch {
	case j.err != nil:
		fmt.Fprintf(&sb, "[%s could not run: %v]", j.id, j.err)
	case j.res == nil && j.url != "":
		fmt.Fprintf(&sb, "[%s is running, for %s; it printed %s]", j.id, time.Since(j.started).Round(time.Second), j.url)
	case j.res == nil:
		fmt.Fprintf(&sb, "[%s is running, for %s]", j.id, time.Since(j.started).Round(time.Second))
	case j.narrowed:
		fmt.Fprintf(&sb, "[%s was stopped when the session switched to plan mode, where the project is read-only: it and every process it started were killed. It is not restarted by itself; start it again once the plan is accepted]", j.id)
	case j.stopped:
		fmt.Fprintf(&sb, "[%s was stopped: it and every process it started were killed]", j.id)
	default:
		fmt.Fprintf(&sb, "[%s exited with code %d]", j.id, j.res.ExitCode)
	}
	return sb.String()
}

// Stop kills a job and everything it started, and waits for it.
func (js *Jobs) Stop(id string) (string, error) {
	j, ok := js.get(id)
	if !ok {
		return "", fmt.Errorf("no background command %q; /ps lists them", id)
	}
	j.mu.Lock()
	if j.res == nil && j.err == nil {
		j.stopped = true
	}
	j.mu.Unlock()
	j.cancel()
	select {
	case <-j.done:
	case <-time.After(30 * time.Second):
		return "", fmt.Errorf("%s did not end within 30 s of being stopped", id)
	}
	return j.news(view{}), nil
}

// Close kills every background command with all it started, and waits.
func (js *Jobs) Close() {
	js.mu.Lock()
	js.init()
	js.closed = true
	js.mu.Unlock()
	js.cancel()
	js.wg.Wait()
}

// BashOutput reads what a background command printed since the last read.
type BashOutput struct{ Jobs *Jobs }

type jobArgs struct {
	ID string `json:"id"`
}

type outputArgs struct {
	ID     string `json:"id"`
	Filter string `json:"filter"`
	Tail   int    `json:"tail"`
}

// Spec implements Tool.
func (b *BashOutput) Spec() llm.Tool {
	return llm.Tool{
		Name: "bash_output",
		Description: "Read the new output of a background command (bash with background: true): what it printed since the " +
			"last read, then whether it is still running (and the local URL it printed, for a dev server) or its exit code. " +
			"filter (a regular expression) keeps only matching lines and tail only the last lines; the rest is read all the same.",
		Schema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"The job id bash gave (job-1)."},` +
			`"filter":{"type":"string","description":"A regular expression (Go syntax): only new lines matching it are shown, e.g. (?i)error|warn."},` +
			`"tail":{"type":"integer","description":"Show only the last N new lines."}},"required":["id"]}`),
	}
}

// Access implements Tool: reading a job's output touches nothing.
func (b *BashOutput) Access(input json.RawMessage) (Access, error) {
	var a outputArgs
	return Access{Tool: "bash_output"}, decode(input, &a, "id")
}

// Run implements Tool.
func (b *BashOutput) Run(_ context.Context, input json.RawMessage) Result {
	var a outputArgs
	if err := decode(input, &a, "id"); err != nil {
		return Errorf("%v", err)
	}
	var v view
	if a.Filter != "" {
		re, err := regexp.Compile(a.Filter)
		if err != nil {
			return Errorf("filter is not a regular expression (nothing was read): %v", err)
		}
		v.filter = re
	}
	if a.Tail < 0 {
		return Errorf("tail must be a positive number of lines")
	}
	v.tail = a.Tail
	j, ok := b.Jobs.get(a.ID)
	if !ok {
		return Errorf("no background command %q", a.ID)
	}
	return Result{Content: j.news(v)}
}

// BashStop stops a background command and everything it started.
type BashStop struct{ Jobs *Jobs }

// Spec implements Tool.
func (b *BashStop) Spec() llm.Tool {
	return llm.Tool{
		Name:        "bash_stop",
		Description: "Stop a background command: it and every process it started are killed. Returns its last output.",
		Schema:      json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"The job id bash gave (job-1)."}},"required":["id"]}`),
	}
}

// Access implements Tool: stopping the agent's own job needs no approval.
func (b *BashStop) Access(input json.RawMessage) (Access, error) {
	var a jobArgs
	return Access{Tool: "bash_stop"}, decode(input, &a, "id")
}

// Run implements Tool.
func (b *BashStop) Run(_ context.Context, input json.RawMessage) Result {
	var a jobArgs
	if err := decode(input, &a, "id"); err != nil {
		return Errorf("%v", err)
	}
	out, err := b.Jobs.Stop(a.ID)
	if err != nil {
		return Errorf("%v", err)
	}
	return Result{Content: out}
}

// sizeText is n bytes as people say it: 1 MiB, 64 KiB, 100 bytes.
func sizeText(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
