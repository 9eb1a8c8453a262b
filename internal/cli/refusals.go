package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/harness-dev/harness/internal/agent"
	"github.com/harness-dev/harness/internal/ledger"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/permission"

	"github.com/harness-dev/harness/internal/shellquote"
)

// exitNeedsApproval is harness run's status when the task finished but
// calls were refused for want of an approval nobody can give headless:
// whatever the model says, the work may be incomplete.
const exitNeedsApproval = 3

// denialJSON is one refused call in run's result. tool_name, tool_use_id
// and tool_input are Claude Code's names for the same list in `claude -p
// --output-format json` (its permission_denials, as SDKs parse them, e.g.
// hex.pm claude_code ClaudeCode.Session.PermissionDenial); the rest says
// why and what would admit it.
type denialJSON struct {
	ToolName  string          `json:"tool_name"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	ToolInput json.RawMessage `json:"tool_input"`
	// Verdict is "ask" (refused for want of an approval) or "deny" (a
	// deny rule or the sandbox's walls: no flag but --add-dir or editing
	// the rule admits it).
	Verdict string `json:"verdict"`
	Rule    string `json:"rule"` // the rule or reason that decided
	// Allow is the flag that would admit it, for an "ask": --allow 'RULE'
	// (the same rule can go in .agents/permissions), or --yolo.
	Allow string `json:"allow,omitempty"`
}

// refusals collects, for harness run, the calls the gate refused, and
// matches them to the tool calls they refused.
type refusals struct {
	mu      sync.Mutex
	refused []refusal
}

type refusal struct {
	rec  permission.Record
	call *llm.Block // the tool call, once its result is seen
}

// note is the session's OnDecision: every refusal, the sub-agents' too.
func (r *refusals) note(rec permission.Record) {
	if !strings.HasPrefix(rec.Answer, "deny") {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refused = append(r.refused, refusal{rec: rec})
}

// matchCall ties a refused tool result to the earliest refusal whose
// message it carries (the registry returns the gate's message as the
// result), for the call's id and input.
func (r *refusals) matchCall(call, res llm.Block) {
	if !res.IsError {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.refused {
		f := &r.refused[i]
		if f.call == nil && f.rec.Message != "" && strings.HasPrefix(res.Content, f.rec.Message) {
			c := call
			f.call = &c
			return
		}
	}
}

// denials are the refusals as run's JSON lists them, in order.
func (r *refusals) denials(project string) []denialJSON {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []denialJSON{}
	for _, f := range r.refused {
		d := denialJSON{ToolName: f.rec.Tool, Verdict: "deny", Rule: f.rec.Rule}
		if f.call != nil {
			d.ToolUseID, d.ToolInput = f.call.ID, f.call.Input
		}
		if !json.Valid(d.ToolInput) {
			in := map[string]string{}
			if f.rec.Command != "" {
				in["command"] = f.rec.Command
			} else {
				in["path"] = relToProject(f.rec.Path, project)
			}
			d.ToolInput, _ = json.Marshal(in)
		}
		if f.rec.Answer == permission.AnswerHeadless {
			d.Verdict, d.Allow = "ask", allowFlags(f.rec.Admit)
		}
		out = append(out, d)
	}
	return out
}

// allowFlags are the --allow flags admitting rules (TOOL PATTERN), or
// --yolo when there are none.
func allowFlags(rules []string) string {
	if len(rules) == 0 {
		return "--yolo"
	}
	var flags []string
	for _, r := range rules {
		if host, ok := strings.CutPrefix(r, "net "); ok {
			flags = append(flags, "--allow-net "+host)
			continue
		}
		flags = append(flags, "--allow "+shellquote.Quote(r))
	}
	return strings.Join(flags, " ")
}

func relToProject(p, project string) string {
	if rel, ok := strings.CutPrefix(p, project+"/"); ok {
		return rel
	}
	return p
}

// summary says, for the run's error, which calls needed an approval and
// the flags that would admit them all; "" when none did.
func (r *refusals) summary(project string) string {
	var asks []denialJSON
	for _, d := range r.denials(project) {
		if d.Verdict == "ask" {
			asks = append(asks, d)
		}
	}
	if len(asks) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d call(s) were refused for want of an approval, which harness run cannot ask for; the task may be unfinished whatever the answer says:", len(asks))
	seen := map[string]bool{}
	var flags []string
	for _, d := range asks {
		what := d.ToolInput
		var in map[string]any
		if json.Unmarshal(d.ToolInput, &in) == nil {
			for _, k := range []string{"command", "path"} {
				if v, ok := in[k].(string); ok {
					what = json.RawMessage(v)
					break
				}
			}
		}
		fmt.Fprintf(&b, "\n  %s %s  (%s)", d.ToolName, firstLine(string(what)), d.Rule)
		if d.Allow != "--yolo" && !seen[d.Allow] {
			seen[d.Allow] = true
			flags = append(flags, d.Allow)
		}
	}
	if len(flags) > 0 {
		fmt.Fprintf(&b, "\nre-run with %s (or --yolo; the sandbox stays on), or put the rules in .agents/permissions", strings.Join(flags, " "))
	} else {
		b.WriteString("\nre-run with --yolo (the sandbox stays on): no --allow rule can cover these")
	}
	return b.String()
}

// refusalWatch ties refused tool results to the gate's refusals on the
// way to the run's observer.
type refusalWatch struct {
	agent.Observer
	r *refusals
}

func (w *refusalWatch) OnToolEnd(call, res llm.Block, d time.Duration) {
	w.r.matchCall(call, res)
	w.Observer.OnToolEnd(call, res, d)
}

// OnLedger passes a ledger record on (stream-json shows each).
func (w *refusalWatch) OnLedger(r ledger.Record) { forwardLedger(w.Observer, r) }
