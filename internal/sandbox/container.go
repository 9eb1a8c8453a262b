package sandbox

import (
	"github.com/harness-dev/harness/internal/sandbox/backend"
	"github.com/harness-dev/harness/internal/sandbox/container"
)

// Container backend names accepted by Open (Linux: the container
// package). auto never picks them: a session runs in a container only
// when the user asks (--sandbox docker, or SANDBOX=docker in the
// settings).
const (
	BackendDocker = backend.Docker
	BackendPodman = backend.Podman
)

// ImageEnv names the image the container backend uses; without it, a
// harness.Dockerfile in the project is built, else the default image.
const ImageEnv = container.ImageEnv

// ProjectDockerfile, at the project root, describes the project's image.
const ProjectDockerfile = container.ProjectDockerfile

// IsContainer reports whether backend runs commands in a container.
func IsContainer(backend string) bool { return backend == BackendDocker || backend == BackendPodman }
