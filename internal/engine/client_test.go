package engine

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"math/big"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestNew: the hosts harness reaches, and those it says it cannot.
func TestNew(t *testing.T) {
	for _, tc := range []struct {
		host, env           string
		network, addr, base string
		err                 string
	}{
		{host: "unix:///var/run/docker.sock", network: "unix", addr: "/var/run/docker.sock"},
		{host: "", env: "unix:///run/user/1000/docker.sock", network: "unix", addr: "/run/user/1000/docker.sock"},
		{host: "", network: "unix", addr: "/var/run/docker.sock"},
		{host: "unix:///given.sock", env: "unix:///ignored.sock", network: "unix", addr: "/given.sock"},
		{host: "tcp://10.0.0.1:2375", network: "tcp", addr: "10.0.0.1:2375"},
		{host: "tcp://engine.example:2376/base/", network: "tcp", addr: "engine.example:2376", base: "/base"},
		{host: "ssh://me@engine.example", err: "ssh:// is not supported"},
		{host: "npipe:////./pipe/docker_engine", err: "npipe:// is not supported"},
		{host: "fd://", err: "want unix:///path"},
		{host: "/var/run/docker.sock", err: "want unix:///path"},
		{host: "http://engine:2375", err: `unknown scheme "http"`},
	} {
		t.Run(tc.host+"|"+tc.env, func(t *testing.T) {
			t.Setenv(EnvHost, tc.env)
			c, err := New(tc.host)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, want an error saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.network != tc.network || c.addr != tc.addr || c.basePath != tc.base {
				t.Errorf("dials %s %s, base %q; want %s %s, %q", c.network, c.addr, c.basePath, tc.network, tc.addr, tc.base)
			}
		})
	}
}

// TestNegotiate: the lower of the engine's version and ours, never one
// below our floor.
func TestNegotiate(t *testing.T) {
	for _, tc := range []struct{ engine, want, err string }{
		{engine: "1.41", want: "1.41"},
		{engine: "1.40", want: "1.40"},
		{engine: "1.44", want: "1.44"},
		{engine: MaxAPIVersion, want: MaxAPIVersion},
		{engine: "1.99", want: MaxAPIVersion},
		{engine: "2.0", want: MaxAPIVersion},
		{engine: "", want: MaxAPIVersion},
		{engine: "1.39", err: "needs 1.40 or newer"},
		{engine: "1.9", err: "needs 1.40 or newer"},
		{engine: "one.41", err: "want MAJOR.MINOR"},
		{engine: "1", err: "want MAJOR.MINOR"},
	} {
		got, err := negotiate(tc.engine)
		if got != tc.want || (tc.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("negotiate(%q) = %q, %v; want %q, %q", tc.engine, got, err, tc.want, tc.err)
		}
	}
}

