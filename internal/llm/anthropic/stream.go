package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/harness-dev/harness/internal/llm"
	"github.com/harness-dev/harness/internal/llm/sse"
)

type wireUsage struct {
	InputTokens              *int `json:"input_tokens"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
	OutputTokens             *int `json:"output_tokens"`
	// OutputTokensDetails splits output where the model reports it:
	// thinking_tokens, the reasoning billed inside output_tokens.
	OutputTokensDetails *struct {
		ThinkingTokens *int `json:"thinking_tokens"`
	} `json:"output_tokens_details"`
}

// apply copies the fields present in w into u: message_delta repeats or
// updates some of message_start's counts.
func (w *wireUsage) apply(u *llm.Usage) {
	if w == nil {
		return
	}
	set := func(dst *int, src *int) {
		if src != nil {
			*dst = *src
		}
	}
	set(&u.Input, w.InputTokens)
	set(&u.CacheRead, w.CacheReadInputTokens)
	set(&u.CacheWrite, w.CacheCreationInputTokens)
	set(&u.Output, w.OutputTokens)
	if d := w.OutputTokensDetails; d != nil {
		set(&u.Reasoning, d.ThinkingTokens)
	}
	if u.Reasoning > u.Output {
		u.Reasoning = 0 // not a breakdown of output: ignore it
	}
}

type wireError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

type streamEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message *struct {
		Model                string                `json:"model"`
		Usage                *wireUsage            `json:"usage"`
		InputTransformations []inputTransformation `json:"input_transformations"`
	} `json:"message"`
	ContentBlock *struct {
		Type      string          `json:"type"`
		Text      string          `json:"text"`
		Thinking  string          `json:"thinking"`
		Signature string          `json:"signature"`
		Data      string          `json:"data"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
	} `json:"content_block"`
	Delta *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		Signature   string `json:"signature"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *wireUsage `json:"usage"`
	Error *wireError `json:"error"`
}

// inputTransformation is one entry of a response's input_transformations:
// a block of the request the API dropped ("thinking_dropped") or let
// through although it failed a binding check ("thinking_mismatch_allowed"),
// at path "messages.I.content.J".
type inputTransformation struct {
	Type   string `json:"type"`
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// dropped lists the transformations that removed a block.
func dropped(ts []inputTransformation) []string {
	var out []string
	for _, t := range ts {
		if t.Type == "thinking_mismatch_allowed" {
			continue
		}
		out = append(out, t.Path+": "+t.Reason)
	}
	return out
}

// blockState accumulates one content block while it streams.
type blockState struct {
	block llm.Block
	text  strings.Builder // text, thinking or partial tool JSON
	known bool            // a type we keep
}

func (s *blockState) finish() llm.Block {
	b := s.block
	switch b.Type {
	case llm.BlockText:
		b.Text = s.text.String()
	case llm.BlockThinking:
		b.Thinking = s.text.String()
	case llm.BlockToolUse:
		b.Input = toolJSON(s.text.String(), b.Input)
	}
	return b
}

// toolJSON returns the accumulated tool input. An empty stream of
// input_json_delta means no arguments ({}); invalid JSON is kept as a JSON
// string so the stored block stays valid JSON and the tool reports the error.
func toolJSON(partial string, start json.RawMessage) json.RawMessage {
	s := strings.TrimSpace(partial)
	if s == "" {
		if len(start) > 0 && json.Valid(start) {
			return start
		}
		return emptyObject
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	q, _ := json.Marshal(partial)
	return q
}

// parseStream reads a Messages API event stream into a Reply, calling
// onEvent for each delta and completed tool call.
func parseStream(r io.Reader, onEvent func(llm.Event)) (*llm.Reply, error) {
	if onEvent == nil {
		onEvent = func(llm.Event) {}
	}
	sr := sse.NewReader(r)
	reply := &llm.Reply{Message: llm.Message{Role: llm.RoleAssistant}}
	var blocks []*blockState
	var stop string
	for {
		ev, err := sr.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, &llm.Error{Kind: llm.ErrStreamCut, Message: "stream ended before message_stop"}
			}
			return nil, &llm.Error{Kind: llm.ErrStreamCut, Err: err}
		}
		var e streamEvent
		if err := json.Unmarshal(ev.Data, &e); err != nil {
			return nil, &llm.Error{Kind: llm.ErrStreamCut, Message: fmt.Sprintf("undecodable %s event", ev.Name), Err: err}
		}
		if e.Type == "" {
			e.Type = ev.Name
		}
		switch e.Type {
		case "message_start":
			if e.Message != nil {
				reply.Model = e.Message.Model
				e.Message.Usage.apply(&reply.Usage)
				reply.Dropped = dropped(e.Message.InputTransformations)
			}
		case "content_block_start":
			for len(blocks) <= e.Index {
				blocks = append(blocks, &blockState{})
			}
			st := blocks[e.Index]
			if cb := e.ContentBlock; cb != nil {
				switch cb.Type {
				case "text":
					st.block, st.known = llm.Block{Type: llm.BlockText}, true
					st.text.WriteString(cb.Text)
				case "thinking":
					st.block, st.known = llm.Block{Type: llm.BlockThinking, Signature: cb.Signature}, true
					st.text.WriteString(cb.Thinking)
				case "redacted_thinking":
					st.block, st.known = llm.Block{Type: llm.BlockRedactedThinking, Data: cb.Data}, true
				case "tool_use":
					st.block, st.known = llm.Block{Type: llm.BlockToolUse, ID: cb.ID, Name: cb.Name, Input: cb.Input}, true
				}
			}
		case "content_block_delta":
			if e.Index >= len(blocks) || e.Delta == nil || !blocks[e.Index].known {
				continue
			}
			st := blocks[e.Index]
			switch e.Delta.Type {
			case "text_delta":
				st.text.WriteString(e.Delta.Text)
				onEvent(llm.Event{Type: llm.EventText, Text: e.Delta.Text})
			case "thinking_delta":
				st.text.WriteString(e.Delta.Thinking)
				onEvent(llm.Event{Type: llm.EventThinking, Text: e.Delta.Thinking})
			case "signature_delta":
				st.block.Signature += e.Delta.Signature
			case "input_json_delta":
				st.text.WriteString(e.Delta.PartialJSON)
			}
		case "content_block_stop":
			if e.Index < len(blocks) && blocks[e.Index].known && blocks[e.Index].block.Type == llm.BlockToolUse {
				b := blocks[e.Index].finish()
				onEvent(llm.Event{Type: llm.EventToolCall, Block: &b})
			}
		case "message_delta":
			if e.Delta != nil && e.Delta.StopReason != "" {
				stop = e.Delta.StopReason
			}
			e.Usage.apply(&reply.Usage)
		case "message_stop":
			for _, st := range blocks {
				if st.known {
					reply.Message.Blocks = append(reply.Message.Blocks, st.finish())
				}
			}
			reply.StopReason = stopReason(stop)
			return reply, nil
		case "error":
			return nil, streamError(e.Error)
		}
		// ping and unknown events are ignored, as the API asks.
	}
}

// streamError classifies an error event sent in the middle of a stream.
func streamError(we *wireError) *llm.Error {
	if we == nil {
		return &llm.Error{Kind: llm.ErrStreamCut, Message: "error event without details"}
	}
	e := &llm.Error{Message: we.Message}
	switch {
	case we.Type == "overloaded_error" || we.Type == "api_error":
		e.Kind = llm.ErrOverloaded
	case we.Type == "rate_limit_error":
		e.Kind = llm.ErrRateLimit
	case llm.IsContextTooLong(we.Type, we.Message):
		e.Kind = llm.ErrContextTooLong
	case we.Type == "authentication_error" || we.Type == "permission_error":
		e.Kind = llm.ErrAuth
	case we.Type == "invalid_request_error":
		e.Kind = llm.ErrBadRequest
	default:
		e.Kind = llm.ErrStreamCut
	}
	return e
}

func stopReason(s string) llm.StopReason {
	switch s {
	case "end_turn", "stop_sequence":
		return llm.StopEnd
	case "tool_use":
		return llm.StopToolUse
	case "max_tokens", "model_context_window_exceeded":
		return llm.StopMaxTokens
	case "refusal":
		return llm.StopRefusal
	}
	return llm.StopOther
}

type wireResponse struct {
	Type    string `json:"type"`
	Model   string `json:"model"`
	Content []struct {
		Type      string          `json:"type"`
		Text      string          `json:"text"`
		Thinking  string          `json:"thinking"`
		Signature string          `json:"signature"`
		Data      string          `json:"data"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
	} `json:"content"`
	StopReason           string                `json:"stop_reason"`
	Usage                *wireUsage            `json:"usage"`
	Error                *wireError            `json:"error"`
	InputTransformations []inputTransformation `json:"input_transformations"`
}

