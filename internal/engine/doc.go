// Package engine holds the container-engine plumbing that the sandbox's
// container backend and batch's Docker executor share: running one exec
// to its end through the engine's official client, stopped in two steps
// when its context ends.
package engine