// TestVersionInPaths: every request after the first ping carries the
// agreed version, and the ping happens once.
func TestVersionInPaths(t *testing.T) {
	for _, tc := range []struct {
		name, engine, env, want string
	}{
		{name: "older engine", engine: "1.41", want: "/v1.41/"},
		{name: "newer engine", engine: "1.70", want: "/v" + MaxAPIVersion + "/"},
		{name: "DOCKER_API_VERSION", engine: "1.70", env: "1.43", want: "/v1.43/"},
		{name: "DOCKER_API_VERSION with v", engine: "1.70", env: "v1.44", want: "/v1.44/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnvAPIVersion, tc.env)
			f := newFakeEngine(t)
			f.version = tc.engine
			c := f.client()
			ctx := context.Background()
			for range 2 {
				if _, err := c.ServerVersion(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := c.ImageInspect(ctx, "base:1"); err != nil {
				t.Fatal(err)
			}
			seen := f.seen()
			pings := 0
			for _, p := range seen {
				if strings.HasSuffix(p, "/_ping") {
					pings++
				} else if !strings.Contains(p, tc.want) {
					t.Errorf("%s: want %s in the path", p, tc.want)
				}
			}
			if want := map[bool]int{true: 0, false: 1}[tc.env != ""]; pings != want {
				t.Errorf("%d pings, want %d: %q", pings, want, seen)
			}
		})
	}
	t.Run("bad DOCKER_API_VERSION", func(t *testing.T) {
		t.Setenv(EnvAPIVersion, "latest")
		if _, err := New("unix:///x.sock"); err == nil || !strings.Contains(err.Error(), EnvAPIVersion) {
			t.Errorf("got %v", err)
		}
	})
	t.Run("too old an engine", func(t *testing.T) {
		f := newFakeEngine(t)
		f.version = "1.30"
		c := f.client()
		if _, err := c.ContainerInspect(context.Background(), "c1"); err == nil || !strings.Contains(err.Error(), "harness needs 1.40") {
			t.Errorf("got %v", err)
		}
		if seen := f.seen(); len(seen) != 1 {
			t.Errorf("requests after a failed negotiation: %q", seen)
		}
	})
}

// TestTCPBasePath: a tcp:// host's path prefixes every request, /_ping's
// too.
func TestTCPBasePath(t *testing.T) {
	f := newFakeEngine(t)
	f.prefix = "/engine"
	srv := httptest.NewServer(f)
	defer srv.Close()
	c, err := New("tcp://" + srv.Listener.Addr().String() + "/engine")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.ImageInspect(context.Background(), "base:1"); err != nil {
		t.Fatal(err)
	}
	if seen := f.seen(); !slices.Equal(seen, []string{"GET /engine/_ping", "GET /engine/v1.41/images/base:1/json"}) {
		t.Errorf("requests %q", seen)
	}
}

// TestErrors: the engine's refusals are typed by status, with its
// message; an engine that is not there says so.
func TestErrors(t *testing.T) {
	f := newFakeEngine(t)
	c := f.client()
	ctx := context.Background()
	id, err := c.ContainerCreate(ctx, &ContainerConfig{Image: "base:1", Cmd: []string{"sleep", "infinity"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		call   func() error
		is     error
		status int
		msg    string
	}{
		{"inspect an unknown container", func() error { _, err := c.ContainerInspect(ctx, "nope"); return err }, ErrNotFound, 404, "No such container: nope"},
		{"start an unknown container", func() error { return c.ContainerStart(ctx, "nope") }, ErrNotFound, 404, "No such container: nope"},
		{"remove an unknown container", func() error { return c.ContainerRemove(ctx, "nope") }, ErrNotFound, 404, "No such container: nope"},
		{"an unknown image", func() error { _, err := c.ImageInspect(ctx, "missing:1"); return err }, ErrNotFound, 404, "No such image: missing:1"},
		{"create from an unknown image", func() error { _, err := c.ContainerCreate(ctx, &ContainerConfig{Image: "missing:1"}); return err }, ErrNotFound, 404, "No such image: missing:1"},
		{"exec in a stopped container", func() error { _, err := c.ExecCreate(ctx, id, ExecConfig{Cmd: []string{"true"}}); return err }, ErrConflict, 409, "is not running"},
		{"inspect an unknown exec", func() error { _, err := c.ExecInspect(ctx, "e99"); return err }, ErrNotFound, 404, "No such exec instance"},
		{"start an unknown exec", func() error { _, err := c.ExecAttach(ctx, "e99"); return err }, ErrNotFound, 404, "No such exec instance"},
		{"an empty id", func() error { _, err := c.ContainerInspect(ctx, " "); return err }, nil, 0, "empty id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("got %v, want %q", err, tc.msg)
			}
			var e *Error
			if tc.is == nil {
				if errors.As(err, &e) {
					t.Errorf("%v is an engine's error; it was not sent", err)
				}
				return
			}
			if !errors.Is(err, tc.is) || !errors.As(err, &e) || e.StatusCode != tc.status {
				t.Errorf("%v: want it to be %v, status %d", err, tc.is, tc.status)
			}
			for _, other := range []error{ErrNotFound, ErrConflict, ErrUnreachable} {
				if other != tc.is && errors.Is(err, other) {
					t.Errorf("%v is also %v", err, other)
				}
			}
		})
	}
}

// TestUnreachable: no engine at the socket is ErrUnreachable, saying
// where it looked.
func TestUnreachable(t *testing.T) {
	dir := t.TempDir()
	// A socket file nobody listens on: refused.
	ln, err := net.Listen("unix", filepath.Join(dir, "dead.sock"))
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	for _, host := range []string{"unix://" + filepath.Join(dir, "none.sock"), "unix://" + filepath.Join(dir, "dead.sock")} {
		c, err := New(host)
		if err != nil {
			t.Fatal(err)
		}
		err = c.Ping(context.Background())
		if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "cannot connect to the engine at "+host) {
			t.Errorf("%s: %v", host, err)
		}
		if errors.Is(err, ErrNotFound) {
			t.Errorf("%v: a missing socket is no missing object", err)
		}
		if _, err := c.ExecAttach(context.Background(), "e1"); !errors.Is(err, ErrUnreachable) {
			t.Errorf("attach: %v", err)
		}
	}
}

