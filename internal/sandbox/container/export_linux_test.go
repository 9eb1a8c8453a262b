package container

import (
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// What the session tests (package container_test, which opens sessions
// through package sandbox) read of a Runner.

var (
	RequireDocker      = requireDocker
	ContainerResources = containerResources
)

const PidsHeadroom = pidsHeadroom

// Spec is the container configuration the Runner starts.
func (c *Runner) Spec() (*container.Config, *container.HostConfig) { return c.spec(c.pol.Policy()) }

// CurrentID is the running container's id, "" for none.
func (c *Runner) CurrentID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur == nil {
		return ""
	}
	return c.cur.id
}

// Client is the Runner's engine client.
func (c *Runner) Client() *client.Client { return c.cli }

// User is the uid:gid commands run as.
func (c *Runner) User() string { return c.user }
