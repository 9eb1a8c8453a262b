package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
)

// The request and answer bodies harness uses, a subset of the Engine
// API's (https://docs.docker.com/reference/api/engine/), with its field
// names. A field left out is the engine's default.

// ContainerConfig is the body of POST /containers/create: the
// container's configuration and, in HostConfig, the host's side of it.
type ContainerConfig struct {
	Image string
	// Entrypoint and Cmd replace the image's: nil keeps the image's,
	// an empty list clears it (so no omitempty).
	Entrypoint []string
	Cmd        []string
	User       string            `json:",omitempty"`
	Env        []string          `json:",omitempty"`
	WorkingDir string            `json:",omitempty"`
	Labels     map[string]string `json:",omitempty"`
	HostConfig *HostConfig       `json:",omitempty"`
}

// HostConfig is a container's host configuration: its mounts, network,
// privileges and limits.
type HostConfig struct {
	Binds          []string          `json:",omitempty"` // host:container[:ro|rw]
	Mounts         []Mount           `json:",omitempty"`
	Tmpfs          map[string]string `json:",omitempty"` // path: mount options
	NetworkMode    string            `json:",omitempty"` // none, bridge, host
	CapAdd         []string          `json:",omitempty"`
	CapDrop        []string          `json:",omitempty"`
	Privileged     bool              `json:",omitempty"`
	SecurityOpt    []string          `json:",omitempty"` // no-new-privileges, seccomp=PROFILE
	ReadonlyRootfs bool              `json:",omitempty"`
	Init           *bool             `json:",omitempty"` // run the engine's init as PID 1
	Resources
}

// Resources are a container's cgroup and rlimit bounds (inlined in
// HostConfig).
type Resources struct {
	Memory    int64    `json:",omitempty"` // bytes
	PidsLimit *int64   `json:",omitempty"`
	Ulimits   []Ulimit `json:",omitempty"`
}

// Ulimit is one rlimit (nofile, nproc) of a container's processes.
type Ulimit struct {
	Name       string
	Soft, Hard int64
}

// Mount types and the one bind propagation harness uses.
const (
	MountBind  = "bind"
	MountTmpfs = "tmpfs"
	RPrivate   = "rprivate"
)

// Mount is one entry of HostConfig.Mounts.
type Mount struct {
	Type         string // MountBind, MountTmpfs
	Source       string `json:",omitempty"`
	Target       string
	ReadOnly     bool          `json:",omitempty"`
	BindOptions  *BindOptions  `json:",omitempty"`
	TmpfsOptions *TmpfsOptions `json:",omitempty"`
}

// BindOptions of a bind mount.
type BindOptions struct {
	Propagation string `json:",omitempty"`
}

// TmpfsOptions of a tmpfs mount.
type TmpfsOptions struct {
	SizeBytes int64       `json:",omitempty"`
	Mode      os.FileMode `json:",omitempty"`
}

// ContainerInfo is what GET /containers/{id}/json tells of a container.
type ContainerInfo struct {
	ID         string `json:"Id"`
	State      *ContainerState
	HostConfig *HostConfig
}

// ContainerState is a container's run state.
type ContainerState struct {
	Status   string // created, running, exited, ...
	Running  bool
	ExitCode int
}

// ExecConfig is the body of POST /containers/{id}/exec.
type ExecConfig struct {
	Cmd          []string
	User         string   `json:",omitempty"`
	WorkingDir   string   `json:",omitempty"`
	Env          []string `json:",omitempty"`
	AttachStdin  bool
	AttachStdout bool
	AttachStderr bool
}

// ExecInfo is what GET /exec/{id}/json tells of an exec.
type ExecInfo struct {
	Running  bool
	ExitCode int // meaningful once not Running
	Pid      int // on the host; 0 once ended
}

// Version is what GET /version tells of the engine.
type Version struct {
	Version       string
	APIVersion    string `json:"ApiVersion"`
	MinAPIVersion string `json:"MinAPIVersion"`
	Components    []struct {
		Name, Version string
	}
}

