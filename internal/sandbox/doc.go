// Package sandbox runs the agent's shell commands inside kernel walls and
// holds the Policy that the host-side file tools obey too.
//
// Policy is computed once per session. A Sandbox is one session's instance of
// a backend; Run executes one command in its own killable process tree.
package sandbox