// DecodeResponse decodes a whole, non-streamed Messages API response. Stream
// uses it when a server answers with application/json instead of SSE;
// onEvent (may be nil) receives the events a stream would have sent.
func DecodeResponse(body []byte, onEvent func(llm.Event)) (*llm.Reply, error) {
	var w wireResponse
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, &llm.Error{Kind: llm.ErrUnknown, Message: "undecodable response", Err: err}
	}
	if w.Type == "error" || w.Error != nil {
		return nil, streamError(w.Error)
	}
	reply := &llm.Reply{Message: llm.Message{Role: llm.RoleAssistant}, Model: w.Model, StopReason: stopReason(w.StopReason)}
	w.Usage.apply(&reply.Usage)
	reply.Dropped = dropped(w.InputTransformations)
	for _, c := range w.Content {
		switch c.Type {
		case "text":
			reply.Message.Blocks = append(reply.Message.Blocks, llm.Block{Type: llm.BlockText, Text: c.Text})
		case "thinking":
			reply.Message.Blocks = append(reply.Message.Blocks, llm.Block{Type: llm.BlockThinking, Thinking: c.Thinking, Signature: c.Signature})
		case "redacted_thinking":
			reply.Message.Blocks = append(reply.Message.Blocks, llm.Block{Type: llm.BlockRedactedThinking, Data: c.Data})
		case "tool_use":
			reply.Message.Blocks = append(reply.Message.Blocks, llm.Block{Type: llm.BlockToolUse, ID: c.ID, Name: c.Name, Input: toolJSON(string(c.Input), nil)})
		}
	}
	replay(reply, onEvent)
	return reply, nil
}
