//go:build !linux

package inner

// runContainerStage: the container backend's stages run only in a Linux
// container, from a Linux binary.
func runContainerStage([]string) {}