// TestContainerCreateBody: what the engine receives, field by field as
// its API names them: an empty Cmd stays [] (it clears the image's), a
// nil Entrypoint is null (the image's), resources inline in HostConfig.
func TestContainerCreateBody(t *testing.T) {
	f := newFakeEngine(t)
	c := f.client()
	pids := int64(100)
	init := true
	_, err := c.ContainerCreate(context.Background(), &ContainerConfig{
		Image: "base:1", Cmd: []string{}, User: "1000:1000", Labels: map[string]string{"k": "v"},
		HostConfig: &HostConfig{
			Mounts: []Mount{
				{Type: MountBind, Source: "/p", Target: "/p", ReadOnly: true, BindOptions: &BindOptions{Propagation: RPrivate}},
				{Type: MountTmpfs, Target: "/p/.ssh", ReadOnly: true, TmpfsOptions: &TmpfsOptions{SizeBytes: 4096, Mode: 0o111}},
			},
			NetworkMode: "none", CapDrop: []string{"ALL"}, ReadonlyRootfs: true, Init: &init,
			Resources: Resources{Memory: 1 << 30, PidsLimit: &pids, Ulimits: []Ulimit{{Name: "nofile", Soft: 10, Hard: 20}}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(f.bodies["create"], &got); err != nil {
		t.Fatal(err)
	}
	hc := got["HostConfig"].(map[string]any)
	m := hc["Mounts"].([]any)
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"Cmd", got["Cmd"], "[]"},
		{"Entrypoint", got["Entrypoint"], "null"},
		{"User", got["User"], `"1000:1000"`},
		{"Labels", got["Labels"], `{"k":"v"}`},
		{"Memory", hc["Memory"], "1073741824"},
		{"PidsLimit", hc["PidsLimit"], "100"},
		{"Ulimits", hc["Ulimits"], `[{"Hard":20,"Name":"nofile","Soft":10}]`},
		{"Init", hc["Init"], "true"},
		{"NetworkMode", hc["NetworkMode"], `"none"`},
		{"bind", m[0], `{"BindOptions":{"Propagation":"rprivate"},"ReadOnly":true,"Source":"/p","Target":"/p","Type":"bind"}`},
		{"tmpfs", m[1], `{"ReadOnly":true,"Target":"/p/.ssh","TmpfsOptions":{"Mode":73,"SizeBytes":4096},"Type":"tmpfs"}`},
		{"Privileged", hc["Privileged"], "null"}, // left out: the engine's default
	} {
		b, _ := json.Marshal(tc.v)
		if string(b) != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, b, tc.want)
		}
	}
}

