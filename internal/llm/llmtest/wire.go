package llmtest

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/harness-dev/harness/internal/llm"
)

// pieces splits s into small deltas, as a model streams tokens: at most a
// few words each, never inside a UTF-8 sequence.
func pieces(s string) []string {
	const max = 12
	var out []string
	for len(s) > 0 {
		n := len(s)
		if n > max {
			n = max
			if i := strings.LastIndexByte(s[:max], ' '); i > 0 {
				n = i + 1
			}
			for n < len(s) && !utf8.RuneStart(s[n]) {
				n++
			}
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// errorString is jsonString without HTML escaping, as the APIs write
// their error messages ("tokens > 200000 maximum").
func errorString(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func callID(f Format, i int, c ToolCall) string {
	if c.ID != "" {
		return c.ID
	}
	if f == FormatAnthropic {
		return fmt.Sprintf("toolu_fake%02d", i)
	}
	return fmt.Sprintf("call_fake%02d", i)
}

func stopReason(r Reply) string {
	if r.StopReason != "" {
		return r.StopReason
	}
	if len(r.ToolCalls) > 0 {
		return string(llm.StopToolUse)
	}
	return string(llm.StopEnd)
}

// FakeSignature is the signature the server gives thinking blocks.
const FakeSignature = "llmtest-signature"

type obj = map[string]any

func anthropicStream(r Reply) []string {
	ev := func(name string, data any) string {
		return "event: " + name + "\ndata: " + jsonString(data) + "\n\n"
	}
	var out []string
	start := obj{
		"id": "msg_fake", "type": "message", "role": "assistant", "model": "llmtest", "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": obj{"input_tokens": r.Usage.Input, "cache_read_input_tokens": r.Usage.CacheRead,
			"cache_creation_input_tokens": r.Usage.CacheWrite, "output_tokens": 1},
	}
	if len(r.dropped) > 0 {
		start["input_transformations"] = transformations(r.dropped)
	}
	out = append(out, ev("message_start", obj{"type": "message_start", "message": start}))
	idx := 0
	if r.Thinking != "" || r.thinking {
		out = append(out, ev("content_block_start", obj{"type": "content_block_start", "index": idx,
			"content_block": obj{"type": "thinking", "thinking": "", "signature": ""}}))
		for _, p := range pieces(r.Thinking) {
			out = append(out, ev("content_block_delta", obj{"type": "content_block_delta", "index": idx,
				"delta": obj{"type": "thinking_delta", "thinking": p}}))
		}
		out = append(out, ev("content_block_delta", obj{"type": "content_block_delta", "index": idx,
			"delta": obj{"type": "signature_delta", "signature": r.signature()}}))
		out = append(out, ev("content_block_stop", obj{"type": "content_block_stop", "index": idx}))
		idx++
	}
	if r.Text != "" {
		out = append(out, ev("content_block_start", obj{"type": "content_block_start", "index": idx,
			"content_block": obj{"type": "text", "text": ""}}))
		out = append(out, ev("ping", obj{"type": "ping"}))
		for _, p := range pieces(r.Text) {
			out = append(out, ev("content_block_delta", obj{"type": "content_block_delta", "index": idx,
				"delta": obj{"type": "text_delta", "text": p}}))
		}
		out = append(out, ev("content_block_stop", obj{"type": "content_block_stop", "index": idx}))
		idx++
	}
	for i, c := range r.ToolCalls {
		out = append(out, ev("content_block_start", obj{"type": "content_block_start", "index": idx,
			"content_block": obj{"type": "tool_use", "id": callID(FormatAnthropic, i, c), "name": c.Name, "input": obj{}}}))
		for _, p := range pieces(c.Input) {
			out = append(out, ev("content_block_delta", obj{"type": "content_block_delta", "index": idx,
				"delta": obj{"type": "input_json_delta", "partial_json": p}}))
		}
		out = append(out, ev("content_block_stop", obj{"type": "content_block_stop", "index": idx}))
		idx++
	}
	if r.StreamError != "" {
		return append(out, ev("error", obj{"type": "error", "error": obj{"type": "overloaded_error", "message": r.StreamError}}))
	}
	out = append(out, ev("message_delta", obj{"type": "message_delta",
		"delta": obj{"stop_reason": stopReason(r), "stop_sequence": nil}, "usage": anthropicOutput(r.Usage)}))
	return append(out, ev("message_stop", obj{"type": "message_stop"}))
}

// signature is the reply's thinking signature: bound to the request in
// preserved-thinking mode, else the fixed FakeSignature.
func (r Reply) signature() string {
	if r.sig != "" {
		return r.sig
	}
	return FakeSignature
}

func transformations(paths []string) []any {
	var out []any
	for _, p := range paths {
		out = append(out, obj{"type": "thinking_dropped", "path": p, "reason": "prefix_mismatch"})
	}
	return out
}

func anthropicJSON(r Reply) []byte {
	content := []any{}
	if r.Thinking != "" || r.thinking {
		content = append(content, obj{"type": "thinking", "thinking": r.Thinking, "signature": r.signature()})
	}
	if r.Text != "" {
		content = append(content, obj{"type": "text", "text": r.Text})
	}
	for i, c := range r.ToolCalls {
		in := json.RawMessage(c.Input)
		if !json.Valid(in) {
			in = json.RawMessage(jsonString(c.Input))
		}
		content = append(content, obj{"type": "tool_use", "id": callID(FormatAnthropic, i, c), "name": c.Name, "input": in})
	}
	msg := obj{"id": "msg_fake", "type": "message", "role": "assistant", "model": "llmtest",
		"content": content, "stop_reason": stopReason(r), "stop_sequence": nil,
		"usage": obj{"input_tokens": r.Usage.Input, "cache_read_input_tokens": r.Usage.CacheRead,
			"cache_creation_input_tokens": r.Usage.CacheWrite, "output_tokens": r.Usage.Output}}
	if r.Usage.Reasoning > 0 {
		msg["usage"].(obj)["output_tokens_details"] = obj{"thinking_tokens": r.Usage.Reasoning}
	}
	if len(r.dropped) > 0 {
		msg["input_transformations"] = transformations(r.dropped)
	}
	return []byte(jsonString(msg))
}

func openaiFinish(r Reply) string {
	switch s := stopReason(r); s {
	case string(llm.StopEnd):
		return "stop"
	case string(llm.StopToolUse):
		return "tool_calls"
	case string(llm.StopMaxTokens):
		return "length"
	case string(llm.StopRefusal):
		return "content_filter"
	default:
		return s
	}
}

// anthropicOutput is message_delta's usage: the output count, and the
// thinking share of it (output_tokens_details.thinking_tokens) when there is
// one.
func anthropicOutput(u llm.Usage) obj {
	o := obj{"output_tokens": u.Output}
	if u.Reasoning > 0 {
		o["output_tokens_details"] = obj{"thinking_tokens": u.Reasoning}
	}
	return o
}

func openaiUsage(u llm.Usage, m streamModes) obj {
	if m.cached >= 0 {
		u.Input += u.CacheRead - m.cached
		u.CacheRead = m.cached
	}
	prompt := u.Input + u.CacheRead + u.CacheWrite
	if m.deepseek {
		// DeepSeek's own fields, and no prompt_tokens_details.
		return obj{"prompt_tokens": prompt, "completion_tokens": u.Output, "total_tokens": prompt + u.Output,
			"prompt_cache_hit_tokens": u.CacheRead, "prompt_cache_miss_tokens": prompt - u.CacheRead}
	}
	o := obj{"prompt_tokens": prompt, "completion_tokens": u.Output, "total_tokens": prompt + u.Output,
		"prompt_tokens_details": obj{"cached_tokens": u.CacheRead}}
	if u.Reasoning > 0 {
		o["completion_tokens_details"] = obj{"reasoning_tokens": u.Reasoning}
	}
	return o
}

// openaiExtras are what the modes add to one reply: the thought signature
// of a call by index, and the reasoning_details pieces.
type openaiExtras struct {
	sigs    map[int]string
	details []any // reasoning_details objects, streamed one per delta
}

func openaiStream(r Reply, m streamModes, x openaiExtras) []string {
	chunk := func(delta obj, finish any) string {
		return "data: " + jsonString(obj{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": "llmtest",
			"choices": []any{obj{"index": 0, "delta": delta, "finish_reason": finish}}}) + "\n\n"
	}
	out := []string{chunk(obj{"role": "assistant", "content": ""}, nil)}
	for _, p := range pieces(r.Thinking) {
		out = append(out, chunk(obj{"reasoning_content": p}, nil))
	}
	for _, d := range x.details {
		out = append(out, chunk(obj{"reasoning_details": []any{d}}, nil))
	}
	for _, p := range pieces(r.Text) {
		out = append(out, chunk(obj{"content": p}, nil))
	}
	for i, c := range r.ToolCalls {
		first := obj{"index": i, "id": callID(FormatOpenAI, i, c), "type": "function",
			"function": obj{"name": c.Name, "arguments": ""}}
		if sig := x.sigs[i]; sig != "" {
			first["extra_content"] = obj{"google": obj{"thought_signature": sig}}
		}
		if m.objectArgs && json.Valid([]byte(c.Input)) {
			first["function"] = obj{"name": c.Name, "arguments": json.RawMessage(c.Input)}
			out = append(out, chunk(obj{"tool_calls": []any{first}}, nil))
			continue
		}
		out = append(out, chunk(obj{"tool_calls": []any{first}}, nil))
		for _, p := range pieces(c.Input) {
			fn := obj{"arguments": p}
			if m.repeatNames {
				fn["name"] = c.Name
			}
			out = append(out, chunk(obj{"tool_calls": []any{obj{"index": i, "function": fn}}}, nil))
		}
	}
	if r.StreamError != "" {
		return append(out, "data: "+jsonString(obj{"error": obj{"message": r.StreamError, "type": "server_error", "code": 502}})+"\n\n")
	}
	out = append(out, chunk(obj{}, openaiFinish(r)))
	out = append(out, "data: "+jsonString(obj{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": "llmtest",
		"choices": []any{}, "usage": openaiUsage(r.Usage, m)})+"\n\n")
	return append(out, ": keep-alive\n\n", "data: [DONE]\n\n")
}

func openaiJSON(r Reply, m streamModes, x openaiExtras) []byte {
	msg := obj{"role": "assistant", "content": nil}
	if r.Text != "" {
		msg["content"] = r.Text
	}
	if r.Thinking != "" {
		msg["reasoning_content"] = r.Thinking
	}
	if len(r.ToolCalls) > 0 {
		var calls []any
		for i, c := range r.ToolCalls {
			call := obj{"id": callID(FormatOpenAI, i, c), "type": "function",
				"function": obj{"name": c.Name, "arguments": c.Input}}
			if m.objectArgs && json.Valid([]byte(c.Input)) {
				call["function"] = obj{"name": c.Name, "arguments": json.RawMessage(c.Input)}
			}
			if sig := x.sigs[i]; sig != "" {
				call["extra_content"] = obj{"google": obj{"thought_signature": sig}}
			}
			calls = append(calls, call)
		}
		msg["tool_calls"] = calls
	}
	if len(x.details) > 0 {
		msg["reasoning_details"] = x.details
	}
	return []byte(jsonString(obj{"id": "chatcmpl-fake", "object": "chat.completion", "model": "llmtest",
		"choices": []any{obj{"index": 0, "message": msg, "finish_reason": openaiFinish(r)}}, "usage": openaiUsage(r.Usage, m)}))
}