// BuildOptions are the query of POST /build that harness sets;
// intermediate containers are always removed, failed builds' too.
type BuildOptions struct {
	Tags        []string
	Dockerfile  string // path in the context
	NetworkMode string // for RUN steps; none for no network
}

func needID(kind, id string) error {
	if strings.TrimSpace(id) == "" {
		return fmt.Errorf("no %s named (empty id)", kind)
	}
	return nil
}

// ServerVersion is GET /version.
func (c *Client) ServerVersion(ctx context.Context) (Version, error) {
	var v Version
	err := c.do(ctx, http.MethodGet, "/version", nil, nil, &v)
	return v, err
}

// ContainerCreate creates a container and returns its id.
func (c *Client) ContainerCreate(ctx context.Context, cfg *ContainerConfig) (string, error) {
	var res struct {
		ID string `json:"Id"`
	}
	if err := c.do(ctx, http.MethodPost, "/containers/create", nil, cfg, &res); err != nil {
		return "", err
	}
	return res.ID, nil
}

// ContainerStart starts a created container.
func (c *Client) ContainerStart(ctx context.Context, id string) error {
	if err := needID("container", id); err != nil {
		return err
	}
	return c.do(ctx, http.MethodPost, "/containers/"+id+"/start", nil, nil, nil)
}

// ContainerInspect tells a container's state and host configuration.
func (c *Client) ContainerInspect(ctx context.Context, id string) (*ContainerInfo, error) {
	if err := needID("container", id); err != nil {
		return nil, err
	}
	var in ContainerInfo
	if err := c.do(ctx, http.MethodGet, "/containers/"+id+"/json", nil, nil, &in); err != nil {
		return nil, err
	}
	return &in, nil
}

// ContainerRemove removes a container, killing it first if it runs.
func (c *Client) ContainerRemove(ctx context.Context, id string) error {
	if err := needID("container", id); err != nil {
		return err
	}
	return c.do(ctx, http.MethodDelete, "/containers/"+id, url.Values{"force": {"1"}}, nil, nil)
}

// ContainerWait waits for a container to stop and returns its exit code.
func (c *Client) ContainerWait(ctx context.Context, id string) (int, error) {
	if err := needID("container", id); err != nil {
		return 0, err
	}
	var res struct {
		StatusCode int
		Error      *struct{ Message string }
	}
	if err := c.do(ctx, http.MethodPost, "/containers/"+id+"/wait", url.Values{"condition": {"not-running"}}, nil, &res); err != nil {
		return 0, err
	}
	if res.Error != nil && res.Error.Message != "" {
		return res.StatusCode, errors.New(res.Error.Message)
	}
	return res.StatusCode, nil
}

// ContainerLogs returns the last tail lines ("all" for all) of a
// container's output, stdout and stderr multiplexed as for a container
// without a TTY (see Demux). The caller closes it.
func (c *Client) ContainerLogs(ctx context.Context, id, tail string) (io.ReadCloser, error) {
	if err := needID("container", id); err != nil {
		return nil, err
	}
	return c.stream(ctx, http.MethodGet, "/containers/"+id+"/logs", url.Values{"stdout": {"1"}, "stderr": {"1"}, "tail": {tail}}, nil)
}

// ExecCreate creates an exec in a running container and returns its id.
func (c *Client) ExecCreate(ctx context.Context, containerID string, cfg ExecConfig) (string, error) {
	if err := needID("container", containerID); err != nil {
		return "", err
	}
	var res struct {
		ID string `json:"Id"`
	}
	if err := c.do(ctx, http.MethodPost, "/containers/"+containerID+"/exec", nil, cfg, &res); err != nil {
		return "", err
	}
	return res.ID, nil
}

