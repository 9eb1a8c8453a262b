package app

import (
	"github.com/harness-dev/harness/internal/lsp"
	"github.com/harness-dev/harness/internal/notice"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sessionlog"
	"github.com/harness-dev/harness/internal/tools"
)

// startLSP gives the file tools the session's language servers (package
// lsp): started on the first edit of each language, inside the walls,
// and stopped with the session, before the sandbox closes. Without walls
// (--sandbox none) no server runs: it would run on the host unasked.
func (b *builder) startLSP(env *tools.Env) {
	s := b.s
	servers, err := lsp.ParseSetting(lsp.Builtin(), s.Config.LSP)
	if err != nil {
		s.Warnings = append(s.Warnings, notice.Warning(notice.Config, err.Error()+"; edits get no language server's errors this session"))
		return
	}
	if len(servers) == 0 || s.Sandbox.Backend() == sandbox.BackendNone {
		return // LSP=off, or no walls to run a server in
	}
	m := lsp.New(lsp.Options{
		Sandbox:  s.Sandbox,
		Project:  b.policy().Project(),
		Servers:  servers,
		Path:     b.o.Source.Env["PATH"],
		Warnings: s.Config.LSPWarnings,
		Notify: func(text string) {
			err := s.Log.Append(sessionlog.Entry{Type: sessionlog.TypeNotice, Text: text})
			s.tell(notice.Info(notice.LSP, text))
			if err != nil {
				s.tell(logFailed("could not record that notice", err))
			}
		},
	})
	s.LSP = m
	s.cleanup = append(s.cleanup, func() { m.Close() })
	env.Diagnose = m.Diagnose
}
