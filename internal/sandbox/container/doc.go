// Package container is the sandbox's container backend (docker, and
// podman through its Docker-compatible socket): one long-lived container
// per session that mounts nothing of the host but what the Policy makes
// visible, and an exec per command, run by a supervisor that puts up the
// same inner stage (Landlock, seccomp) as under bwrap. It is the only
// package of harness's sandbox that links the engine's client, the
// official one (github.com/moby/moby/client), with what package engine
// adds (the client from the environment, the two-step stop of an exec, a
// build's errors); the sandbox helper each command starts
// (cmd/harness-sandbox) links none of it. An image is imported or built
// only when the engine says it has none (cerrdefs.IsNotFound).
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
