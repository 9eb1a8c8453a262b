package sandbox

// Container backend names accepted by Open (Linux: container_linux.go).
// auto never picks them: a session runs in a container only when the
// user asks (--sandbox docker, or SANDBOX=docker in the settings).
const (
	BackendDocker = "docker"
	BackendPodman = "podman"
)

// ImageEnv names the image the container backend uses; without it, a
// harness.Dockerfile in the project is built, else the default image.
const ImageEnv = "HARNESS_IMAGE"

// ProjectDockerfile, at the project root, describes the project's image.
const ProjectDockerfile = "harness.Dockerfile"

// IsContainer reports whether backend runs commands in a container.
func IsContainer(backend string) bool { return backend == BackendDocker || backend == BackendPodman }
