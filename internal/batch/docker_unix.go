//go:build !windows

package batch

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/harness-dev/harness/internal/engine"
)

// Docker runs each task in a container of its own: one long-lived
// container per task, every command of the task (setup, the agent, the
// diff, the check) an exec in it. The checkout is made on the host, as
// with Local, and bind-mounted at the same path; the harness binary is
// mounted read-only, so any image with a shell, git and the project's
// toolchain will do. Inside, harness puts up its own walls around each
// command as usual (Landlock and seccomp: a container has no user
// namespaces for bwrap), so the agent's commands sit behind two layers.
//
// The container runs as the calling user with every capability dropped,
// no-new-privileges, a read-only root filesystem with a private /tmp,
// and pids and memory limits. Network: the agent itself must reach the
// model, so the container gets Network ("bridge" unless set; "host" for a
// model server on this machine's loopback); the agent's commands still
// get none.
type Docker struct {
	Local        // Root, Args, CheckTimeout as for Local; Harness is the binary mounted in
	Image string // the image tasks run in
	// Network is the container's network mode; empty: bridge.
	Network string
	// Env is KEY=VALUE settings for harness inside (model, provider,
	// prices); EnvFile, when set, is mounted read-only as its
	// ~/.agents/env, which is how an API key gets in without showing in
	// `docker inspect`.
	Env     []string
	EnvFile string
	Memory  int64 // bytes; zero: 4 GiB
	Pids    int64 // zero: 4096

	cli *client.Client
}

// Connect reaches the engine from the environment (DOCKER_HOST and
// friends) and checks the image is there.
func (d *Docker) Connect(ctx context.Context) error {
	cli, err := engine.New("")
	if err != nil {
		return fmt.Errorf("docker: %w", err)
	}
	if _, err := cli.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		cli.Close()
		return fmt.Errorf("docker: the engine does not answer (is dockerd running? DOCKER_HOST?): %w", err)
	}
	if _, err := cli.ImageInspect(ctx, d.Image); err != nil {
		cli.Close()
		return fmt.Errorf("docker: image %q: %w (build or pull it first; see docs/batch.md)", d.Image, err)
	}
	d.cli = cli
	return nil
}

// harnessInside is where the harness binary is mounted.
const harnessInside = "/usr/local/bin/harness"

// homeInside is the container's HOME, a per-task directory on the host
// (so the task's session log outlives the container).
const homeInside = "/harness-home"

func (d *Docker) Run(ctx context.Context, t Task, lim Limits) Result {
	if d.cli == nil {
		return Result{ID: t.ID, Status: SetupFailed, Error: "docker: not connected"}
	}
	ws := filepath.Join(d.Root, t.ID)
	home := ws + ".home"
	// The checkout happens in run; the container needs the directory to
	// exist first to bind it, and run clears it. So create the container
	// lazily, on the first exec, after the checkout.
	m := &dockerMachine{d: d, task: t.ID, ws: ws, home: home}
	defer m.close()
	return d.run(ctx, t, lim, m, harnessInside, d.Args)
}

type dockerMachine struct {
	d        *Docker
	task     string
	ws, home string
	id       string
	user     string
}

func (m *dockerMachine) start(ctx context.Context) error {
	if m.id != "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Join(m.home, ".agents"), 0o700); err != nil {
		return err
	}
	m.user = strconv.Itoa(os.Getuid()) + ":" + strconv.Itoa(os.Getgid())
	binds := []string{
		m.ws + ":" + m.ws + ":rw",
		m.home + ":" + homeInside + ":rw",
		m.d.Harness + ":" + harnessInside + ":ro",
	}
	if m.d.EnvFile != "" {
		if _, err := os.Stat(m.d.EnvFile); err == nil {
			binds = append(binds, m.d.EnvFile+":"+homeInside+"/.agents/env:ro")
		}
	}
	mem, pids := m.d.Memory, m.d.Pids
	if mem == 0 {
		mem = 4 << 30
	}
	if pids == 0 {
		pids = 4096
	}
	network := m.d.Network
	if network == "" {
		network = "bridge"
	}
	init := true
	res, err := m.d.cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Config: &container.Config{
			Image:      m.d.Image,
			Cmd:        []string{"sleep", "infinity"},
			User:       m.user,
			Env:        append([]string{"HOME=" + homeInside}, m.d.Env...),
			WorkingDir: m.ws,
			Labels:     map[string]string{"dev.harness.batch.task": m.task},
		},
		HostConfig: &container.HostConfig{
			Binds:          binds,
			NetworkMode:    container.NetworkMode(network),
			CapDrop:        []string{"ALL"},
			SecurityOpt:    []string{"no-new-privileges"},
			ReadonlyRootfs: true,
			Tmpfs:          map[string]string{"/tmp": "rw,nosuid,size=2g", "/var/tmp": "rw,nosuid,size=1g"},
			Init:           &init,
			Resources:      container.Resources{Memory: mem, PidsLimit: &pids},
		},
	})
	if err != nil {
		return fmt.Errorf("docker: creating the task's container: %w", err)
	}
	m.id = res.ID
	if _, err := m.d.cli.ContainerStart(ctx, m.id, client.ContainerStartOptions{}); err != nil {
		return fmt.Errorf("docker: starting the task's container: %w", err)
	}
	return nil
}

func (m *dockerMachine) close() {
	if m.id != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = m.d.cli.ContainerRemove(ctx, m.id, client.ContainerRemoveOptions{Force: true})
	}
}

func (m *dockerMachine) exec(ctx context.Context, argv []string, dir string, stdout, stderr io.Writer) (int, error) {
	if err := m.start(context.WithoutCancel(ctx)); err != nil {
		return -1, err
	}
	bg := context.WithoutCancel(ctx)
	ex, err := m.d.cli.ExecCreate(bg, m.id, client.ExecCreateOptions{
		Cmd: argv, WorkingDir: dir, User: m.user, AttachStdout: true, AttachStderr: true,
	})
	if err != nil {
		return -1, fmt.Errorf("docker exec: %w", err)
	}
	// As on the host: an interrupt first, so harness saves its session; a
	// kill after the grace period. An exec has no API of its own for
	// signals: its process is signalled by its host pid.
	code, _, err := engine.Run(ctx, m.d.cli, ex.ID, stdout, stderr, engine.Stop{
		Soft:  func(id string, _ *client.HijackedResponse) { m.signal(bg, id, syscall.SIGINT) },
		Hard:  func(id string, _ *client.HijackedResponse) { m.signal(bg, id, syscall.SIGKILL) },
		Grace: interruptGrace,
	})
	if err != nil {
		return -1, fmt.Errorf("docker %w", err)
	}
	return code, nil
}

func (m *dockerMachine) signal(ctx context.Context, execID string, sig syscall.Signal) {
	if in, err := m.d.cli.ExecInspect(ctx, execID, client.ExecInspectOptions{}); err == nil && in.Running && in.PID > 0 {
		_ = syscall.Kill(in.PID, sig)
	}
}
