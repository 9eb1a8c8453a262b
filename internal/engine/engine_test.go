package engine

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"
)

// TestNew: the client goes where DOCKER_HOST says, or where the caller
// says (podman's socket) over it, and speaks the API version
// DOCKER_API_VERSION fixes, else the lower of the engine's and the
// client's; an engine older than the client's floor is refused by a ping
// that negotiates.
func TestNew(t *testing.T) {
	for _, tc := range []struct {
		name, engine, env string
		byArg             bool   // the host given to New, DOCKER_HOST elsewhere
		want              string // the version in the paths, or the error
	}{
		{name: "negotiated down", engine: "1.41", want: "/v1.41/exec/done/json"},
		{name: "by argument", engine: "1.41", byArg: true, want: "/v1.41/exec/done/json"},
		{name: "capped at the client's", engine: "1.99", want: "/v" + client.MaxAPIVersion + "/exec/done/json"},
		{name: "an engine that says none", engine: "", want: "/v" + client.MaxAPIVersion + "/exec/done/json"},
		{name: "fixed by DOCKER_API_VERSION", engine: "1.43", env: "1.44", want: "/v1.44/exec/done/json"},
		{name: "too old an engine", engine: "1.30", want: "minimum supported API version is " + client.MinAPIVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeEngine(t)
			f.version = tc.engine
			host := f.listenUnix()
			t.Setenv(client.EnvOverrideAPIVersion, tc.env)
			t.Setenv(client.EnvOverrideCertPath, "")
			arg := ""
			if tc.byArg {
				t.Setenv(client.EnvOverrideHost, noEngine(t))
				arg = host
			} else {
				t.Setenv(client.EnvOverrideHost, host)
			}
			c, err := New(arg)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()
			if _, err := c.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
				if !strings.HasPrefix(tc.want, "/") && strings.Contains(err.Error(), tc.want) {
					return
				}
				t.Fatalf("ping: %v", err)
			}
			if _, err := c.ExecInspect(ctx, "done", client.ExecInspectOptions{}); err != nil {
				t.Fatal(err)
			}
			if seen := f.seen(); !slices.Contains(seen, "GET "+tc.want) {
				t.Errorf("requests %q, want GET %s", seen, tc.want)
			}
		})
	}
}

// TestSSHHost: an ssh:// engine, which only the docker CLI reaches (its
// own ssh helper), is refused at once with the way round it, not looked
// up as a TCP name.
func TestSSHHost(t *testing.T) {
	t.Setenv(client.EnvOverrideHost, "ssh://me@build-box")
	for _, arg := range []string{"", "ssh://me@other"} {
		if _, err := New(arg); err == nil || !strings.Contains(err.Error(), "ssh -L") {
			t.Errorf("New(%q) with DOCKER_HOST=ssh://: %v, want a refusal saying to forward the socket", arg, err)
		}
	}
	t.Setenv(client.EnvOverrideHost, "")
	if _, err := New("unix:///run/x.sock"); err != nil {
		t.Errorf("a unix socket: %v", err)
	}
}

// TestUnreachable: no engine at the address is a connection failure
// that names where harness looked.
func TestUnreachable(t *testing.T) {
	host := noEngine(t)
	c, err := New(host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Ping(context.Background(), client.PingOptions{NegotiateAPIVersion: true})
	if !client.IsErrConnectionFailed(err) || !strings.Contains(err.Error(), host) {
		t.Errorf("got %v, want a connection failure naming %s", err, host)
	}
}

// TestRun: an exec run to its end, its output split by stream; and the
// two steps that stop one whose context ends: the container backend's
// (its stdin's end, which its supervisor obeys) and batch's (an
// interrupt, then a kill after the grace, for a command that ignores
// the interrupt).
func TestRun(t *testing.T) {
	for _, tc := range []struct {
		name, exec string
		timeout    time.Duration // for the context; 0: none
		hardKills  bool          // Hard kills the exec; else it closes the stream
		code       int
		forced     bool
		soft       int
		stdout     string
	}{
		{name: "ends by itself", exec: "done", code: 3, stdout: "out\n"},
		{name: "stdin's end stops it", exec: "cat", timeout: 100 * time.Millisecond, code: 3, soft: 1, stdout: "out\n"},
		{name: "killed after the grace", exec: "deaf", timeout: 100 * time.Millisecond, hardKills: true, code: 137, forced: true, soft: 1, stdout: "out\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeEngine(t)
			c, err := New(f.listenUnix())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			soft := 0
			stop := Stop{
				Soft:  func(_ string, att *client.HijackedResponse) { soft++; att.CloseWrite() },
				Hard:  func(_ string, att *client.HijackedResponse) { att.Close() },
				Grace: 300 * time.Millisecond,
			}
			if tc.hardKills {
				stop.Hard = func(id string, _ *client.HijackedResponse) { f.kill(id) }
			}
			var out, errOut bytes.Buffer
			code, forced, err := Run(ctx, c, tc.exec, &out, &errOut, stop)
			if err != nil || code != tc.code || forced != tc.forced || soft != tc.soft {
				t.Errorf("code %d, forced %v, soft %d, err %v; want %d, %v, %d", code, forced, soft, err, tc.code, tc.forced, tc.soft)
			}
			if out.String() != tc.stdout || tc.exec != "deaf" && errOut.String() != "err\n" {
				t.Errorf("stdout %q, stderr %q", out.String(), errOut.String())
			}
		})
	}
}

// TestRunNoExec: an exec the engine does not have is an error, not a
// code.
func TestRunNoExec(t *testing.T) {
	f := newFakeEngine(t)
	c, err := New(f.listenUnix())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	code, _, err := Run(context.Background(), c, "nothing", &bytes.Buffer{}, &bytes.Buffer{}, Stop{})
	if err == nil || code != -1 {
		t.Errorf("got %d, %v; want an error", code, err)
	}
}
