package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// execInner puts up the inner walls on this OS thread and execs argv. It
// returns only on failure; the caller then exits without running argv.
func execInner(cfg helperConfig, argv []string) error {
	// Everything below is per thread and must be on the thread that execs.
	runtime.LockOSThread()
	if len(cfg.ReadOnly) > 0 || len(cfg.Mask) > 0 || len(cfg.Git) > 0 || cfg.Tmp != "" || cfg.RORoot {
		if err := innerMounts(&cfg); err != nil {
			return err
		}
	}
	if cfg.ProxyPort != 0 {
		if err := handOverListener(cfg.ProxyPort, cfg.Forward); err != nil {
			return err
		}
	}
	if err := restrictThread(cfg); err != nil {
		return err
	}
	if err := applyBounds(cfg); err != nil {
		return err
	}
	if err := sealDescriptors(); err != nil {
		return err
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return err
	}
	return unix.Exec(path, argv, os.Environ())
}

// restrictThread puts up the per-command walls on the calling, locked OS
// thread: capabilities dropped, no_new_privs, Landlock, seccomp. A process
// that thread execs or forks inherits them all; the process's other
// threads do not.
func restrictThread(cfg helperConfig) error {
	if cfg.DropCaps {
		if err := dropCapabilities(); err != nil {
			return err
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("setting no_new_privs: %w", err)
	}
	abi, err := applyLandlock(cfg.Write, cfg.NoNet, connectPorts(cfg))
	if err != nil {
		return err
	}
	if abi == 0 && cfg.RequireLandlock {
		return fmt.Errorf("this kernel has no Landlock, which the landlock backend needs: install bubblewrap for the bwrap backend")
	}
	if cfg.SeccompInherited {
		return nil // the launcher installed this very filter on every thread before starting us
	}
	return applySeccomp(filterFor(cfg))
}

// dropCapabilities empties the bounding, ambient, inheritable, permitted
// and effective sets and locks the securebits, so even uid 0 gains nothing
// from execve.
func dropCapabilities() error {
	last := 40
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = n
		}
	}
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL && err != unix.EPERM {
			return fmt.Errorf("dropping capability %d: %w", c, err)
		}
	}
	const bits = 1<<0 | 1<<1 | 1<<2 | 1<<3 | 1<<4 | 1<<5  // NOROOT, NO_SETUID_FIXUP, KEEP_CAPS: each locked
	_ = unix.Prctl(unix.PR_SET_SECUREBITS, bits, 0, 0, 0) // needs CAP_SETPCAP; without it there is nothing to drop
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("clearing capabilities: %w", err)
	}
	return nil
}

// innerMounts runs in the helper's own mount namespace (landlock backend
// with user namespaces): the carve-outs become read-only bind mounts, the
// private temporary directory appears at /tmp and, with RORoot, every
// mount but the writable roots is read-only. The seccomp filter then
// denies mount, umount and mount_setattr, so the command cannot undo
// them. A kernel without mount_setattr gets DenyMeta set instead.
func innerMounts(cfg *helperConfig) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making mounts private: %w", err)
	}
	// Opened before /tmp is replaced: the shadows live in the session's
	// directory under the host's /tmp.
	git, err := openGitMounts(cfg.Git)
	if err != nil {
		return err
	}
	if cfg.Tmp != "" {
		// Writable roots under /tmp would vanish under the private /tmp:
		// hold them open and mount them again on top.
		fds := make([]int, len(cfg.Rebind))
		for i, r := range cfg.Rebind {
			fd, err := unix.Open(r, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				return fmt.Errorf("opening %s: %w", r, err)
			}
			fds[i] = fd
		}
		helper := -1
		if cfg.Helper != "" {
			fd, err := unix.Open(cfg.Helper, unix.O_PATH|unix.O_CLOEXEC, 0)
			if err != nil {
				return fmt.Errorf("opening %s: %w", cfg.Helper, err)
			}
			helper = fd
		}
		if err := unix.Mount(cfg.Tmp, "/tmp", "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("mounting the private /tmp: %w", err)
		}
		if helper >= 0 {
			if err := bindHelper(helper); err != nil {
				return err
			}
		}
		for i, r := range cfg.Rebind {
			if err := os.MkdirAll(r, 0o700); err != nil {
				return fmt.Errorf("re-exposing %s: %w", r, err)
			}
			if err := unix.Mount("/proc/self/fd/"+strconv.Itoa(fds[i]), r, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
				return fmt.Errorf("re-exposing %s: %w", r, err)
			}
			unix.Close(fds[i])
		}
	}
	if err := git.mount(); err != nil {
		return err
	}
	for _, p := range cfg.ReadOnly {
		if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("protecting %s: %w", p, err)
		}
		var sf unix.Statfs_t
		flags := uintptr(0)
		if unix.Statfs(p, &sf) == nil {
			flags = uintptr(sf.Flags) & (unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC | unix.MS_NOATIME | unix.MS_NODIRATIME | unix.MS_RELATIME)
		}
		if err := unix.Mount("", p, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|flags, ""); err != nil {
			return fmt.Errorf("making %s read-only: %w", p, err)
		}
	}
	for _, m := range maskTargets(cfg.Mask) {
		var err error
		if m.dir {
			err = maskDir(m.path, cfg.Keep)
		} else {
			err = unix.Mount("/dev/null", m.path, "", unix.MS_BIND, "")
		}
		if err != nil {
			return fmt.Errorf("hiding %s: %w", m.path, err)
		}
	}
	if cfg.RORoot {
		err := readOnlyRoot(cfg.Write)
		if errors.Is(err, unix.ENOSYS) {
			cfg.DenyMeta = true
			return nil
		}
		return err
	}
	return nil
}

