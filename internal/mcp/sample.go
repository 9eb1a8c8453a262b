//lint:file-ignore SA1019 sampling is deprecated in the newest revision (SEP-2577) and still what servers of 2025-11-25 use; the brief asks for it

package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Sampling is a server's request for a completion (sampling/createMessage),
// text only: what harness sends to the session's model once the user (or
// a rule) allows it. The strings are the server's, unsanitised.
type Sampling struct {
	Server   string
	System   string
	Messages []SampleMessage
	// MaxTokens is the server's maxTokens, capped at MaxSampleTokens.
	MaxTokens int
	// Asked is the maxTokens the server asked for, before the cap.
	Asked         int64
	StopSequences []string
	// ModelHints are the server's model preferences' hints (advice only:
	// the session's model answers).
	ModelHints []string
}

// SampleMessage is one message of a sampling request.
type SampleMessage struct {
	Role string // user or assistant
	Text string
}

// Sampled is the model's answer to a Sampling.
type Sampled struct {
	Text  string
	Model string
	// StopReason is the spec's: endTurn, stopSequence, maxTokens, or
	// another the provider gave.
	StopReason string
}

// Bounds of a sampling request: the tokens a server may have the
// session's model write for it, and the text it may send.
const (
	MaxSampleTokens = 4096
	maxSampleText   = 256 << 10
)

// ErrSampleRejected is the error of a sampling request the user or the
// rules refused; the server gets the spec's code -1 ("User rejected
// sampling request").
var ErrSampleRejected = errors.New("user rejected sampling request")

// codeUserRejected is the code the spec gives a refused sampling request.
const codeUserRejected = -1

// sample answers a server's sampling/createMessage through
// Options.Sample. Tool use is not supported (harness declares sampling
// without tools), nor are images and audio: each is an error that says so.
func (m *Manager) sample(ctx context.Context, c *conn, req *sdk.CreateMessageWithToolsRequest) (*sdk.CreateMessageWithToolsResult, error) {
	r, err := samplingOf(c.def.Name, req.Params)
	if err != nil {
		m.tell(fmt.Sprintf("MCP server %s asked for a sampling harness cannot send: %v", c.def.Name, err))
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	out, err := m.o.Sample(ctx, r)
	if errors.Is(err, ErrSampleRejected) {
		return nil, &jsonrpc.Error{Code: codeUserRejected, Message: err.Error()}
	}
	if err != nil {
		return nil, err
	}
	return &sdk.CreateMessageWithToolsResult{
		Content:    []sdk.Content{&sdk.TextContent{Text: out.Text}},
		Model:      out.Model,
		Role:       "assistant",
		StopReason: out.StopReason,
	}, nil
}

// samplingOf checks a request and reads it into a Sampling.
func samplingOf(server string, p *sdk.CreateMessageWithToolsParams) (*Sampling, error) {
	if p == nil {
		return nil, errors.New("sampling/createMessage without params")
	}
	if len(p.Tools) > 0 || p.ToolChoice != nil {
		return nil, errors.New("harness does not support tool use in sampling (it declares sampling without tools): send the request without tools")
	}
	if p.MaxTokens <= 0 {
		return nil, fmt.Errorf("maxTokens is %d: it must be a positive number of tokens", p.MaxTokens)
	}
	if len(p.Messages) == 0 {
		return nil, errors.New("the request has no messages")
	}
	r := &Sampling{Server: server, System: p.SystemPrompt, MaxTokens: int(min(p.MaxTokens, MaxSampleTokens)), Asked: p.MaxTokens,
		StopSequences: p.StopSequences}
	if p.ModelPreferences != nil {
		for _, h := range p.ModelPreferences.Hints {
			if h != nil && h.Name != "" {
				r.ModelHints = append(r.ModelHints, h.Name)
			}
		}
	}
	size := len(r.System)
	for i, msg := range p.Messages {
		if msg == nil {
			return nil, fmt.Errorf("message %d is null", i+1)
		}
		if msg.Role != "user" && msg.Role != "assistant" {
			return nil, fmt.Errorf("message %d has the role %q: only user and assistant are allowed", i+1, msg.Role)
		}
		var text []string
		for _, ct := range msg.Content {
			switch ct := ct.(type) {
			case *sdk.TextContent:
				text = append(text, ct.Text)
			case *sdk.ToolUseContent, *sdk.ToolResultContent:
				return nil, errors.New("harness does not support tool use in sampling (it declares sampling without tools)")
			default:
				return nil, fmt.Errorf("message %d has %T content: harness samples text only", i+1, ct)
			}
		}
		t := strings.Join(text, "\n")
		size += len(t)
		r.Messages = append(r.Messages, SampleMessage{Role: string(msg.Role), Text: t})
	}
	if size > maxSampleText {
		return nil, fmt.Errorf("its text is %d bytes; harness sends at most %d", size, maxSampleText)
	}
	return r, nil
}

// Summary is the request in a few lines, for the user who approves it:
// the server, the cap, the system prompt and each message, each cut.
func (r *Sampling) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "MCP server %s asks the session's model for a reply of up to %d tokens", r.Server, r.MaxTokens)
	if int64(r.MaxTokens) < r.Asked {
		fmt.Fprintf(&b, " (it asked for %d; harness caps it)", r.Asked)
	}
	b.WriteString(":\n")
	cut := func(s string) string {
		s = strings.Join(strings.Fields(s), " ")
		if len(s) > 300 {
			s = cutUTF8(s, 300) + "…"
		}
		return s
	}
	if r.System != "" {
		fmt.Fprintf(&b, "system: %s\n", cut(r.System))
	}
	for _, msg := range r.Messages {
		fmt.Fprintf(&b, "%s: %s\n", msg.Role, cut(msg.Text))
	}
	return strings.TrimSuffix(b.String(), "\n")
}
