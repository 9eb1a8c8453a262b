package mcp

import (
	"context"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Subscriptions. A resource read (an @SERVER:URI mention, or the model's
// mcp_read_resource) is subscribed to (resources/subscribe) where the
// server offers it, so a change to what the model was given does not go
// unnoticed: the server's notifications/resources/updated tells the
// user at once (Options.Notify, once until it is read again: a server
// that updates every second is not a flood) and the model with the next
// answer of any MCP tool (staleNote), so it reads it again.
// Subscriptions last as long as the server's session; one started again
// is not subscribed again until the resource is read again.

// subscribe subscribes to uri after a read, once, when the server offers
// subscriptions; it does not wait for the answer.
func (m *Manager) subscribe(c *conn, uri string) {
	if r := c.caps().Resources; r == nil || !r.Subscribe {
		return
	}
	c.mu.Lock()
	if c.subscribed == nil {
		c.subscribed = map[string]bool{}
	}
	delete(c.stale, uri) // read just now: what the model has is current
	_, already := c.subscribed[uri]
	if !already {
		c.subscribed[uri] = false // asked; true once the server said yes
	}
	c.mu.Unlock()
	if already {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), m.o.StartTimeout)
		defer cancel()
		err := c.do(ctx, func(s *sdk.ClientSession) error {
			return s.Subscribe(ctx, &sdk.SubscribeParams{URI: uri})
		})
		c.mu.Lock()
		if err != nil {
			delete(c.subscribed, uri)
		} else if _, ok := c.subscribed[uri]; ok {
			c.subscribed[uri] = true
		}
		c.mu.Unlock()
	}()
}

// onUpdated is a server's notifications/resources/updated.
func (m *Manager) onUpdated(c *conn, p *sdk.ResourceUpdatedNotificationParams) {
	if p == nil {
		return
	}
	c.mu.Lock()
	_, mine := c.subscribed[p.URI]
	news := mine && !c.stale[p.URI] // said once until it is read again
	if mine {
		if c.stale == nil {
			c.stale = map[string]bool{}
		}
		c.stale[p.URI] = true
	}
	c.mu.Unlock()
	if news && m.o.Notify != nil {
		m.o.Notify(fmt.Sprintf("MCP server %s: resource %s changed since it was read (@%s:%s attaches it again)", c.def.Name, p.URI, c.def.Name, p.URI))
	}
}

// staleNote names the resources that changed since they were read, for
// the model, and forgets them; "" when none did.
func (m *Manager) staleNote() string {
	var names []string
	for _, c := range m.servers {
		c.mu.Lock()
		for uri := range c.stale {
			names = append(names, "@"+c.def.Name+":"+uri)
		}
		c.stale = nil
		c.mu.Unlock()
	}
	if len(names) == 0 {
		return ""
	}
	slices.Sort(names)
	return "\n[MCP resources changed since they were read: " + strings.Join(names, ", ") + "; read them again with " + ResourceToolName + " before relying on them]"
}
