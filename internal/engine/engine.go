package engine

import (
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
func New(host string) (*client.Client, error) {
	opts := []client.Opt{client.FromEnv}
	if host != "" {
		opts = append(opts, client.WithHost(host))
	}
	return client.New(opts...)
}
