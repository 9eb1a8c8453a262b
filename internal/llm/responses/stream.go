package responses

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/sse"
)

// wireItem is an output item as the API sends it. Only the fields harness
// reads are decoded; a reasoning item is kept as its raw bytes.
type wireItem struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	Role      string `json:"role"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Content   []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content"`
	Summary []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"summary"`
}

type wireUsage struct {
	InputTokens        int `json:"input_tokens"`
	OutputTokens       int `json:"output_tokens"`
	InputTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

type wireError struct {
	Code    string `json:"code"`
	Type    string `json:"type"`
	Message string `json:"message"`
	Param   string `json:"param"`
}

// wireResponse is a Response object: the whole answer to a request sent
// without stream, and the payload of response.completed, .incomplete and
// .failed.
type wireResponse struct {
	ID                string            `json:"id"`
	Model             string            `json:"model"`
	Status            string            `json:"status"`
	Output            []json.RawMessage `json:"output"`
	Usage             *wireUsage        `json:"usage"`
	Error             *wireError        `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
}

// wireEvent is one streamed event; which fields are set depends on Type.
type wireEvent struct {
	Type         string          `json:"type"`
	Response     *wireResponse   `json:"response"`
	OutputIndex  int             `json:"output_index"`
	SummaryIndex int             `json:"summary_index"`
	Item         json.RawMessage `json:"item"`
	Delta        string          `json:"delta"`
	// error events carry the error at the top level.
	Code    string `json:"code"`
	Message string `json:"message"`
	Param   string `json:"param"`
}

// normUsage turns the API's counts into llm.Usage: input_tokens includes
// the cached ones, which Usage counts apart; reasoning_tokens are a share
// of output_tokens.
func normUsage(u *wireUsage) llm.Usage {
	if u == nil {
		return llm.Usage{}
	}
	cached := 0
	if d := u.InputTokensDetails; d != nil && d.CachedTokens > 0 && d.CachedTokens <= u.InputTokens {
		cached = d.CachedTokens
	}
	out := llm.Usage{Input: u.InputTokens - cached, CacheRead: cached, Output: u.OutputTokens}
	if d := u.OutputTokensDetails; d != nil && d.ReasoningTokens > 0 && d.ReasoningTokens <= u.OutputTokens {
		out.Reasoning = d.ReasoningTokens
	}
	return out
}

// itemState is one output item as its stream events build it. done holds
// the item of response.output_item.done, the authority on its content.
type itemState struct {
	index   int
	added   wireItem
	done    json.RawMessage
	text    strings.Builder
	summary strings.Builder
	args    strings.Builder
}

// decoder builds a Reply from events; the stream parser and the
// whole-response decoder share it.
type decoder struct {
	onEvent func(llm.Event)
	items   map[int]*itemState
	final   *wireResponse // the response of completed or incomplete
	model   string
}

func newDecoder(onEvent func(llm.Event)) *decoder {
	if onEvent == nil {
		onEvent = func(llm.Event) {}
	}
	return &decoder{onEvent: onEvent, items: map[int]*itemState{}}
}

func (d *decoder) item(i int) *itemState {
	st := d.items[i]
	if st == nil {
		st = &itemState{index: i}
		d.items[i] = st
	}
	return st
}

// event applies one streamed event; done is set once the response is over.
func (d *decoder) event(ev *wireEvent) (done bool, err error) {
	switch ev.Type {
	case "response.created", "response.in_progress", "response.queued":
		if ev.Response != nil && ev.Response.Model != "" {
			d.model = ev.Response.Model
		}
	case "response.output_item.added":
		st := d.item(ev.OutputIndex)
		_ = json.Unmarshal(ev.Item, &st.added)
	case "response.output_text.delta", "response.refusal.delta":
		d.item(ev.OutputIndex).text.WriteString(ev.Delta)
		if ev.Delta != "" {
			d.onEvent(llm.Event{Type: llm.EventText, Text: ev.Delta})
		}
	case "response.reasoning_summary_part.added":
		st := d.item(ev.OutputIndex)
		if ev.SummaryIndex > 0 && st.summary.Len() > 0 {
			st.summary.WriteString(summarySep)
			d.onEvent(llm.Event{Type: llm.EventThinking, Text: summarySep})
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		d.item(ev.OutputIndex).summary.WriteString(ev.Delta)
		if ev.Delta != "" {
			d.onEvent(llm.Event{Type: llm.EventThinking, Text: ev.Delta})
		}
	case "response.function_call_arguments.delta":
		d.item(ev.OutputIndex).args.WriteString(ev.Delta)
	case "response.output_item.done":
		d.item(ev.OutputIndex).done = compact(ev.Item)
	case "response.completed", "response.incomplete":
		if ev.Response == nil {
			return false, &llm.Error{Kind: llm.ErrStreamCut, Message: ev.Type + " without a response"}
		}
		d.final = ev.Response
		return true, nil
	case "response.failed":
		if ev.Response != nil && ev.Response.Error != nil {
			return false, failure(ev.Response.Error)
		}
		return false, &llm.Error{Kind: llm.ErrOverloaded, Message: "the response failed without saying why"}
	case "error":
		return false, failure(&wireError{Code: ev.Code, Message: ev.Message, Param: ev.Param})
	}
	return false, nil
}

// summarySep joins the parts of a reasoning summary, as they are shown.
const summarySep = "\n\n"

func compact(raw json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return append(json.RawMessage(nil), raw...)
	}
	return buf.Bytes()
}

