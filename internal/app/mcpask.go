package app

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/harness-dev/harness/internal/extend"
	"github.com/harness-dev/harness/internal/ledger"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/mcp"
	"github.com/harness-dev/harness/internal/notice"
	"github.com/harness-dev/harness/internal/permission"
	"github.com/harness-dev/harness/internal/sessionlog"
)

// SamplingTool is the name a server's sampling request passes the
// permission gate under, mcp__SERVER__@sampling: a rule naming the server
// (mcp__SERVER) or this name allows it, as for its tools; nothing matched
// asks, and a headless run refuses.
func SamplingTool(server string) string { return mcp.Prefix + server + "__@sampling" }

// samplingAgent labels a server's sampling requests in the session's
// log and cost ledger, apart from the main agent's.
func samplingAgent(server string) string { return "mcp " + server + " sampling" }

// mcpElicit answers a server's elicitation: the front end's form when
// there is someone to ask (Options.Elicit), otherwise declined at once,
// and the user told either way in the session's log. A session in plan
// mode is asked too: a question changes nothing, and the server had to
// be started (so approved) to ask it.
func (s *Session) mcpElicit(ask func(context.Context, *mcp.Elicitation) (mcp.ElicitAnswer, error)) func(context.Context, *mcp.Elicitation) (mcp.ElicitAnswer, error) {
	return func(ctx context.Context, q *mcp.Elicitation) (mcp.ElicitAnswer, error) {
		if ask == nil {
			s.mcpNotice(notice.Warning(notice.MCP, fmt.Sprintf("MCP server %s asked for your input (%q); declined: no one to ask in a non-interactive run", q.Server, oneLine(q.Message, 120))))
			return mcp.ElicitAnswer{Action: mcp.ElicitDecline}, nil
		}
		// As for a permission prompt: the start clocks stop while the
		// user answers, and Notification hooks hear of it (Claude Code's
		// elicitation_dialog).
		defer s.pausedStarts()()
		if s.Hooks != nil {
			s.Hooks.Fire(ctx, extend.Event{Name: extend.Notification, Source: "elicitation_dialog",
				Message: "MCP server " + q.Server + " asks for your input"})
		}
		ans, err := ask(ctx, q)
		if err != nil {
			return ans, err
		}
		s.logNotice(fmt.Sprintf("MCP server %s asked for your input (%q): %s", q.Server, oneLine(q.Message, 120), ans.Action))
		return ans, nil
	}
}

// mcpSample runs a server's sampling request through the session's own
// provider and model, once the gate allows it (SamplingTool: a rule, the
// user's yes, or --yolo; headless without a rule it is refused), within
// the request's maxTokens (mcp caps it). Its usage counts in the
// session's total and its cost ledger like any request.
func (s *Session) mcpSample(ctx context.Context, r *mcp.Sampling) (*mcp.Sampled, error) {
	if s.Gate == nil || s.Provider == nil {
		return nil, fmt.Errorf("%w: the session is not ready for sampling", mcp.ErrSampleRejected)
	}
	// It changes no file: plan mode lets the gate ask about it.
	req := permission.Request{Tool: SamplingTool(r.Server), Command: r.Summary(), DeclaredReadOnly: true}
	if ok, why := s.Gate.Check(ctx, req); !ok {
		s.mcpNotice(notice.Warning(notice.MCP, fmt.Sprintf("MCP server %s's sampling request refused: %s", r.Server, samplingRefusal(r.Server, why))))
		return nil, fmt.Errorf("%w: %s", mcp.ErrSampleRejected, samplingRefusal(r.Server, why))
	}
	lreq := &llm.Request{Model: s.Config.Model, System: r.System, MaxTokens: r.MaxTokens, SessionID: s.ID}
	for _, m := range r.Messages {
		lreq.Messages = append(lreq.Messages, llm.Text(llm.Role(m.Role), m.Text))
	}
	sent := s.Ledger.Now()
	reply, err := s.Provider.Stream(ctx, lreq, nil)
	if err != nil {
		s.mcpNotice(notice.Warning(notice.MCP, fmt.Sprintf("MCP server %s's sampling request failed: %v", r.Server, err)))
		return nil, fmt.Errorf("the model did not answer: %w", err)
	}
	s.countSampling(r.Server, lreq, reply, sent)
	out := &mcp.Sampled{Text: reply.Message.PlainText(), Model: modelOr(reply.Model, lreq.Model), StopReason: stopReason(reply.StopReason)}
	if cut := stopAt(out.Text, r.StopSequences); len(cut) < len(out.Text) {
		out.Text, out.StopReason = cut, "stopSequence"
	}
	s.mcpNotice(notice.Info(notice.MCP, fmt.Sprintf("MCP server %s's sampling request answered by %s (%d tokens in, %d out)",
		r.Server, out.Model, reply.Usage.Input+reply.Usage.CacheRead+reply.Usage.CacheWrite, reply.Usage.Output)))
	return out, nil
}

// countSampling adds a sampling request's usage to the session's total
// and its cost ledger, both kept in the log under the server's label.
func (s *Session) countSampling(server string, req *llm.Request, reply *llm.Reply, sent time.Time) {
	label := samplingAgent(server)
	u := reply.Usage
	if s.Agent != nil {
		s.Agent.AddUsage(u)
	}
	if err := s.Log.Append(sessionlog.Entry{Type: sessionlog.TypeUsage, Usage: &u, Agent: label}); err != nil {
		s.tell(logFailed("could not record a sampling request's usage", err))
	}
	if s.Ledger == nil {
		return
	}
	c := ledger.Call{Request: req, Reply: reply, Usage: u, Start: sent, Agent: label, Purpose: ledger.PurposeSampling}
	e, err := ledger.Entry(s.Ledger.Add(c))
	if err == nil {
		err = s.Log.Append(e)
	}
	if err != nil {
		s.tell(logFailed("could not record a sampling request's cost", err))
	}
}

// samplingRefusal is why the gate refused, for the server and the user:
// a headless run is told which rule would allow it.
func samplingRefusal(server, why string) string {
	if strings.Contains(why, "non-interactive") {
		return "no one to approve it in a non-interactive run; allow it with --allow " + SamplingTool(server) + " (or a rule naming mcp__" + server + ")"
	}
	if why == "" {
		return "the user refused it"
	}
	return why
}

// stopAt cuts text at the first of the stop sequences it contains (the
// providers' own stop sequences are not sent: harness's adapters take
// none).
func stopAt(text string, stops []string) string {
	cut := len(text)
	for _, st := range stops {
		if i := strings.Index(text, st); st != "" && i >= 0 && i < cut {
			cut = i
		}
	}
	return text[:cut]
}

// stopReason is the spec's name of why the model stopped.
func stopReason(r llm.StopReason) string {
	switch r {
	case llm.StopEnd:
		return "endTurn"
	case llm.StopMaxTokens:
		return "maxTokens"
	case "":
		return ""
	}
	return string(r)
}

func modelOr(m, def string) string {
	if m != "" {
		return m
	}
	return def
}

// oneLine is s on one line, cut at n characters.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if rs := []rune(s); len(rs) > n {
		s = string(rs[:n]) + "…"
	}
	return s
}

// mcpNotice tells the user and keeps the notice in the session's log.
func (s *Session) mcpNotice(n notice.Notice) {
	s.logNotice(n.Text)
	s.tell(n)
}

// logNotice keeps text in the session's log without showing it.
func (s *Session) logNotice(text string) {
	if err := s.Log.Append(sessionlog.Entry{Type: sessionlog.TypeNotice, Text: text}); err != nil {
		s.tell(logFailed("could not record a notice", err))
	}
}