// TestExec: create, start, exec: output demultiplexed, stdin's end
// reaching the exec, exit code from inspect; with an engine that answers
// 101 and one that answers 200.
func TestExec(t *testing.T) {
	for _, answer200 := range []bool{false, true} {
		t.Run(map[bool]string{false: "101", true: "200"}[answer200], func(t *testing.T) {
			f := newFakeEngine(t)
			f.answer200 = answer200
			c := f.client()
			ctx := context.Background()
			id, err := c.ContainerCreate(ctx, &ContainerConfig{Image: "base:1"})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.ContainerStart(ctx, id); err != nil {
				t.Fatal(err)
			}
			in, err := c.ContainerInspect(ctx, id)
			if err != nil || in.State == nil || !in.State.Running {
				t.Fatalf("inspect: %+v, %v", in, err)
			}

			// No stdin: the exec ends by itself.
			ex, err := c.ExecCreate(ctx, id, ExecConfig{Cmd: []string{"x"}, AttachStdout: true, AttachStderr: true})
			if err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			code, forced, err := Run(ctx, c, ex, &out, &errOut, Stop{Grace: time.Second})
			if err != nil || code != 3 || forced || out.String() != "out\n" || errOut.String() != "err\n" {
				t.Errorf("run: %d %v %v, stdout %q, stderr %q", code, forced, err, out.String(), errOut.String())
			}

			// With stdin: it runs until its context ends and Soft closes
			// its stdin.
			ex, err = c.ExecCreate(ctx, id, ExecConfig{Cmd: []string{"cat"}, AttachStdin: true, AttachStdout: true, AttachStderr: true})
			if err != nil {
				t.Fatal(err)
			}
			rctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			defer cancel()
			out.Reset()
			soft := 0
			code, forced, err = Run(rctx, c, ex, &out, &errOut, Stop{
				Soft:  func(_ string, s *Stream) { soft++; s.CloseWrite() },
				Hard:  func(_ string, s *Stream) { s.Close() },
				Grace: 10 * time.Second,
			})
			if err != nil || code != 3 || forced || soft != 1 || out.String() != "out\n" {
				t.Errorf("stopped run: %d %v %v, soft %d, stdout %q", code, forced, err, soft, out.String())
			}

			// The stream by hand: what is written reaches the exec.
			ex, _ = c.ExecCreate(ctx, id, ExecConfig{Cmd: []string{"cat"}, AttachStdin: true, AttachStdout: true})
			s, err := c.ExecAttach(ctx, ex)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.conn.Write([]byte("typed\n")); err != nil {
				t.Fatal(err)
			}
			s.CloseWrite()
			out.Reset()
			if err := Demux(&out, &out, s); err != nil || out.String() != "out\nerr\ntyped\n" {
				t.Errorf("demux: %v, %q", err, out.String())
			}

			rc, err := c.ContainerLogs(ctx, id, "5")
			if err != nil {
				t.Fatal(err)
			}
			out.Reset()
			Demux(&out, &out, rc)
			rc.Close()
			if out.String() != "log out\nlog err\n" {
				t.Errorf("logs %q", out.String())
			}
			if err := c.ContainerRemove(ctx, id); err != nil {
				t.Fatal(err)
			}
			if _, err := c.ContainerInspect(ctx, id); !errors.Is(err, ErrNotFound) {
				t.Errorf("after remove: %v", err)
			}
		})
	}
}

// TestExecAttachContext: a context that ends before the engine answers
// ends the start, not a stream left behind.
func TestExecAttachContext(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "mute.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// It answers /_ping, then never answers again.
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				buf := make([]byte, 4096)
				n, _ := conn.Read(buf)
				if strings.Contains(string(buf[:n]), "/_ping") {
					conn.Write([]byte("HTTP/1.1 200 OK\r\nApi-Version: 1.41\r\nContent-Length: 2\r\n\r\nOK"))
				}
			}()
		}
	}()
	c, err := New("unix://" + sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := c.ExecAttach(ctx, "e1"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v, want the context's end", err)
	}
}