// failure classifies an error the API reports inside a 200: an error event
// or a failed response. Codes are those of the API reference
// (ResponseError.code, and the error event's code).
func failure(e *wireError) *llm.Error {
	out := &llm.Error{Message: strings.TrimSpace(e.Message)}
	if e.Code != "" {
		out.Message = strings.TrimSpace(e.Code + ": " + out.Message)
	}
	switch {
	case llm.IsContextTooLong(e.Code+" "+e.Type, e.Message):
		out.Kind = llm.ErrContextTooLong
	case e.Code == "rate_limit_exceeded":
		out.Kind = llm.ErrRateLimit
	case e.Code == "insufficient_quota" || e.Type == "insufficient_quota":
		// A quota is not a transient failure: retrying cannot help.
		out.Kind = llm.ErrBadRequest
	case e.Type == "invalid_request_error" || strings.HasPrefix(e.Code, "invalid_") || e.Param != "":
		out.Kind = llm.ErrBadRequest
	default:
		// server_error, vector_store_timeout… : a failure mid-generation
		// is most likely the server's and worth a fresh attempt.
		out.Kind = llm.ErrOverloaded
	}
	return out
}

// reply assembles the Reply: items in output order, each from its done
// event, else from what its deltas built, else from the final response's
// output (some servers send no item events).
func (d *decoder) reply() *llm.Reply {
	r := &llm.Reply{Message: llm.Message{Role: llm.RoleAssistant}, Model: d.model}
	idx := make([]int, 0, len(d.items))
	for i := range d.items {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	var raws []json.RawMessage
	for _, i := range idx {
		st := d.items[i]
		switch {
		case len(st.done) > 0:
			raws = append(raws, st.done)
		case st.added.Type != "":
			raws = append(raws, st.rebuild())
		}
	}
	if len(raws) == 0 && d.final != nil {
		for _, o := range d.final.Output {
			raws = append(raws, compact(o))
		}
	}
	refused := false
	for _, raw := range raws {
		b, ok, refusal := blockOf(raw)
		refused = refused || refusal
		if ok {
			r.Message.Blocks = append(r.Message.Blocks, b)
		}
	}
	calls := len(r.Message.ToolCalls()) > 0
	r.StopReason = llm.StopEnd
	if f := d.final; f != nil {
		if f.Model != "" {
			r.Model = f.Model
		}
		r.Usage = normUsage(f.Usage)
		if f.Status == "incomplete" {
			reason := ""
			if f.IncompleteDetails != nil {
				reason = f.IncompleteDetails.Reason
			}
			switch reason {
			case "content_filter":
				r.StopReason = llm.StopRefusal
			default: // max_output_tokens
				r.StopReason = llm.StopMaxTokens
			}
			return r
		}
	}
	switch {
	case calls:
		r.StopReason = llm.StopToolUse
	case refused:
		r.StopReason = llm.StopRefusal
	}
	return r
}

// rebuild makes an item from its deltas, for a stream that never sent the
// item's done event.
func (st *itemState) rebuild() json.RawMessage {
	a := st.added
	var v any
	switch a.Type {
	case "message":
		v = map[string]any{"type": "message", "id": a.ID, "role": "assistant",
			"content": []any{map[string]string{"type": "output_text", "text": st.text.String()}}}
	case "function_call":
		v = map[string]any{"type": "function_call", "id": a.ID, "call_id": a.CallID, "name": a.Name, "arguments": st.args.String()}
	case "reasoning":
		sum := []any{}
		if st.summary.Len() > 0 {
			sum = append(sum, map[string]string{"type": "summary_text", "text": st.summary.String()})
		}
		v = map[string]any{"type": "reasoning", "id": a.ID, "summary": sum}
	default:
		return nil
	}
	b, _ := json.Marshal(v)
	return b
}

// blockOf maps one output item to a block: reasoning to a thinking block
// holding the item verbatim, a message to its text, a function call to a
// tool_use block whose ID is the call_id. Other items (a hosted tool's
// call) are not harness's and are left out.
func blockOf(raw json.RawMessage) (b llm.Block, ok, refusal bool) {
	var it wireItem
	if len(raw) == 0 || json.Unmarshal(raw, &it) != nil {
		return b, false, false
	}
	switch it.Type {
	case "reasoning":
		var parts []string
		for _, s := range it.Summary {
			if s.Text != "" {
				parts = append(parts, s.Text)
			}
		}
		if len(parts) == 0 {
			// Open-weight models served over this API send the raw
			// reasoning as content parts (reasoning_text) instead.
			for _, c := range it.Content {
				if c.Text != "" {
					parts = append(parts, c.Text)
				}
			}
		}
		return llm.Block{Type: llm.BlockThinking, Thinking: strings.Join(parts, summarySep), Item: raw}, true, false
	case "message":
		var text strings.Builder
		for _, c := range it.Content {
			switch c.Type {
			case "output_text":
				text.WriteString(c.Text)
			case "refusal":
				refusal = true
				text.WriteString(c.Refusal)
			}
		}
		// A whitespace-only text is not kept: stored, it would be re-sent.
		if strings.TrimSpace(text.String()) == "" {
			return b, false, refusal
		}
		return llm.Block{Type: llm.BlockText, Text: text.String(), Item: headOf(it)}, true, refusal
	case "function_call":
		return llm.Block{Type: llm.BlockToolUse, ID: it.CallID, Name: it.Name, Input: toolJSON(it.Arguments), Item: headOf(it)}, true, false
	}
	return b, false, false
}

// headOf is what is kept of a message or function call item: its type and
// id, for the reasoning item it follows (see assistantItems).
func headOf(it wireItem) json.RawMessage {
	if it.ID == "" {
		return nil
	}
	b, _ := json.Marshal(itemHead{Type: it.Type, ID: it.ID})
	return b
}

// toolJSON returns the arguments string as a block input: {} when empty,
// the JSON itself when valid, else a JSON string holding the raw text so
// the stored block stays valid JSON and the tool reports the error.
func toolJSON(s string) json.RawMessage {
	t := strings.TrimSpace(s)
	if t == "" {
		return json.RawMessage(`{}`)
	}
	if json.Valid([]byte(t)) {
		return json.RawMessage(t)
	}
	q, _ := json.Marshal(s)
	return q
}

// emitCalls reports the tool calls once the response is complete: a call
// is only known whole, and the reply only valid, at the end.
func emitCalls(r *llm.Reply, onEvent func(llm.Event)) {
	if onEvent == nil {
		return
	}
	for i := range r.Message.Blocks {
		if r.Message.Blocks[i].Type == llm.BlockToolUse {
			b := r.Message.Blocks[i]
			onEvent(llm.Event{Type: llm.EventToolCall, Block: &b})
		}
	}
}

// parseStream reads a Responses SSE stream into a Reply. The stream is
// complete at response.completed or response.incomplete; a failed
// response or an error event is an error; anything else that ends the
// stream is a cut stream.
func parseStream(r io.Reader, onEvent func(llm.Event)) (*llm.Reply, error) {
	d := newDecoder(onEvent)
	sr := sse.NewReader(r)
	for {
		ev, err := sr.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, &llm.Error{Kind: llm.ErrStreamCut, Message: "stream ended before response.completed"}
			}
			return nil, &llm.Error{Kind: llm.ErrStreamCut, Err: err}
		}
		data := bytes.TrimSpace(ev.Data)
		if len(data) == 0 || bytes.Equal(data, []byte("[DONE]")) {
			continue
		}
		var we wireEvent
		if err := json.Unmarshal(data, &we); err != nil {
			return nil, &llm.Error{Kind: llm.ErrStreamCut, Message: "undecodable event", Err: err}
		}
		if we.Type == "" {
			we.Type = ev.Name
		}
		done, err := d.event(&we)
		if err != nil {
			return nil, err
		}
		if done {
			break
		}
	}
	reply := d.reply()
	emitCalls(reply, d.onEvent)
	return reply, nil
}

