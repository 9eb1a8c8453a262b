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

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"github.com/moby/moby/client/pkg/versions"

	"github.com/harness-dev/harness/internal/testenv"
)

// realEngine is a client of the engine DOCKER_HOST names (or the
// default), and HARNESS_TEST_IMAGE; it skips without them, or fails where
// HARNESS_REQUIRE names docker.
func realEngine(t *testing.T) (*client.Client, string) {
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
	if _, err := c.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		testenv.Missing(t, testenv.Docker, "the engine does not answer: "+err.Error())
	}
	if _, err := c.ImageInspect(ctx, img); err != nil {
		testenv.Missing(t, testenv.Docker, "image "+img+": "+err.Error())
	}
	return c, img
}

// TestRealEngine runs what harness asks of the engine against the real
// one: the version agreed, the refusals harness decides by (not found,
// conflict), Run on the upgraded exec stream with stdin, large output
// through the demultiplexer, the exit codes, the logs.
func TestRealEngine(t *testing.T) {
	c, img := realEngine(t)
	ctx := context.Background()
	v, err := c.ServerVersion(ctx, client.ServerVersionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := client.MaxAPIVersion
	if versions.LessThan(v.APIVersion, want) {
		want = v.APIVersion
	}
	if os.Getenv(client.EnvOverrideAPIVersion) == "" && c.ClientVersion() != want {
		t.Errorf("agreed on %s with an engine of %s, want %s", c.ClientVersion(), v.APIVersion, want)
	}
	t.Logf("engine %s, API %s (min %s), agreed %s", v.Version, v.APIVersion, v.MinAPIVersion, c.ClientVersion())

	if _, err := c.ImageInspect(ctx, "harness-no-such-image:0"); !cerrdefs.IsNotFound(err) {
		t.Errorf("an unknown image: %v, want not found", err)
	}
	if _, err := c.ContainerInspect(ctx, "harness-no-such-container", client.ContainerInspectOptions{}); !cerrdefs.IsNotFound(err) || !strings.Contains(err.Error(), "harness-no-such-container") {
		t.Errorf("an unknown container: %v, want not found, naming it", err)
	}
	if _, err := c.ExecInspect(ctx, "0123456789abcdef", client.ExecInspectOptions{}); !cerrdefs.IsNotFound(err) {
		t.Errorf("an unknown exec: %v, want not found", err)
	}

	pids := int64(64)
	res, err := c.ContainerCreate(ctx, client.ContainerCreateOptions{
		Config: &container.Config{Image: img, Entrypoint: []string{"sleep"}, Cmd: []string{"infinity"},
			Labels: map[string]string{"dev.harness.test": t.Name()}},
		HostConfig: &container.HostConfig{
			NetworkMode: "none", CapDrop: []string{"ALL"}, SecurityOpt: []string{"no-new-privileges"}, ReadonlyRootfs: true,
			Tmpfs: map[string]string{"/tmp": "rw,size=16m"},
			Resources: container.Resources{Memory: 256 << 20, PidsLimit: &pids,
				Ulimits: []*container.Ulimit{{Name: "nofile", Soft: 512, Hard: 512}}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	id := res.ID
	t.Cleanup(func() { c.ContainerRemove(context.Background(), id, client.ContainerRemoveOptions{Force: true}) })
	if ex, err := c.ExecCreate(ctx, id, client.ExecCreateOptions{Cmd: []string{"true"}}); !cerrdefs.IsConflict(err) {
		t.Errorf("exec in a created container: %v, %v; want a conflict", ex, err)
	}
	if _, err := c.ContainerStart(ctx, id, client.ContainerStartOptions{}); err != nil {
		t.Fatal(err)
	}
	in, err := c.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if hc := in.Container.HostConfig; err != nil || !in.Container.State.Running || hc.NetworkMode != "none" || !hc.ReadonlyRootfs || *hc.PidsLimit != 64 || hc.Memory != 256<<20 {
		t.Fatalf("inspect: %v %+v %+v", err, in.Container.State, hc)
	}
	runExecs(t, c, id)

	rc, err := c.ContainerLogs(ctx, id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true, Tail: "all"})
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	if _, err := stdcopy.StdCopy(&logs, &logs, rc); err != nil {
		t.Error(err)
	}
	rc.Close()

	if _, err := c.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ContainerInspect(ctx, id, client.ContainerInspectOptions{}); !cerrdefs.IsNotFound(err) {
		t.Errorf("a removed container: %v, want not found", err)
	}
}

// runExecs runs execs in the running container id through Run.
func runExecs(t *testing.T, c *client.Client, id string) {
	run := func(opts client.ExecCreateOptions, ctx context.Context, stop Stop) (int, string, string) {
		t.Helper()
		ex, err := c.ExecCreate(context.Background(), id, opts)
		if err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		code, _, err := Run(ctx, c, ex.ID, &out, &errOut, stop)
		if err != nil {
			t.Fatal(err)
		}
		return code, out.String(), errOut.String()
	}
	ctx := context.Background()
	code, out, errOut := run(client.ExecCreateOptions{Cmd: []string{"sh", "-c", "echo out; echo err >&2; exit 3"}, AttachStdout: true, AttachStderr: true}, ctx, Stop{})
	if code != 3 || out != "out\n" || errOut != "err\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// Large output, both streams interleaved.
	code, out, errOut = run(client.ExecCreateOptions{Cmd: []string{"sh", "-c", "head -c 3000000 /dev/zero | tr '\\0' o; head -c 1000000 /dev/zero | tr '\\0' e >&2"}, AttachStdout: true, AttachStderr: true}, ctx, Stop{})
	if code != 0 || len(out) != 3000000 || strings.Trim(out, "o") != "" || len(errOut) != 1000000 || strings.Trim(errOut, "e") != "" {
		t.Errorf("large output: exit %d, %d bytes of stdout, %d of stderr", code, len(out), len(errOut))
	}
	// stdin attached: cat runs until the context ends and Soft ends its
	// stdin, which ends it (the container backend's stop).
	rctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	soft := false
	start := time.Now()
	code, out, _ = run(client.ExecCreateOptions{Cmd: []string{"sh", "-c", "echo started; cat; echo stdin ended"}, AttachStdin: true, AttachStdout: true, AttachStderr: true}, rctx,
		Stop{Soft: func(_ string, s *client.HijackedResponse) { soft = true; s.CloseWrite() }, Hard: func(_ string, s *client.HijackedResponse) { s.Close() }, Grace: 20 * time.Second})
	if code != 0 || !soft || out != "started\nstdin ended\n" || time.Since(start) > 15*time.Second {
		t.Errorf("stopped by its stdin: exit %d, soft %v, stdout %q, after %s", code, soft, out, time.Since(start))
	}
	// A command that is not there: the engine's own answer.
	code, _, _ = run(client.ExecCreateOptions{Cmd: []string{"/no/such/command"}, AttachStdout: true, AttachStderr: true}, ctx, Stop{})
	if code != 126 && code != 127 {
		t.Errorf("a missing command: exit %d, want 126 or 127", code)
	}
}

// TestRealEngineImages: build (a failed step a ProgressError), import,
// remove, against the real engine, as the container backend asks.
func TestRealEngineImages(t *testing.T) {
	c, img := realEngine(t)
	ctx := context.Background()
	tag := "harness-engine-test:" + strings.ToLower(strings.ReplaceAll(time.Now().Format("150405.000000"), ".", ""))
	build := func(dockerfile, tag string) error {
		var tarball bytes.Buffer
		writeTar(t, &tarball, map[string]string{"Dockerfile": dockerfile})
		res, err := c.ImageBuild(ctx, &tarball, client.ImageBuildOptions{Tags: []string{tag}, Dockerfile: "Dockerfile", NetworkMode: "none", Remove: true, ForceRemove: true})
		if err != nil {
			return err
		}
		return Progress(res.Body)
	}
	if err := build("FROM "+img+"\nRUN echo built > /built\n", tag); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.ImageRemove(context.Background(), tag, client.ImageRemoveOptions{Force: true}) })
	if _, err := c.ImageInspect(ctx, tag); err != nil {
		t.Errorf("the built image: %v", err)
	}
	err := build("FROM "+img+"\nRUN echo failing; exit 7\n", tag+"-failed")
	var pe *ProgressError
	if !errors.As(err, &pe) || !strings.Contains(pe.Message, "7") {
		t.Errorf("a failed step: %#v", err)
	}

	imported := tag + "-imported"
	var tarball bytes.Buffer
	writeTar(t, &tarball, map[string]string{"etc/hello": "hi\n"})
	res, err := c.ImageImport(ctx, client.ImageImportSource{Source: &tarball, SourceName: "-"}, imported, client.ImageImportOptions{Message: "harness engine test"})
	if err == nil {
		err = Progress(res)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ImageInspect(ctx, imported); err != nil {
		t.Errorf("the imported image: %v", err)
	}
	if _, err := c.ImageRemove(ctx, imported, client.ImageRemoveOptions{Force: true}); err != nil {
		t.Error(err)
	}
	if _, err := c.ImageInspect(ctx, imported); !cerrdefs.IsNotFound(err) {
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
