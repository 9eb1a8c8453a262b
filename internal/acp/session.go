package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/harness-dev/harness/internal/agent"
	"github.com/harness-dev/harness/internal/app"
	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/notice"
	"github.com/harness-dev/harness/internal/permission"
)

type noticeT = notice.Notice

// session is one harness session the client drives.
type session struct {
	srv *Server
	id  string
	s   *app.Session

	mu           sync.Mutex
	running      bool
	cancel       context.CancelFunc // the running turn's
	cancelled    bool               // session/cancel came for the running turn
	rejected     bool               // the user rejected a call in the running turn
	turn         *turn              // the running turn
	rejectAlways map[string]bool    // what reject_always refused, by request
	closeOnce    sync.Once
}

func (ss *session) update(u any) {
	if err := ss.srv.conn.notify("session/update", sessionNotification{SessionID: ss.id, Update: u}); err != nil {
		ss.srv.logf("writing to the client: %v", err)
	}
}

func (ss *session) close() {
	ss.closeOnce.Do(func() {
		ss.cancelTurn()
		ss.s.Close()
	})
}

// cancelTurn stops the running turn: its context is cancelled, which
// kills the sandboxed command in flight and ends a pending permission
// request.
func (ss *session) cancelTurn() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.running && ss.cancel != nil {
		ss.cancelled = true
		ss.cancel()
	}
}

// stopForReject ends the running turn after the user rejected a call.
func (ss *session) stopForReject() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.running && ss.cancel != nil {
		ss.rejected = true
		ss.cancel()
	}
}

// prompt starts one turn: the turn is in place when it returns (so a
// session/cancel read next finds it), and its work is the async result.
func (ss *session) prompt(ctx context.Context, blocks []contentBlock) (any, error) {
	ss.mu.Lock()
	if ss.running {
		ss.mu.Unlock()
		return nil, &RPCError{Code: codeInvalidRequest, Message: "a prompt is already running in this session: cancel it first"}
	}
	tctx, cancel := context.WithCancel(ctx)
	t := &turn{ss: ss, calls: map[string]*callState{}}
	ss.running, ss.cancel, ss.cancelled, ss.rejected, ss.turn = true, cancel, false, false, t
	ss.mu.Unlock()
	return async(func() (any, error) {
		defer func() {
			cancel()
			ss.mu.Lock()
			ss.running, ss.cancel, ss.turn = false, nil, nil
			ss.mu.Unlock()
		}()
		return ss.run(tctx, t, blocks)
	}), nil
}

// run runs the turn t.
func (ss *session) run(tctx context.Context, t *turn, blocks []contentBlock) (any, error) {
	text, images := ss.promptContent(blocks)
	s := ss.s
	if name, arg, ok := builtin(text); ok {
		out, err := ss.runBuiltin(tctx, t, name, arg)
		stop := "end_turn"
		switch {
		case tctx.Err() != nil:
			stop = "cancelled"
		case err != nil:
			out = err.Error()
		}
		if out != "" {
			ss.update(chunkUpdate{SessionUpdate: "agent_message_chunk", Content: textBlock(out)})
		}
		t.closeOpen(stop)
		return promptResponse{StopReason: stop}, nil
	}
	// "/name args" runs a custom command, skill or MCP prompt, as in chat.
	cmd, isCmd, err := s.StartCommand(tctx, strings.TrimSpace(text), nil)
	if err != nil {
		return nil, err
	}
	if isCmd {
		text = cmd.Prompt
		defer cmd.Done()
		for _, n := range cmd.Notes {
			ss.srv.logf("%s", n)
		}
	}
	if s.Checkpoints != nil {
		s.Checkpoints.StartTurn()
	}
	res, runErr := s.Agent.RunWithImages(tctx, text, images, t)
	ss.mu.Lock()
	cancelled, rejected := ss.cancelled, ss.rejected
	ss.mu.Unlock()
	stop := "end_turn"
	switch {
	case cancelled:
		stop = "cancelled"
	case rejected:
		// The user said no: the turn ends there, cleanly.
		stop = "end_turn"
	case runErr != nil:
		return nil, fmt.Errorf("the turn failed: %w; the completed steps are saved", runErr)
	case res != nil && res.Blocked:
		stop = "refusal"
		if res.Text != "" {
			ss.update(chunkUpdate{SessionUpdate: "agent_message_chunk", Content: textBlock(res.Text)})
		}
	case res != nil && res.HitStepLimit:
		stop = "max_turn_requests"
	case t.lastStop() == llm.StopMaxTokens:
		stop = "max_tokens"
	case t.lastStop() == llm.StopRefusal:
		stop = "refusal"
	}
	t.closeOpen(stop)
	return promptResponse{StopReason: stop}, nil
}

