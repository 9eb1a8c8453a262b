package tools

import (
	"context"
	"io"
	"sync"
)

type progressKey struct{}

// WithProgress returns ctx carrying f, which a tool that produces output
// over time (bash) calls with each piece as it comes, so a front end can
// show a running command's last lines. f must not block for long.
func WithProgress(ctx context.Context, f func(chunk string)) context.Context {
	return context.WithValue(ctx, progressKey{}, f)
}

// progressWriter is the writer for ctx's progress function, or nil.
func progressWriter(ctx context.Context) io.Writer {
	f, _ := ctx.Value(progressKey{}).(func(string))
	if f == nil {
		return nil
	}
	return &progress{f: f}
}

// progress serialises the command's two streams into one function.
type progress struct {
	mu sync.Mutex
	f  func(string)
}

func (p *progress) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.f(string(b))
	return len(b), nil
}

// Progress is ctx's progress function (WithProgress), or nil: a tool
// whose work reports progress otherwise (an MCP server's notifications)
// shows it there.
func Progress(ctx context.Context) func(chunk string) {
	f, _ := ctx.Value(progressKey{}).(func(string))
	return f
}
