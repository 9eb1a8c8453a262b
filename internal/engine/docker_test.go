package engine

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/testenv"
)

// realEngine is a client of the engine DOCKER_HOST names (or the
// default), and HARNESS_TEST_IMAGE; it skips without them, or fails where
// HARNESS_REQUIRE names docker.
func realEngine(t *testing.T) (*Client, string) {
	t.Helper()
	img := os.Getenv("HARNESS_TEST_IMAGE")
	if img == "" {
		testenv.Missing(t, testenv.Docker, "HARNESS_TEST_IMAGE is not set (see .ci/run)")
	}
	c, err := New("")
	if err != nil {
		testenv.Missing(t, testenv.Docker, err.Error())
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Ping(ctx); err != nil {
		testenv.Missing(t, testenv.Docker, "the engine does not answer: "+err.Error())
	}
	if _, err := c.ImageInspect(ctx, img); err != nil {
		testenv.Missing(t, testenv.Docker, "image "+img+": "+err.Error())
	}
	return c, img
}

// TestRealEngine runs every call harness makes against the real dockerd,
// checking what the fake engine assumes of it: the version agreed, the
// statuses of refusals, the upgraded exec stream with stdin, large
// output through the demultiplexer, the exit codes, the logs.
func TestRealEngine(t *testing.T) {
	c, img := realEngine(t)
	ctx := context.Background()
	v, err := c.ServerVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := negotiate(v.APIVersion)
	if c.version != want {
		t.Errorf("agreed on %s with an engine of %s, want %s", c.version, v.APIVersion, want)
	}
	t.Logf("engine %s, API %s (min %s), agreed %s", v.Version, v.APIVersion, v.MinAPIVersion, c.version)

	if _, err := c.ImageInspect(ctx, "harness-no-such-image:0"); !errors.Is(err, ErrNotFound) {
		t.Errorf("an unknown image: %v, want ErrNotFound", err)
	}
	if _, err := c.ContainerInspect(ctx, "harness-no-such-container"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "harness-no-such-container") {
		t.Errorf("an unknown container: %v, want ErrNotFound naming it", err)
	}
	if _, err := c.ExecInspect(ctx, "0123456789abcdef"); !errors.Is(err, ErrNotFound) {
		t.Errorf("an unknown exec: %v, want ErrNotFound", err)
	}

	pids := int64(64)
	id, err := c.ContainerCreate(ctx, &ContainerConfig{
		Image: img, Entrypoint: []string{"sleep"}, Cmd: []string{"infinity"},
		Labels: map[string]string{"dev.harness.test": t.Name()},
		HostConfig: &HostConfig{
			NetworkMode: "none", CapDrop: []string{"ALL"}, SecurityOpt: []string{"no-new-privileges"}, ReadonlyRootfs: true,
			Tmpfs:     map[string]string{"/tmp": "rw,size=16m"},
			Resources: Resources{Memory: 256 << 20, PidsLimit: &pids, Ulimits: []Ulimit{{Name: "nofile", Soft: 512, Hard: 512}}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.ContainerRemove(context.Background(), id) })
	ex, err := c.ExecCreate(ctx, id, ExecConfig{Cmd: []string{"true"}})
	if !errors.Is(err, ErrConflict) {
		t.Errorf("exec in a created container: %v, %v; want ErrConflict", ex, err)
	}
	if err := c.ContainerStart(ctx, id); err != nil {
		t.Fatal(err)
	}
	in, err := c.ContainerInspect(ctx, id)
	if err != nil || !in.State.Running || in.HostConfig.NetworkMode != "none" || !in.HostConfig.ReadonlyRootfs || *in.HostConfig.PidsLimit != 64 || in.HostConfig.Memory != 256<<20 {
		t.Fatalf("inspect: %v %+v %+v", err, in.State, in.HostConfig)
	}

	run := func(cfg ExecConfig, ctx context.Context, stop Stop) (int, string, string) {
		t.Helper()
		ex, err := c.ExecCreate(context.Background(), id, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		code, _, err := Run(ctx, c, ex, &out, &errOut, stop)
		if err != nil {
			t.Fatal(err)
		}
		return code, out.String(), errOut.String()
	}
	code, out, errOut := run(ExecConfig{Cmd: []string{"sh", "-c", "echo out; echo err >&2; exit 3"}, AttachStdout: true, AttachStderr: true}, ctx, Stop{})
	if code != 3 || out != "out\n" || errOut != "err\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// Large output, both streams interleaved.
	code, out, errOut = run(ExecConfig{Cmd: []string{"sh", "-c", "head -c 3000000 /dev/zero | tr '\\0' o; head -c 1000000 /dev/zero | tr '\\0' e >&2"}, AttachStdout: true, AttachStderr: true}, ctx, Stop{})
	if code != 0 || len(out) != 3000000 || strings.Trim(out, "o") != "" || len(errOut) != 1000000 || strings.Trim(errOut, "e") != "" {
		t.Errorf("large output: exit %d, %d bytes of stdout, %d of stderr", code, len(out), len(errOut))
	}
	// stdin attached: cat runs until the context ends and Soft ends its
	// stdin, which ends it.
	rctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	soft := false
	start := time.Now()
	code, out, _ = run(ExecConfig{Cmd: []string{"sh", "-c", "echo started; cat; echo stdin ended"}, AttachStdin: true, AttachStdout: true, AttachStderr: true}, rctx,
		Stop{Soft: func(_ string, s *Stream) { soft = true; s.CloseWrite() }, Hard: func(_ string, s *Stream) { s.Close() }, Grace: 20 * time.Second})
	if code != 0 || !soft || out != "started\nstdin ended\n" || time.Since(start) > 15*time.Second {
		t.Errorf("stopped by its stdin: exit %d, soft %v, stdout %q, after %s", code, soft, out, time.Since(start))
	}
	// A command that is not there: the engine's own answer.
	code, _, _ = run(ExecConfig{Cmd: []string{"/no/such/command"}, AttachStdout: true, AttachStderr: true}, ctx, Stop{})
	if code != 126 && code != 127 {
		t.Errorf("a missing command: exit %d, want 126 or 127", code)
	}

	rc, err := c.ContainerLogs(ctx, id, "all")
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	if err := Demux(&logs, &logs, rc); err != nil {
		t.Error(err)
	}
	rc.Close()

	if err := c.ContainerRemove(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ContainerInspect(ctx, id); !errors.Is(err, ErrNotFound) {
		t.Errorf("a removed container: %v, want ErrNotFound", err)
	}
}

// TestRealEngineImages: import, build (a failed step as a
// ProgressError), remove, against the real engine.
func TestRealEngineImages(t *testing.T) {
	c, img := realEngine(t)
	ctx := context.Background()
	tag := "harness-engine-test:" + strings.ToLower(strings.ReplaceAll(time.Now().Format("150405.000000"), ".", ""))
	var tarball bytes.Buffer
	writeTar(t, &tarball, map[string]string{"Dockerfile": "FROM " + img + "\nRUN echo built > /built\n"})
	if err := c.ImageBuild(ctx, &tarball, BuildOptions{Tags: []string{tag}, Dockerfile: "Dockerfile", NetworkMode: "none"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.ImageRemove(context.Background(), tag) })
	if _, err := c.ImageInspect(ctx, tag); err != nil {
		t.Errorf("the built image: %v", err)
	}
	tarball.Reset()
	writeTar(t, &tarball, map[string]string{"Dockerfile": "FROM " + img + "\nRUN echo failing; exit 7\n"})
	err := c.ImageBuild(ctx, &tarball, BuildOptions{Tags: []string{tag + "-failed"}, Dockerfile: "Dockerfile", NetworkMode: "none"})
	var pe *ProgressError
	if !errors.As(err, &pe) || !strings.Contains(pe.Message, "7") {
		t.Errorf("a failed step: %#v", err)
	}

	imported := tag + "-imported"
	tarball.Reset()
	writeTar(t, &tarball, map[string]string{"etc/hello": "hi\n"})
	if err := c.ImageImport(ctx, &tarball, imported, "harness engine test"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ImageInspect(ctx, imported); err != nil {
		t.Errorf("the imported image: %v", err)
	}
	if err := c.ImageRemove(ctx, imported); err != nil {
		t.Error(err)
	}
	if _, err := c.ImageInspect(ctx, imported); !errors.Is(err, ErrNotFound) {
		t.Errorf("a removed image: %v", err)
	}
}

func writeTar(t *testing.T, w io.Writer, files map[string]string) {
	t.Helper()
	tw := tar.NewWriter(w)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body))}); err != nil {
			t.Fatal(err)
		}
		io.WriteString(tw, body)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
}
