package mcp

import (
	"context"
	"sort"
)

// Begin is Start that does not wait: the Manager comes back at once with
// every server listed, each starting beside the caller (the interactive
// session's prompt is usable meanwhile), and done is called once per
// server when its start ends (err nil: connected, its tools listed).
// Until then its tools are not listed and a call of one says the server
// is not connected. The caller must let every start end (cancel ctx and
// wait for the done calls) before Close.
func Begin(ctx context.Context, defs []Server, o Options, done func(name string, err error)) *Manager {
	m, _ := Start(ctx, nil, o) // no server yet: the defaults applied
	for _, d := range defs {
		m.servers = append(m.servers, &conn{def: d, m: m, changes: map[string]int{}})
	}
	sort.Slice(m.servers, func(i, j int) bool { return m.servers[i].def.Name < m.servers[j].def.Name })
	for _, c := range m.servers {
		go func() {
			err := c.start(ctx)
			if done != nil {
				done(c.def.Name, err)
			}
		}()
	}
	return m
}

// PauseStarts stops the start timeout's clock of every server still
// starting, while the user answers a prompt (a network question raised by
// a server's start); the result restarts the clocks.
func (m *Manager) PauseStarts() (resume func()) {
	if m == nil {
		return func() {}
	}
	var resumes []func()
	for _, c := range m.servers {
		resumes = append(resumes, c.pauseStart())
	}
	return func() {
		for _, r := range resumes {
			r()
		}
	}
}