// promptContent is the prompt's text (resources inline) and its images.
func (ss *session) promptContent(blocks []contentBlock) (string, []*llm.Image) {
	var sb, typed strings.Builder
	var images []*llm.Image
	linked := map[string]bool{} // files the blocks carry: an @mention of one is not attached again
	add := func(s string) {
		if sb.Len() > 0 && !strings.HasSuffix(sb.String(), "\n") {
			sb.WriteString("\n")
		}
		sb.WriteString(s)
	}
	for _, b := range blocks {
		switch b.Type {
		case "text":
			if sb.Len() > 0 {
				sb.WriteString(" ")
			}
			sb.WriteString(b.Text)
			typed.WriteString(b.Text + "\n")
		case "image":
			if m, ok := llm.LookupModel(ss.s.Config.Model); !ok || !m.Images {
				add(fmt.Sprintf("[an image was attached, but the catalogue does not say %s takes images: it was not sent]", ss.s.Config.Model))
				continue
			}
			img, err := decodeImage(b)
			if err != nil {
				add("[an image that could not be read: " + err.Error() + "]")
				continue
			}
			images = append(images, img)
		case "resource":
			if r := b.Resource; r != nil {
				if p := linkPath(r.URI); p != "" {
					linked[p] = true
				}
				if r.Text != "" {
					add(fmt.Sprintf("<resource uri=%q>\n%s\n</resource>", r.URI, r.Text))
				} else {
					add(fmt.Sprintf("[a binary resource %s (%s) was attached; it is not readable as text]", r.URI, r.MimeType))
				}
			}
		case "resource_link":
			// An editor's @-mention of a file: its content, as the chat
			// attaches an @path.
			if p := linkPath(b.URI); p != "" {
				linked[p] = true
				block, note := ss.attachFile(p)
				if block != "" {
					add(block)
					continue
				}
				ss.srv.logf("%s", note)
			}
			add(fmt.Sprintf("[the user refers to %s]", linkTarget(b.URI)))
		default:
			add("[" + b.Type + " content is not supported]")
		}
	}
	var notes []string
	for _, f := range ss.attachMentions(typed.String(), linked, &notes) {
		add(f)
	}
	for _, n := range notes {
		ss.srv.logf("%s", n)
	}
	return sb.String(), images
}

// linkTarget shows a file:// link as its path.
func linkTarget(uri string) string {
	if p, ok := strings.CutPrefix(uri, "file://"); ok {
		return p
	}
	return uri
}

// turn is the observer of one turn: what the agent does becomes
// session/update notifications.
type turn struct {
	ss *session

	mu    sync.Mutex
	calls map[string]*callState
	order []string // open calls, oldest first
	stop  llm.StopReason
}

type callState struct {
	call llm.Block
	path string  // an edit's absolute path
	old  *string // the file before the edit (nil: it did not exist)
}

var _ agent.Observer = (*turn)(nil)

func (t *turn) lastStop() llm.StopReason { t.mu.Lock(); defer t.mu.Unlock(); return t.stop }

func (t *turn) OnEvent(e llm.Event) {
	switch e.Type {
	case llm.EventText:
		t.ss.update(chunkUpdate{SessionUpdate: "agent_message_chunk", Content: textBlock(e.Text)})
	case llm.EventThinking:
		t.ss.update(chunkUpdate{SessionUpdate: "agent_thought_chunk", Content: textBlock(e.Text)})
	case llm.EventRetry:
		t.ss.srv.logf("retrying in %s (attempt %d): %v", e.Wait.Round(100*time.Millisecond), e.Try, e.Err)
	}
}

func (t *turn) OnReply(r *llm.Reply) {
	t.mu.Lock()
	t.stop = r.StopReason
	t.mu.Unlock()
}

func (t *turn) OnNotice(n notice.Notice) { t.ss.srv.logf("%s", n.Text) }

func (t *turn) OnToolStart(call llm.Block) {
	project := t.ss.project()
	st := &callState{call: call}
	kind := toolKind(call.Name)
	if kind == "edit" {
		if p := inputPath(call.Input, project); p != "" && within(p, project) {
			st.path = p
			if b, err := os.ReadFile(p); err == nil && len(b) <= maxDiffBytes {
				s := string(b)
				st.old = &s
			}
		}
	}
	t.mu.Lock()
	t.calls[call.ID] = st
	t.order = append(t.order, call.ID)
	t.mu.Unlock()
	t.ss.update(toolCall{
		SessionUpdate: "tool_call", ToolCallID: call.ID, Title: toolTitle(call, project), Kind: kind,
		Status: "pending", RawInput: rawInput(call.Input), Locations: locations(call.Input, project),
	})
	t.ss.update(toolCall{SessionUpdate: "tool_call_update", ToolCallID: call.ID, Status: "in_progress"})
}

