package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/harness-dev/harness/internal/permission"
	"github.com/harness-dev/harness/internal/sandbox"
)

// describeNetwork is /network: the rules in force and the connections
// commands made, newest last.
func (c *chat) describeNetwork() string {
	st := c.t.Style
	var b strings.Builder
	b.WriteString(st.Bold("network rules") + "\n")
	for _, r := range c.s.Gate.NetRules() {
		b.WriteString("  " + r + "\n")
	}
	if c.s.Proxy == nil || !sandbox.OffersProxy(c.s.Sandbox) {
		b.WriteString("no proxy in this session: commands have no network")
		return b.String()
	}
	recs := c.s.Proxy.Recent()
	if len(recs) == 0 {
		b.WriteString(st.Bold("connections") + " none yet")
		return b.String()
	}
	b.WriteString(st.Bold("connections") + fmt.Sprintf(" (%d, newest last)\n", len(recs)))
	for _, r := range recs {
		line := r.Time.Format("15:04:05") + "  " + r.String()
		if r.Verdict != "allowed" {
			line = st.Bold(line)
		}
		b.WriteString("  " + line + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// newNetworkTopic is "harness help network".
func newNetworkTopic() *cobra.Command {
	presets := permission.NetPresets()
	names := make([]string, 0, len(presets))
	for k := range presets {
		names = append(names, k)
	}
	sort.Strings(names)
	var pl strings.Builder
	for _, n := range names {
		fmt.Fprintf(&pl, "  @%-8s %s\n", n, strings.Join(presets[n], " "))
	}
	return &cobra.Command{
		Use:   "network",
		Short: "How sandboxed commands reach the network, and the rules that decide",
		Long: `Commands in the sandbox have no network of their own. They reach the outside through a
proxy in the harness process: HTTPS_PROXY and HTTP_PROXY (and their lower-case forms) point at
it, so go, npm, pip, cargo, git over HTTPS and curl work unchanged, and ALL_PROXY at the same port
as SOCKS5 (socks5h://). The proxy speaks HTTP CONNECT, plain http:// requests and SOCKS5 CONNECT
(no authentication); it never decrypts traffic or adds credentials. Where the sandbox has no
network namespace of its own to listen in (the landlock backend without user namespaces) there
is no proxy and commands have no network at all; "harness doctor" says which.

Which hosts may be reached is decided by rules in the permission files
(~/.agents/permissions, <project>/.agents/permissions):
  allow net *.example.com         any name below example.com, ports 443 and 80
  allow net api.example.com:8443  one host and port
  allow net localhost:5432        private and loopback addresses need this exact form
  allow net @go                   a preset (below)
  deny  net tracker.example.com
HOST is a name, *.suffix, * or an IP address (an IP is matched only by a rule naming it); PORT is
a number or *, and without one the rule covers 443 and 80. The most specific rule wins; the
project's file can tighten but never loosen what your file denies.

A connection no rule covers asks you in an interactive session (yes, no, or always: saved to the
project's file) while the connection waits; "harness run" refuses it and the command's output says
which --allow-net HOST would allow it. --allow-net HOST[:PORT] or --allow-net @PRESET adds a rule
for one run.

Presets:
` + pl.String() + `  @lockfiles the registries the project's lockfiles name outright (package-lock.json and
             yarn.lock https URLs, Cargo.lock and uv.lock registries), read at session start;
             the agent can edit lockfiles, so enable it for projects whose lockfiles you trust

Safe by construction: names are resolved by harness, and the connection goes to the address that
was checked; loopback, private, link-local and cloud-metadata addresses are refused unless a rule
names that host and port; an HTTPS tunnel must ask for the same server name (TLS SNI) as the host
it was allowed for; connections are bounded and closed when idle. Every connection (host, port, verdict, bytes
each way) is in the session log; /network lists them and /sandbox shows the rules in force.`,
	}
}