// DecodeResponse decodes a whole Response object: the answer to a request
// sent without stream, or one a server sent where a stream was asked for.
// onEvent (may be nil) receives the events a stream would have sent.
func DecodeResponse(body []byte, onEvent func(llm.Event)) (*llm.Reply, error) {
	var w wireResponse
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, &llm.Error{Kind: llm.ErrUnknown, Message: "undecodable response", Err: err}
	}
	switch {
	case w.Status == "failed" && w.Error != nil:
		return nil, failure(w.Error)
	case w.Status == "failed":
		return nil, &llm.Error{Kind: llm.ErrOverloaded, Message: "the response failed without saying why"}
	case w.Status != "completed" && w.Status != "incomplete":
		return nil, &llm.Error{Kind: llm.ErrUnknown, Message: fmt.Sprintf("response %s is %q, not completed", w.ID, w.Status)}
	}
	d := newDecoder(onEvent)
	d.final = &w
	r := d.reply()
	for _, b := range r.Message.Blocks {
		switch b.Type {
		case llm.BlockThinking:
			if b.Thinking != "" {
				d.onEvent(llm.Event{Type: llm.EventThinking, Text: b.Thinking})
			}
		case llm.BlockText:
			d.onEvent(llm.Event{Type: llm.EventText, Text: b.Text})
		}
	}
	emitCalls(r, onEvent)
	return r, nil
}
