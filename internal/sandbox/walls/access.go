package walls

import (
	"slices"
	"time"
)

// What other packages read of a Policy. Lists are copies: a caller that
// changes one changes nothing of the snapshot.

// Project is the canonical project root.
func (p *Policy) Project() string { return p.project }

// Writable lists the writable roots: the project first, then --add-dir roots.
func (p *Policy) Writable() []string { return slices.Clone(p.writable) }

// ReadOnly lists the read-only carve-outs inside the writable roots
// (existing paths, canonical): those found at the start and those Refresh
// added before this snapshot.
func (p *Policy) ReadOnly() []string { return slices.Clone(p.readOnly) }

// Protected lists the paths watched for tampering: the read-only
// carve-outs and those that do not exist yet.
func (p *Policy) Protected() []string { return slices.Clone(p.protected) }

// DenyRead lists the secrets: never readable (as given and, for links,
// resolved).
func (p *Policy) DenyRead() []string { return slices.Clone(p.denyRead) }

// KeepReadable lists paths beneath a DenyRead directory that stay
// readable (the session's own spill directory; Live.Keep).
func (p *Policy) KeepReadable() []string { return slices.Clone(p.keepReadable) }

// Sockets lists the known host sockets (or their directories) masked
// inside the sandbox.
func (p *Policy) Sockets() []string { return slices.Clone(p.sockets) }

// EnvAllow names the environment variables passed through.
func (p *Policy) EnvAllow() []string { return slices.Clone(p.allowEnv) }

// Env is the NAME=value pairs passed to commands (allowlisted, never a
// secret).
func (p *Policy) Env() []string { return slices.Clone(p.env) }

// Home is the user's home directory (may be empty).
func (p *Policy) Home() string { return p.home }

// Timeout is the default per-command timeout.
func (p *Policy) Timeout() time.Duration { return p.timeout }

// OutputLimit is the bytes of output kept per command.
func (p *Policy) OutputLimit() int { return p.outputLimit }

// TempDir is the host path of the session's private /tmp ("" before the
// sandbox made one, and for the none backend).
func (p *Policy) TempDir() string { return p.tempDir }

// Notes are things the policy could not do, said plainly.
func (p *Policy) Notes() []string { return slices.Clone(p.notes) }

// MaxProcs bounds the processes of the commands (0: no bound; bounds.go).
func (p *Policy) MaxProcs() int { return p.maxProcs }

// MaxMemory bounds the commands' memory in bytes (0: no bound; bounds.go).
func (p *Policy) MaxMemory() int64 { return p.maxMemory }

// Cache is the host path of the project's persistent build cache ("":
// caches live in the private /tmp; cache.go).
func (p *Policy) Cache() string { return p.cache }

// CacheVars are the extra variables pointed at directories in Cache.
func (p *Policy) CacheVars() []string { return slices.Clone(p.cacheVars) }

// HostModCache is the host's Go module cache, read-only inside.
func (p *Policy) HostModCache() string { return p.hostModCache }

// GitWrite are the project's own git directories commands may write
// (gitwrite.go).
func (p *Policy) GitWrite() []GitDir {
	out := slices.Clone(p.gitWrite)
	for i, g := range out {
		out[i].Dirs, out[i].Files = slices.Clone(g.Dirs), slices.Clone(g.Files)
	}
	return out
}

// LoopbackTCP reports whether commands may use TCP on localhost (macOS;
// Linux always has a private loopback).
func (p *Policy) LoopbackTCP() bool { return p.loopbackTCP }
