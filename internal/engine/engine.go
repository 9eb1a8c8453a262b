package engine

import (
	"fmt"
	"os"
	"strings"

	"github.com/moby/moby/client"
)

// New is a client of the engine at host (unix:///path, tcp://host:port;
// "" for DOCKER_HOST, else the platform's default socket), configured as
// every Docker client is (client.FromEnv): DOCKER_HOST,
// DOCKER_API_VERSION (a fixed version, no negotiation), DOCKER_CERT_PATH
// and DOCKER_TLS_VERIFY. Without a fixed version the client agrees on one
// with the engine on its first request (the lower of the engine's and
// client.MaxAPIVersion; an engine below client.MinAPIVersion is refused
// when the caller pings with NegotiateAPIVersion). Nothing is sent before
// the first call.
//
// An ssh:// host is refused with what to do instead: the docker CLI
// reaches one through its own ssh helper, which the client does not
// have (it would look the user@host up as a TCP name and say no such
// host).
func New(host string) (*client.Client, error) {
	named := host
	if named == "" {
		named = os.Getenv(client.EnvOverrideHost)
	}
	if strings.HasPrefix(named, "ssh://") {
		return nil, fmt.Errorf("engine host %q: ssh:// is not supported; forward the engine's socket instead (ssh -L /tmp/docker.sock:/var/run/docker.sock HOST, then %s=unix:///tmp/docker.sock)", named, client.EnvOverrideHost)
	}
	opts := []client.Opt{client.FromEnv}
	if host != "" {
		opts = append(opts, client.WithHost(host))
	}
	return client.New(opts...)
}
