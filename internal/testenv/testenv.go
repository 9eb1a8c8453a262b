// Package testenv decides what a test does when this machine lacks
// something it needs (bwrap, Landlock, user namespaces, tmux, setpriv,
// root): it skips, unless HARNESS_REQUIRE names that feature, and then it
// fails. .ci/run sets HARNESS_REQUIRE, so CI cannot pass with a wall, or
// the terminal, untested because a tool was missing or broken on the
// runner; a developer's machine without them still runs the rest.
// WithoutUserns and SmallDisk go the other way: they simulate a machine
// without user namespaces and a full disk, so the tests of what harness
// does there run everywhere (as root, for the disk).
//
// Only tests import it.
package testenv

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// RequireEnv lists the required features, comma separated; "all" requires
// every one.
const RequireEnv = "HARNESS_REQUIRE"

// The features tests may need.
const (
	Bwrap    = "bwrap"    // a bwrap that can build a sandbox
	Landlock = "landlock" // a kernel with Landlock
	Userns   = "userns"   // unprivileged user namespaces that work
	Tmux     = "tmux"
	Setpriv  = "setpriv" // util-linux's setpriv, to run tests unprivileged
	Git      = "git"
	Curl     = "curl"    // the network tests fetch through the proxy with it
	Root     = "root"    // running as uid 0 (mounts, setpriv)
	Docker   = "docker"  // a Docker engine that answers, and HARNESS_TEST_IMAGE built (see .ci/run)
	MCPNpm   = "mcp-npm" // node and the reference MCP servers installed with npm in HARNESS_MCP_NPM (see .ci/run)
	ACPNpm   = "acp-npm" // node and the official ACP SDK installed with npm in HARNESS_ACP_NPM (see .ci/run)
	// MCPConformance: the official MCP conformance suite and a Node.js it
	// runs on, installed with npm in HARNESS_MCP_CONFORMANCE_NPM (see .ci/run).
	MCPConformance = "mcp-conformance"
	Gopls          = "gopls"   // gopls on PATH, the language server of the diagnostics tests (.ci/run installs it pinned)
	Python3        = "python3" // python3 on PATH: tests make system calls by descriptor with it
)

// Required reports whether HARNESS_REQUIRE names feature.
func Required(feature string) bool {
	for _, f := range strings.Split(os.Getenv(RequireEnv), ",") {
		f = strings.TrimSpace(f)
		if f == feature || f == "all" {
			return true
		}
	}
	return false
}

// Missing is called by a test that found feature unavailable: it fails
// the test when feature is required, and skips it otherwise. why says what
// is missing and how to get it.
func Missing(t testing.TB, feature, why string) {
	t.Helper()
	if Required(feature) {
		t.Fatalf("%s is required here (%s=%s) but unavailable: %s", feature, RequireEnv, os.Getenv(RequireEnv), why)
	}
	t.Skipf("%s unavailable: %s (set %s=%s to make this a failure)", feature, why, RequireEnv, feature)
}

// NeedRoot skips (or fails, when root is required) unless the test runs
// as uid 0.
func NeedRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		Missing(t, Root, "the test needs uid 0")
	}
}

// Features is every feature name, for checking HARNESS_REQUIRE's spelling.
var Features = []string{Bwrap, Landlock, Userns, Tmux, Setpriv, Git, Curl, Root, Docker, MCPNpm, ACPNpm, MCPConformance, Gopls, Python3}

// Unknown returns the names in HARNESS_REQUIRE that are no feature, so a
// typo cannot turn a requirement into nothing.
func Unknown() []string {
	var out []string
	for _, f := range strings.Split(os.Getenv(RequireEnv), ",") {
		if f = strings.TrimSpace(f); f != "" && f != "all" && !slices.Contains(Features, f) {
			out = append(out, f)
		}
	}
	return out
}

// Slow skips t in a -short run: a test of many seconds (kernel-heavy,
// a whole battery, a real server started again and again), which the
// full suite, and CI, still run. A developer's loop stays short.
func Slow(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("slow: not in -short (the full suite and CI run it)")
	}
}