// TestImageBuildAndImport: the queries and bodies the engine gets, and a
// failed build step as a ProgressError.
func TestImageBuildAndImport(t *testing.T) {
	f := newFakeEngine(t)
	c := f.client()
	ctx := context.Background()
	if err := c.ImageBuild(ctx, strings.NewReader("tar of a Dockerfile"), BuildOptions{Tags: []string{"proj:1"}, Dockerfile: "Dockerfile", NetworkMode: "none"}); err != nil {
		t.Fatal(err)
	}
	err := c.ImageBuild(ctx, strings.NewReader("tar"), BuildOptions{Tags: []string{"fail:1"}})
	var pe *ProgressError
	if !errors.As(err, &pe) || pe.Message != "The command '/bin/sh -c false' returned a non-zero code: 1" || pe.After != "Step 2/2 : RUN false" {
		t.Errorf("failed build: %#v", err)
	}
	if err := c.ImageImport(ctx, strings.NewReader("rootfs tar"), "hostfs:1", "a message"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ImageInspect(ctx, "hostfs:1"); err != nil {
		t.Errorf("imported image: %v", err)
	}
	seen := strings.Join(f.seen(), "\n")
	for _, want := range []string{
		"POST /v1.41/build?dockerfile=Dockerfile&forcerm=1&networkmode=none&t=proj%3A1",
		"POST /v1.41/images/create?fromSrc=-&message=a+message&repo=hostfs%3A1",
	} {
		if !strings.Contains(seen, want) {
			t.Errorf("want %s among:\n%s", want, seen)
		}
	}
	if string(f.bodies["import"]) != "rootfs tar" || f.headers["build"].Get("Content-Type") != "application/x-tar" {
		t.Errorf("import body %q, build content type %q", f.bodies["import"], f.headers["build"].Get("Content-Type"))
	}
}

// TestReadProgress: the engine's JSON message stream, its errors in
// either field.
func TestReadProgress(t *testing.T) {
	for _, tc := range []struct{ in, err string }{
		{in: ""},
		{in: `{"stream":"Step 1/1 : FROM x"}` + "\n" + `{"status":"done"}`},
		{in: `{"stream":"Step 1/1 : RUN false\n"}{"error":"it failed"}`, err: "it failed (after: Step 1/1 : RUN false)"},
		{in: `{"errorDetail":{"message":"detail only"}}`, err: "detail only"},
		{in: `{"errorDetail":{"message":"detail"},"error":"the error"}`, err: "the error"},
		{in: `{"stream":"half`, err: "reading the engine's progress"},
		{in: `not json`, err: "reading the engine's progress"},
	} {
		err := readProgress(strings.NewReader(tc.in))
		if (tc.err == "") != (err == nil) || err != nil && err.Error() != tc.err && !strings.HasPrefix(err.Error(), tc.err) {
			t.Errorf("%q: got %v, want %q", tc.in, err, tc.err)
		}
	}
}

// TestTLSFromEnv: DOCKER_CERT_PATH without its files is an error that
// names it; without DOCKER_CERT_PATH there is no TLS.
func TestTLSFromEnv(t *testing.T) {
	t.Setenv(EnvCertPath, "")
	if c, err := New("tcp://127.0.0.1:2375"); err != nil || c.tls != nil {
		t.Errorf("no cert path: %v, %v", c, err)
	}
	dir := t.TempDir()
	t.Setenv(EnvCertPath, dir)
	if _, err := New("tcp://127.0.0.1:2376"); err == nil || !strings.Contains(err.Error(), EnvCertPath) {
		t.Errorf("missing certificates: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "ca.pem"), []byte("not pem"), 0o644)
	if _, err := New("tcp://127.0.0.1:2376"); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("bad ca.pem: %v", err)
	}
}

// TestTLS: DOCKER_CERT_PATH's certificates, the server's checked with
// DOCKER_TLS_VERIFY, for requests and for an exec's stream, whose stdin's
// end reaches the engine through TLS.
func TestTLS(t *testing.T) {
	f := newFakeEngine(t)
	srv := httptest.NewUnstartedServer(f)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake below
	srv.StartTLS()
	defer srv.Close()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ca.pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "harness"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	os.WriteFile(filepath.Join(dir, "cert.pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(filepath.Join(dir, "key.pem"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	t.Setenv(EnvCertPath, dir)
	t.Setenv(EnvTLSVerify, "1")
	c, err := New("tcp://" + srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	id, err := c.ContainerCreate(ctx, &ContainerConfig{Image: "base:1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ContainerStart(ctx, id); err != nil {
		t.Fatal(err)
	}
	ex, err := c.ExecCreate(ctx, id, ExecConfig{Cmd: []string{"cat"}, AttachStdin: true, AttachStdout: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.ExecAttach(ctx, ex)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok := s.conn.(*tls.Conn); !ok {
		t.Fatalf("the stream is a %T, not TLS", s.conn)
	}
	s.conn.Write([]byte("over tls\n"))
	if err := s.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- Demux(&out, &out, s) }()
	select {
	case err := <-done:
		if err != nil || out.String() != "out\nerr\nover tls\n" {
			t.Errorf("%v, %q", err, out.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the engine did not see stdin end through TLS")
	}

	// The server's certificate not among ca.pem's: refused, when checked.
	os.WriteFile(filepath.Join(dir, "ca.pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	c2, err := New("tcp://" + srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if err := c2.Ping(ctx); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("an unknown server certificate: %v", err)
	}
}