// ExecInspect tells whether an exec runs, its exit code and host pid.
func (c *Client) ExecInspect(ctx context.Context, execID string) (ExecInfo, error) {
	if err := needID("exec", execID); err != nil {
		return ExecInfo{}, err
	}
	var res struct {
		Running  bool
		ExitCode *int // null while it runs
		Pid      int
	}
	if err := c.do(ctx, http.MethodGet, "/exec/"+execID+"/json", nil, nil, &res); err != nil {
		return ExecInfo{}, err
	}
	in := ExecInfo{Running: res.Running, Pid: res.Pid}
	if res.ExitCode != nil {
		in.ExitCode = *res.ExitCode
	}
	return in, nil
}

// ImageInspect returns the image's id, or ErrNotFound.
func (c *Client) ImageInspect(ctx context.Context, ref string) (string, error) {
	if err := needID("image", ref); err != nil {
		return "", err
	}
	var res struct {
		ID string `json:"Id"`
	}
	err := c.do(ctx, http.MethodGet, "/images/"+ref+"/json", nil, nil, &res)
	return res.ID, err
}

// ImageRemove removes an image (forced: its tags and stopped containers'
// use of it do not keep it).
func (c *Client) ImageRemove(ctx context.Context, ref string) error {
	if err := needID("image", ref); err != nil {
		return err
	}
	return c.do(ctx, http.MethodDelete, "/images/"+ref, url.Values{"force": {"1"}}, nil, nil)
}

// ImageBuild builds an image from buildContext, a tar holding the
// Dockerfile, with the classic builder. It reads the engine's progress to
// its end: a failed step is an error (see ProgressError).
func (c *Client) ImageBuild(ctx context.Context, buildContext io.Reader, o BuildOptions) error {
	q := url.Values{"forcerm": {"1"}}
	if len(o.Tags) > 0 {
		q["t"] = o.Tags
	}
	if o.Dockerfile != "" {
		q.Set("dockerfile", o.Dockerfile)
	}
	if o.NetworkMode != "" {
		q.Set("networkmode", o.NetworkMode)
	}
	body, err := c.raw(ctx, http.MethodPost, "/build", q, buildContext, http.Header{"Content-Type": {"application/x-tar"}})
	if err != nil {
		return err
	}
	defer body.Close()
	return readProgress(body)
}

// ImageImport makes the image ref (name:tag) from a root filesystem tar,
// with message as its history's comment.
func (c *Client) ImageImport(ctx context.Context, rootfs io.Reader, ref, message string) error {
	q := url.Values{"fromSrc": {"-"}, "repo": {ref}}
	if message != "" {
		q.Set("message", message)
	}
	body, err := c.raw(ctx, http.MethodPost, "/images/create", q, rootfs, http.Header{"Content-Type": {"application/x-tar"}})
	if err != nil {
		return err
	}
	defer body.Close()
	return readProgress(body)
}

// ProgressError is an error the engine reported in a build's or an
// import's progress stream, with the last output line before it.
type ProgressError struct {
	Message string
	After   string // the last "stream" line before the error, if any
}

func (e *ProgressError) Error() string {
	if e.After != "" {
		return fmt.Sprintf("%s (after: %s)", e.Message, e.After)
	}
	return e.Message
}

// readProgress reads the engine's stream of JSON messages to its end and
// returns the error it reported, if any ("error", or errorDetail's
// message).
func readProgress(r io.Reader) error {
	dec := json.NewDecoder(r)
	var last string
	for {
		var m struct {
			Stream      string `json:"stream"`
			Error       string `json:"error"`
			ErrorDetail *struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		if err := dec.Decode(&m); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("reading the engine's progress: %w", err)
		}
		if s := strings.TrimSpace(m.Stream); s != "" {
			last = s
		}
		msg := m.Error
		if msg == "" && m.ErrorDetail != nil {
			msg = m.ErrorDetail.Message
		}
		if msg != "" {
			return &ProgressError{Message: strings.TrimSpace(msg), After: last}
		}
	}
}
