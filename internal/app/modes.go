package app

import (
	"github.com/harness-dev/harness/internal/extend"
	"github.com/harness-dev/harness/internal/notice"
	"github.com/harness-dev/harness/internal/sessionlog"
)

// followMode makes a mode a state of the whole session: a switch into or
// out of plan mode reaches at once what already runs under walls of its
// own, the background and in-flight commands (tools.Jobs.Follow), the
// MCP servers (mcp.Manager.Follow), the project hooks in flight
// (extend.Hooks.Follow) and the language servers (lsp.Manager.Follow). Sub-agents share the walls and the
// gate, so their next step has the new mode. What was done is told to the
// user at once, and to the model with the next prompt (extend.Modes).
func (b *builder) followMode() {
	s := b.s
	told := func(f extend.Follower) extend.Follower {
		return func(readOnly bool) []string {
			notes := f(readOnly)
			for _, n := range notes {
				text := "mode: " + n
				err := s.Log.Append(sessionlog.Entry{Type: sessionlog.TypeNotice, Text: text})
				s.tell(notice.Info(notice.Config, text))
				if err != nil {
					s.tell(logFailed("could not record that notice", err))
				}
			}
			return notes
		}
	}
	if s.Jobs != nil {
		s.Modes.Follow(told(s.Jobs.Follow))
	}
	if s.MCP != nil {
		s.Modes.Follow(told(s.MCP.Follow))
	}
	if s.Hooks != nil {
		s.Modes.Follow(told(s.Hooks.Follow))
	}
	if s.LSP != nil {
		s.Modes.Follow(told(s.LSP.Follow))
	}
}
