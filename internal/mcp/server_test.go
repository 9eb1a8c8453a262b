package mcp

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/mcp/mcptest"
	"github.com/harness-dev/harness/internal/sandbox"
	"github.com/harness-dev/harness/internal/sandbox/linux/inner"
	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// serverEnv, set, makes the test binary an MCP server over stdio (the Go
// server built with the SDK); its value picks the tool set.
const serverEnv = mcptest.KindEnv

// TestMain lets the test binary serve as the sandbox's helper and as the
// Go MCP server the tests start inside the walls.
func TestMain(m *testing.M) {
	inner.RunHelperIfRequested()
	mcptest.RunIfRequested()
	os.Exit(m.Run())
}

// fixture is a project, a home with a secret, and a copy of the test
// binary outside /tmp (the sandbox has a private /tmp), to run as the Go
// server.
type fixture struct {
	base, proj, home, bin string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	base, err := os.MkdirTemp("/var/tmp", "harness-mcp-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	f := fixture{base: base, proj: filepath.Join(base, "proj"), home: filepath.Join(base, "home"), bin: filepath.Join(base, "bin", "mcp-test-server")}
	for _, d := range []string{f.proj, filepath.Join(f.home, ".ssh"), filepath.Dir(f.bin)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(f.home, ".ssh", "id_ed25519"), []byte("SECRET-KEY-MATERIAL"), 0o600)
	os.MkdirAll(filepath.Join(f.home, ".agents"), 0o700)
	os.WriteFile(AuthFile(f.home), []byte(`{"x":{"token":{"access_token":"OAUTH-TOKEN-MATERIAL"}}}`), 0o600)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	copyFile(t, exe, f.bin)
	return f
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	out.Close()
}

// goServer is the definition of the Go server of kind.
func (f fixture) goServer(name, kind string) Server {
	return Server{Name: name, Command: f.bin, Env: map[string]string{serverEnv: kind}, Scope: ScopeUser}
}

// open opens a sandbox for the fixture's project with backend.
func (f fixture) open(t *testing.T, backend string) sandbox.Sandbox {
	t.Helper()
	pol, err := walls.NewPolicy(walls.PolicyOptions{Project: f.proj, Home: f.home, Environ: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + f.home, "SECRET_TOKEN=from-the-host"}})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.Open(context.Background(), walls.NewLive(pol), backend)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return sb
}

func start(t *testing.T, sb sandbox.Sandbox, o Options, defs ...Server) *Manager {
	t.Helper()
	o.Sandbox = sb
	if o.StartTimeout == 0 {
		o.StartTimeout = 60 * time.Second
	}
	m, errs := Start(context.Background(), defs, o)
	t.Cleanup(m.Close)
	for _, err := range errs {
		t.Fatalf("start: %v", err)
	}
	return m
}
