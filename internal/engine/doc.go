// Package engine is what harness adds to the official Docker Engine
// client (github.com/moby/moby/client, with the API's types from
// github.com/moby/moby/api), which the sandbox's container backend and
// batch's Docker executor use directly for every request:
//
//   - New: a client configured as every Docker client is (client.FromEnv:
//     DOCKER_HOST, DOCKER_API_VERSION, DOCKER_CERT_PATH,
//     DOCKER_TLS_VERIFY), at a host of the caller's choosing (podman's
//     socket), the API version agreed with the engine; an ssh:// host,
//     which the client cannot reach, refused with the way round it;
//   - Run: one exec to its end, its multiplexed output split with the
//     API's stdcopy, stopped in two steps when its context ends (Stop:
//     the end of its stdin or an interrupt, then, after a grace, closing
//     the stream or a kill);
//   - Progress: a build's or an import's progress stream read to its end,
//     the error the engine reports inside it (a failed build step) a
//     *ProgressError, apart from a refused request.
//
// The engine's refusals are classified by the client's own errdefs
// (github.com/containerd/errdefs: cerrdefs.IsNotFound, IsConflict) and no
// engine at the address by client.IsErrConnectionFailed; tests check
// these against the real engine (docker_test.go).
//
// The client's dependencies (OpenTelemetry's otelhttp, reference and
// digest parsers) are linked into the harness binary only: the sandbox
// helper each command starts (cmd/harness-sandbox) links none of this.
package engine
