package batch

import (
	"context"
	"errors"
)

// Docker is not available on Windows builds: the executor signals its
// commands by host pid.
type Docker struct {
	Local
	Image, Network, EnvFile string
	Env                     []string
	Memory, Pids            int64
}

func (d *Docker) Connect(context.Context) error {
	return errors.New("docker: the Docker executor is not supported on Windows")
}

func (d *Docker) Run(_ context.Context, t Task, _ Limits) Result {
	return Result{ID: t.ID, Status: SetupFailed, Error: "docker: not supported on Windows"}
}
