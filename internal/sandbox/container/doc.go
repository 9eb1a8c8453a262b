// Package container is the sandbox's container backend (docker, and
// podman through its Docker-compatible socket): one long-lived container
// per session that mounts nothing of the host but what the Policy makes
// visible, and an exec per command, run by a supervisor that puts up the
// same inner stage (Landlock, seccomp) as under bwrap. It is the only
// package of harness's sandbox that links the engine's client, package
// engine: harness's own, over net/http, not the official one, whose
// dependencies cost every start of the binary ~1 ms of CPU and 0.7 MB
// (see engine's doc.go); the engine's refusals are typed there
// (engine.ErrNotFound), and an image is imported or built only when the
// engine says it has none.
//
// Open readies a session and returns a Runner (a backend.Runner): the
// orchestration (package sandbox) runs every command of the session
// through it and bounds, times out and checks it as for any backend. The
// package never imports the orchestration. See container_linux.go for
// the mounts and the walls, container_net_linux.go for the network
// proxy's channel into a container without a network.
package container

// ImageEnv names the image the container backend uses; without it, a
// harness.Dockerfile in the project is built, else the default image.
const ImageEnv = "HARNESS_IMAGE"

// ProjectDockerfile, at the project root, describes the project's image.
const ProjectDockerfile = "harness.Dockerfile"