func (t *turn) OnToolEnd(call, res llm.Block, _ time.Duration) {
	t.mu.Lock()
	st := t.calls[call.ID]
	delete(t.calls, call.ID)
	for i, id := range t.order {
		if id == call.ID {
			t.order = append(t.order[:i], t.order[i+1:]...)
			break
		}
	}
	t.mu.Unlock()
	status := "completed"
	if res.IsError {
		status = "failed"
	}
	var content []toolCallContent
	if st != nil && st.path != "" && !res.IsError {
		if b, err := os.ReadFile(st.path); err == nil && len(b) <= maxDiffBytes {
			nt := string(b)
			content = append(content, toolCallContent{Type: "diff", Path: st.path, OldText: st.old, NewText: &nt})
		}
	}
	if res.Content != "" {
		c := textBlock(clip(res.Content))
		content = append(content, toolCallContent{Type: "content", Content: &c})
	}
	t.ss.update(toolCall{SessionUpdate: "tool_call_update", ToolCallID: call.ID, Status: status, Content: content})
	if call.Name == "write_todos" && !res.IsError {
		t.ss.publishPlan()
	}
}

// closeOpen fails the calls a cancelled turn left open, so the client
// shows none running.
func (t *turn) closeOpen(stop string) {
	t.mu.Lock()
	ids := t.order
	t.order, t.calls = nil, map[string]*callState{}
	t.mu.Unlock()
	for _, id := range ids {
		c := textBlock("stopped: " + stop)
		t.ss.update(toolCall{SessionUpdate: "tool_call_update", ToolCallID: id, Status: "failed", Content: []toolCallContent{{Type: "content", Content: &c}}})
	}
}

// openCall is the id of the open call a permission request is about: the
// newest one of that tool, else the newest.
func (t *turn) openCall(tool string) (llm.Block, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := len(t.order) - 1; i >= 0; i-- {
		if c := t.calls[t.order[i]]; c != nil && c.call.Name == tool {
			return c.call, true
		}
	}
	if n := len(t.order); n > 0 {
		return t.calls[t.order[n-1]].call, true
	}
	return llm.Block{}, false
}

func (ss *session) project() string { return ss.s.Sandbox.Policy().Project() }

// publishPlan sends the todo list as a plan.
func (ss *session) publishPlan() {
	if ss.s.Todos == nil {
		return
	}
	entries := []planEntry{}
	for _, td := range ss.s.Todos.Items() {
		st := td.Status
		switch st {
		case "pending", "in_progress", "completed":
		default:
			st = "pending"
		}
		entries = append(entries, planEntry{Content: td.Content, Priority: "medium", Status: st})
	}
	ss.update(planUpdate{SessionUpdate: "plan", Entries: entries})
}

// replay sends the conversation so far as session/update notifications,
// for session/load.
func (ss *session) replay() {
	project := ss.project()
	names := map[string]llm.Block{}
	for _, m := range ss.s.History.Messages() {
		for _, b := range m.Blocks {
			switch {
			case b.Type == llm.BlockText && m.Role == llm.RoleUser:
				ss.update(chunkUpdate{SessionUpdate: "user_message_chunk", Content: textBlock(b.Text)})
			case b.Type == llm.BlockText:
				ss.update(chunkUpdate{SessionUpdate: "agent_message_chunk", Content: textBlock(b.Text)})
			case b.Type == llm.BlockThinking && b.Thinking != "":
				ss.update(chunkUpdate{SessionUpdate: "agent_thought_chunk", Content: textBlock(b.Thinking)})
			case b.Type == llm.BlockImage && b.Image != nil:
				ss.update(chunkUpdate{SessionUpdate: "user_message_chunk", Content: contentBlock{Type: "image", Data: b.Image.Data, MimeType: b.Image.MediaType}})
			case b.Type == llm.BlockToolUse:
				names[b.ID] = b
				ss.update(toolCall{
					SessionUpdate: "tool_call", ToolCallID: b.ID, Title: toolTitle(b, project), Kind: toolKind(b.Name),
					Status: "in_progress", RawInput: rawInput(b.Input), Locations: locations(b.Input, project),
				})
			case b.Type == llm.BlockToolResult:
				status := "completed"
				if b.IsError {
					status = "failed"
				}
				c := textBlock(clip(b.Content))
				ss.update(toolCall{SessionUpdate: "tool_call_update", ToolCallID: b.ToolUseID, Status: status, Content: []toolCallContent{{Type: "content", Content: &c}}})
			}
		}
	}
	if ss.s.Todos != nil && len(ss.s.Todos.Items()) > 0 {
		ss.publishPlan()
	}
}

