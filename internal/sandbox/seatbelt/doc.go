// Package seatbelt is the macOS backend's mechanism: the sandbox-exec
// profile built from the Policy (profile.go: deny by default, every grant
// named, every path a -D parameter), the one way out to the network
// proxy on the host's loopback (proxy.go), and the kqueue tracker that
// follows a command's processes from its start, since macOS has no PID
// namespace (track_darwin.go, proctrack.go).
//
// Open returns a Session whose Wrap, Track and Close the orchestration
// (package sandbox) runs each command with; this package never imports
// the orchestration. The profile is built and checked on every system
// (its tests parse it); only Open and the tracker are darwin's.
package seatbelt
