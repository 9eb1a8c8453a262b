package walls

import (
	"slices"
	"time"
)

// What other packages read of a Policy, each as its field says (see
// Policy). Lists are copies: a caller that changes one changes nothing of
// the snapshot.

func (p *Policy) Project() string        { return p.project }
func (p *Policy) Writable() []string     { return slices.Clone(p.writable) }
func (p *Policy) ReadOnly() []string     { return slices.Clone(p.readOnly) }
func (p *Policy) Protected() []string    { return slices.Clone(p.protected) }
func (p *Policy) DenyRead() []string     { return slices.Clone(p.denyRead) }
func (p *Policy) KeepReadable() []string { return slices.Clone(p.keepReadable) }
func (p *Policy) Sockets() []string      { return slices.Clone(p.sockets) }
func (p *Policy) EnvAllow() []string     { return slices.Clone(p.allowEnv) }
func (p *Policy) Env() []string          { return slices.Clone(p.env) }
func (p *Policy) Home() string           { return p.home }
func (p *Policy) Timeout() time.Duration { return p.timeout }
func (p *Policy) OutputLimit() int       { return p.outputLimit }
func (p *Policy) TempDir() string        { return p.tempDir }
func (p *Policy) Notes() []string        { return slices.Clone(p.notes) }
func (p *Policy) MaxProcs() int          { return p.maxProcs }
func (p *Policy) MaxMemory() int64       { return p.maxMemory }
func (p *Policy) Cache() string          { return p.cache }
func (p *Policy) CacheVars() []string    { return slices.Clone(p.cacheVars) }
func (p *Policy) HostModCache() string   { return p.hostModCache }
func (p *Policy) LoopbackTCP() bool      { return p.loopbackTCP }
func (p *Policy) ProjectReadOnly() bool  { return p.projectRO } // plan mode: see planmode.go
func (p *Policy) GitWrite() (out []GitDir) { // the lists in each copied too
	for _, g := range p.gitWrite {
		g.Dirs, g.Files = slices.Clone(g.Dirs), slices.Clone(g.Files)
		out = append(out, g)
	}
	return out
}