// readOnlyRoot makes every mount in this namespace read-only except the
// writable roots, so the calls Landlock does not mediate (chmod, chown,
// utime, xattr) fail with EROFS outside them, as under bwrap's read-only
// bind of /. Each root is first bound over itself, so it is a mount of
// its own (carrying along, by MS_REC, the carve-outs beneath it); the
// whole tree is then made read-only and each root's own mount, alone,
// writable again: carve-outs and masks beneath a root stay read-only.
// Writes the kernel refuses here Landlock refused already; device nodes
// (/dev/null) are written through a read-only mount as before.
func readOnlyRoot(write []string) error {
	var roots []string
	for _, w := range write {
		if err := unix.Mount(w, w, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue // nothing there to write
			}
			return fmt.Errorf("holding %s writable: %w", w, err)
		}
		roots = append(roots, w)
	}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return fmt.Errorf("making / read-only: %w", err)
	}
	for _, w := range roots {
		if err := unix.MountSetattr(unix.AT_FDCWD, w, 0, &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}); err != nil {
			return fmt.Errorf("making %s writable again: %w", w, err)
		}
	}
	// The working directory still names the mount beneath the new binds,
	// read-only now: enter it again by name.
	if wd, err := os.Getwd(); err == nil {
		if err := unix.Chdir(wd); err != nil {
			return fmt.Errorf("entering %s again: %w", wd, err)
		}
	}
	return nil
}

// mountSetattrWorks reports whether this kernel has mount_setattr(2)
// (5.12 and later), which readOnlyRoot needs.
func mountSetattrWorks() bool {
	err := unix.MountSetattr(-1, "", 0, &unix.MountAttr{})
	return !errors.Is(err, unix.ENOSYS)
}

// maskDir hides dir behind an empty read-only tmpfs; a kept path beneath
// it is bound back, read-only, with the tmpfs searchable but not listable.
func maskDir(dir string, keep []string) error {
	const flags = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	var kept []string
	var fds []int
	for _, k := range keep {
		if !within(k, dir) || k == dir {
			continue
		}
		fd, err := unix.Open(k, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // gone: nothing to keep
		}
		kept, fds = append(kept, k), append(fds, fd)
	}
	if len(kept) == 0 {
		return unix.Mount("tmpfs", dir, "tmpfs", unix.MS_RDONLY|flags, "size=4k,mode=000")
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", flags, "size=64k,mode=111"); err != nil {
		return err
	}
	for i, k := range kept {
		if err := os.MkdirAll(k, 0o111); err != nil {
			return err
		}
		if err := unix.Mount("/proc/self/fd/"+strconv.Itoa(fds[i]), k, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return err
		}
		unix.Close(fds[i])
		if err := unix.Mount("", k, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|flags, ""); err != nil {
			return err
		}
	}
	return unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_RDONLY|flags, "")
}

// bindHelper binds the harness binary, open as fd, read-only at
// helperInTmp inside the private /tmp.
func bindHelper(fd int) error {
	defer unix.Close(fd)
	f, err := os.OpenFile(helperInTmp, os.O_CREATE|os.O_RDONLY, 0o500)
	if err != nil {
		return fmt.Errorf("placing the helper in the private /tmp: %w", err)
	}
	f.Close()
	src := "/proc/self/fd/" + strconv.Itoa(fd)
	if err := unix.Mount(src, helperInTmp, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("placing the helper in the private /tmp: %w", err)
	}
	if err := unix.Mount("", helperInTmp, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
		return fmt.Errorf("placing the helper in the private /tmp: %w", err)
	}
	return nil
}

// applyBounds sets the resource bounds on this process, inherited by all
// it starts: RLIMIT_NPROC (counted per user in this user namespace, so
// the user's processes outside do not count; the kernel exempts root,
// whose commands the supervisor counts instead) and RLIMIT_DATA.
func applyBounds(cfg helperConfig) error {
	if cfg.MaxProcs > 0 {
		n := uint64(cfg.MaxProcs)
		if err := unix.Setrlimit(unix.RLIMIT_NPROC, &unix.Rlimit{Cur: n, Max: n}); err != nil {
			return fmt.Errorf("setting the process limit: %w", err)
		}
	}
	if cfg.MaxData > 0 {
		n := uint64(cfg.MaxData)
		if err := unix.Setrlimit(unix.RLIMIT_DATA, &unix.Rlimit{Cur: n, Max: n}); err != nil {
			return fmt.Errorf("setting the memory limit: %w", err)
		}
	}
	return nil
}

// connectPorts are the TCP ports Landlock lets commands connect to: the
// proxy's and the loopback forwards'.
func connectPorts(cfg helperConfig) []int {
	if cfg.ConnectPort == 0 {
		return nil
	}
	return append([]int{cfg.ConnectPort}, cfg.Forward...)
}
