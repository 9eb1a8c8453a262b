package sandbox

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// openedGit is the landlock backend's git shadows, opened (O_PATH) before
// any mount changes what their paths name.
type openedGit []openedGitMount

type openedGitMount struct {
	m        gitMount
	shadow   int
	rw, ro   []int
	rwN, roN []string
	objects  int // the real objects directory, when m.Objects; else -1
}

func openGitMounts(ms []gitMount) (openedGit, error) {
	var out openedGit
	open := func(p string) (int, error) {
		fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, fmt.Errorf("opening %s for git writes: %w", p, err)
		}
		return fd, nil
	}
	for _, m := range ms {
		om := openedGitMount{m: m, objects: -1}
		var err error
		if om.shadow, err = open(m.Shadow); err != nil {
			return nil, err
		}
		if m.Objects {
			src, _ := m.baseObjects()
			if om.objects, err = open(src); err != nil {
				return nil, err
			}
		}
		for _, d := range m.RW {
			fd, err := open(filepath.Join(m.Dir, d))
			if err != nil {
				return nil, err
			}
			om.rw, om.rwN = append(om.rw, fd), append(om.rwN, d)
		}
		for _, r := range m.RO {
			fd, err := open(filepath.Join(m.Dir, r))
			if err != nil {
				return nil, err
			}
			om.ro, om.roN = append(om.ro, fd), append(om.roN, r)
		}
		out = append(out, om)
	}
	return out, nil
}

// mount puts each shadow over its git directory, then the real data
// directories read-write and everything else read-only on top.
func (g openedGit) mount() error {
	fdPath := func(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }
	for _, om := range g {
		if err := unix.Mount(fdPath(om.shadow), om.m.Dir, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("mounting the git shadow over %s: %w", om.m.Dir, err)
		}
		unix.Close(om.shadow)
		for i, fd := range om.rw {
			dst := filepath.Join(om.m.Dir, om.rwN[i])
			if err := unix.Mount(fdPath(fd), dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
				return fmt.Errorf("mounting %s: %w", dst, err)
			}
			unix.Close(fd)
		}
		ro, roN := om.ro, om.roN
		if om.objects >= 0 {
			_, dst := om.m.baseObjects()
			ro, roN = append(ro, om.objects), append(roN, strings.TrimPrefix(dst, om.m.Dir+"/"))
		}
		for i, fd := range ro {
			dst := filepath.Join(om.m.Dir, roN[i])
			if err := unix.Mount(fdPath(fd), dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
				return fmt.Errorf("mounting %s: %w", dst, err)
			}
			unix.Close(fd)
			var sf unix.Statfs_t
			flags := uintptr(0)
			if unix.Statfs(dst, &sf) == nil {
				flags = uintptr(sf.Flags) & (unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC | unix.MS_NOATIME | unix.MS_NODIRATIME | unix.MS_RELATIME)
			}
			if err := unix.Mount("", dst, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|flags, ""); err != nil {
				return fmt.Errorf("making %s read-only: %w", dst, err)
			}
		}
	}
	return nil
}