// prompter is harness's permission prompter for an ACP client: what the
// gate would ask the user becomes session/request_permission.
type prompter struct {
	ss *session
}

var _ permission.Prompter = (*prompter)(nil)

// The permission options offered, by id.
const (
	optAllowOnce    = "allow_once"
	optAllowAlways  = "allow_always"
	optRejectOnce   = "reject_once"
	optRejectAlways = "reject_always"
)

func (p *prompter) Prompt(ctx context.Context, req permission.Request, d permission.Decision, pattern string) (permission.Answer, error) {
	ss := p.ss
	key := req.Tool + "\x00" + pattern
	if pattern == "" {
		key = req.Tool + "\x00" + req.Command + "\x00" + req.Path
	}
	ss.mu.Lock()
	t, always := ss.turn, ss.rejectAlways[key]
	ss.mu.Unlock()
	if always {
		return permission.Answer{Choice: permission.No, Reason: "the user rejected this for the session"}, nil
	}
	var tc toolCall
	if t != nil {
		if call, ok := t.openCall(req.Tool); ok {
			tc = toolCall{ToolCallID: call.ID, Title: toolTitle(call, ss.project()), Kind: toolKind(call.Name), RawInput: rawInput(call.Input), Status: "pending"}
		}
	}
	if tc.ToolCallID == "" {
		tc = toolCall{ToolCallID: fmt.Sprintf("permission-%d", time.Now().UnixNano()), Title: permTitle(req), Kind: "other", Status: "pending"}
	} else {
		ss.update(toolCall{SessionUpdate: "tool_call_update", ToolCallID: tc.ToolCallID, Status: "pending"})
	}
	opts := []permissionOption{{OptionID: optAllowOnce, Name: "Allow once", Kind: "allow_once"}}
	if pattern != "" {
		opts = append(opts, permissionOption{OptionID: optAllowAlways, Name: "Allow for this session: " + pattern, Kind: "allow_always"})
	}
	opts = append(opts,
		permissionOption{OptionID: optRejectOnce, Name: "Reject", Kind: "reject_once"},
		permissionOption{OptionID: optRejectAlways, Name: "Reject for this session", Kind: "reject_always"})
	var resp permissionResponse
	err := ss.srv.conn.call(ctx, "session/request_permission", permissionRequest{SessionID: ss.id, ToolCall: tc, Options: opts}, &resp)
	if err != nil {
		// A cancelled turn or a client gone: refused, and the turn
		// goes on to its end.
		if ctx.Err() == nil {
			ss.srv.logf("asking the client about %s: %v", req.Tool, err)
		}
		return permission.Answer{Choice: permission.No}, err
	}
	if resp.Outcome.Outcome != "selected" {
		return permission.Answer{Choice: permission.No}, context.Canceled
	}
	switch resp.Outcome.OptionID {
	case optAllowOnce:
		ss.update(toolCall{SessionUpdate: "tool_call_update", ToolCallID: tc.ToolCallID, Status: "in_progress"})
		return permission.Answer{Choice: permission.Yes}, nil
	case optAllowAlways:
		ss.update(toolCall{SessionUpdate: "tool_call_update", ToolCallID: tc.ToolCallID, Status: "in_progress"})
		return permission.Answer{Choice: permission.Session}, nil
	case optRejectAlways:
		ss.mu.Lock()
		ss.rejectAlways[key] = true
		ss.mu.Unlock()
	case optRejectOnce:
	default:
		return permission.Answer{Choice: permission.No}, fmt.Errorf("the client chose an option harness did not offer: %q", resp.Outcome.OptionID)
	}
	ss.stopForReject()
	return permission.Answer{Choice: permission.No, Reason: "the user rejected this call"}, nil
}

func permTitle(req permission.Request) string {
	switch {
	case req.Command != "":
		return req.Tool + ": " + req.Command
	case req.Path != "":
		return req.Tool + ": " + req.Path
	}
	return req.Tool
}

// within reports whether p is inside dir.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

func rawInput(in json.RawMessage) json.RawMessage {
	if len(in) == 0 || !json.Valid(in) {
		return nil
	}
	return in
}
