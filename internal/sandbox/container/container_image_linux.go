package container

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/backend"

	"github.com/harness-dev/harness/internal/sandbox/walls"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"

	"github.com/harness-dev/harness/internal/engine"
)

// containerImg is the image a session's container runs.
type containerImg struct {
	ref string
	// hostFS: the default image, an empty root whose /usr, /etc and the
	// library directories are the host's, bound read-only, so commands
	// find the host's toolchain without anything downloaded or built.
	hostFS bool
}

// DefaultImage is the default image's name: built offline, in a moment,
// from nothing but a tar of empty directories (see containerImg.hostFS).
const DefaultImage = "harness-hostfs:1"

// containerImage picks the image: ref, HARNESS_IMAGE as the caller read
// it (which must be there already: nothing is pulled), else the project's
// harness.Dockerfile
// (built once per content, tagged harness-project:<hash>, with no
// network; its build context is the Dockerfile alone, so nothing of the
// project leaks into the image), else DefaultImage.
func containerImage(ctx context.Context, cli *client.Client, p *walls.Policy, ref string) (containerImg, error) {
	if ref != "" {
		if _, err := cli.ImageInspect(ctx, ref); err != nil {
			return containerImg{}, fmt.Errorf("%w: %s=%s: %v (harness pulls nothing: build or pull it first)", backend.ErrUnavailable, ImageEnv, ref, err)
		}
		return containerImg{ref: ref}, nil
	}
	df, err := os.ReadFile(filepath.Join(p.Project(), ProjectDockerfile))
	if err == nil {
		return projectImage(ctx, cli, df)
	}
	if !errors.Is(err, os.ErrNotExist) {
		return containerImg{}, fmt.Errorf("reading %s: %w", ProjectDockerfile, err)
	}
	if _, err := cli.ImageInspect(ctx, DefaultImage); err == nil {
		return containerImg{ref: DefaultImage, hostFS: true}, nil
	} else if !cerrdefs.IsNotFound(err) {
		return containerImg{}, fmt.Errorf("%w: %s: %v", backend.ErrUnavailable, DefaultImage, err)
	}
	if err := importHostFSImage(ctx, cli); err != nil {
		return containerImg{}, err
	}
	return containerImg{ref: DefaultImage, hostFS: true}, nil
}

func projectImage(ctx context.Context, cli *client.Client, dockerfile []byte) (containerImg, error) {
	sum := sha256.Sum256(dockerfile)
	ref := "harness-project:" + hex.EncodeToString(sum[:6])
	if _, err := cli.ImageInspect(ctx, ref); err == nil {
		return containerImg{ref: ref}, nil
	} else if !cerrdefs.IsNotFound(err) {
		return containerImg{}, fmt.Errorf("%w: %s: %v", backend.ErrUnavailable, ref, err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(dockerfile)), ModTime: time.Unix(0, 0)})
	tw.Write(dockerfile)
	tw.Close()
	// No network for the build: the Dockerfile is the project's, which
	// the agent may have written, and a RUN step with the engine's
	// default network would reach anything the host can. A Dockerfile
	// that must download is built by the user, who names the image.
	// Intermediate containers are removed, a failed step's too.
	res, err := cli.ImageBuild(ctx, &buf, client.ImageBuildOptions{Tags: []string{ref}, Dockerfile: "Dockerfile", NetworkMode: "none",
		Remove: true, ForceRemove: true})
	if err == nil {
		err = engine.Progress(res.Body)
	}
	var failed *engine.ProgressError
	if err != nil && !errors.As(err, &failed) {
		return containerImg{}, fmt.Errorf("%w: building %s: %v", backend.ErrUnavailable, ProjectDockerfile, err)
	}
	if err != nil {
		return containerImg{}, fmt.Errorf("%w: building %s without network: %v (harness builds it with no network, since the agent can edit it; if it must download, build it yourself: docker build -t NAME -f %s . and set %s=NAME)", backend.ErrUnavailable, ProjectDockerfile, err, ProjectDockerfile, ImageEnv)
	}
	return containerImg{ref: ref}, nil
}

// hostFSDirs are bound read-only from the host into the default image;
// the library and binary directories that are symlinks on the host
// (merged /usr) become the same symlinks in the image.
var hostFSDirs = []string{"/usr", "/etc", "/opt", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// hostFSMounts are the host directories the default image binds.
func hostFSMounts() []string {
	var out []string
	for _, d := range hostFSDirs {
		if st, err := os.Lstat(d); err == nil && st.IsDir() {
			out = append(out, d)
		}
	}
	return out
}

// hostFSSecrets are host files under hostFSDirs no command reads (root in
// the container could: it owns them): password hashes and host keys.
func hostFSSecrets(hostFS bool) []string {
	if !hostFS {
		return nil
	}
	out := []string{"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/security/opasswd", "/etc/sudoers", "/etc/sudoers.d", "/etc/docker", "/etc/ssl/private"}
	keys, _ := filepath.Glob("/etc/ssh/ssh_host_*_key")
	return append(out, keys...)
}

// importHostFSImage imports DefaultImage: mount points and the host's
// merged-/usr symlinks, nothing else.
func importHostFSImage(ctx context.Context, cli *client.Client) error {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dir := func(name string, mode int64) {
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode, ModTime: time.Unix(0, 0)})
	}
	for _, d := range []string{"dev", "proc", "sys", "tmp", "var", "var/tmp", "root", "home", "run", ".harness"} {
		mode := int64(0o755)
		if d == "tmp" || d == "var/tmp" {
			mode = 0o1777
		}
		dir(d, mode)
	}
	for _, d := range hostFSDirs {
		st, err := os.Lstat(d)
		switch {
		case err != nil:
		case st.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(d)
			if err == nil {
				tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: d[1:], Linkname: target, ModTime: time.Unix(0, 0)})
			}
		case st.IsDir():
			dir(d[1:], 0o755)
		}
	}
	tw.Close()
	res, err := cli.ImageImport(ctx, client.ImageImportSource{Source: &buf, SourceName: "-"}, DefaultImage,
		client.ImageImportOptions{Message: "harness: the host's /usr and /etc, bound read-only at run time"})
	if err == nil {
		err = engine.Progress(res)
	}
	if err != nil {
		return fmt.Errorf("%w: importing %s: %v", backend.ErrUnavailable, DefaultImage, err)
	}
	return nil
}
