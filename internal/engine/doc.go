// Package engine is harness's client of the Docker Engine API (and of
// podman's Docker-compatible one), over net/http, with local structs for
// the few requests and answers harness uses: the sandbox's container
// backend and batch's Docker executor share it.
//
// It replaces the engine's official client (github.com/moby/moby/client)
// because every start of the harness binary paid for it, and harness
// starts itself often (the sandbox's launcher and supervisor, each
// command's helper): the official client's dependencies compile about 20
// regular expressions and allocate some 500 KB at init
// (github.com/distribution/reference 414 KB, opencontainers/go-digest
// 92 KB, OpenTelemetry's otelhttp), about 1 ms of CPU and 250 page faults
// per process, and 0.7 MB of binary (issue #28). The Engine API is a
// documented, versioned REST API (https://docs.docker.com/reference/api/engine/);
// as with the Kubernetes manifests, the structs here are checked against
// the real engine in the tests (docker_test.go), and against a fake that
// enforces what dockerd does (fake_test.go).
//
// New reads DOCKER_HOST (unix:// or tcp://), DOCKER_API_VERSION,
// DOCKER_CERT_PATH and DOCKER_TLS_VERIFY as the official client's FromEnv
// does; the API version is agreed from /_ping's API-Version on first use
// (the lower of the engine's and MaxAPIVersion) and prefixes every path.
// A refusal is an *Error (errors.Is ErrNotFound for 404, ErrConflict for
// 409); no engine at the address is a *ConnError (ErrUnreachable). An
// exec's stream is the hijacked connection of its start (Stream), its
// output multiplexed in frames (Demux). Run runs one exec to its end,
// stopped in two steps when its context ends.
package engine
