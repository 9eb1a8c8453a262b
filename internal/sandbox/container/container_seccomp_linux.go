package container

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/harness-dev/harness/internal/sandbox/linux/inner"

	"github.com/moby/moby/client"
	"golang.org/x/sys/unix"
)

// syscallNames names the system calls of deniedSyscalls for the engine's
// seccomp profile, which takes names (libseccomp resolves them per
// architecture). TestContainerSeccompCoversInnerStage fails when a call is
// added to deniedSyscalls without a name here.
var syscallNames = map[uint32]string{
	unix.SYS_IO_URING_SETUP: "io_uring_setup", unix.SYS_IO_URING_ENTER: "io_uring_enter", unix.SYS_IO_URING_REGISTER: "io_uring_register",
	unix.SYS_BPF: "bpf", unix.SYS_PERF_EVENT_OPEN: "perf_event_open", unix.SYS_USERFAULTFD: "userfaultfd",
	unix.SYS_KEYCTL: "keyctl", unix.SYS_ADD_KEY: "add_key", unix.SYS_REQUEST_KEY: "request_key",
	unix.SYS_MOUNT: "mount", unix.SYS_UMOUNT2: "umount2", unix.SYS_PIVOT_ROOT: "pivot_root", unix.SYS_SETNS: "setns", unix.SYS_UNSHARE: "unshare",
	unix.SYS_OPEN_TREE: "open_tree", unix.SYS_MOVE_MOUNT: "move_mount", unix.SYS_FSOPEN: "fsopen", unix.SYS_FSCONFIG: "fsconfig",
	unix.SYS_FSMOUNT: "fsmount", unix.SYS_FSPICK: "fspick", unix.SYS_MOUNT_SETATTR: "mount_setattr",
	unix.SYS_KEXEC_LOAD: "kexec_load", unix.SYS_INIT_MODULE: "init_module", unix.SYS_FINIT_MODULE: "finit_module",
}

// seccompProfile is the engine's (Docker's and podman's) JSON profile format.
type seccompProfile struct {
	DefaultAction string        `json:"defaultAction"`
	Architectures []string      `json:"architectures,omitempty"`
	Syscalls      []seccompRule `json:"syscalls"`
}

type seccompRule struct {
	Names    []string     `json:"names"`
	Action   string       `json:"action"`
	ErrnoRet *uint        `json:"errnoRet,omitempty"`
	Args     []seccompArg `json:"args,omitempty"`
}

type seccompArg struct {
	Index    uint   `json:"index"`
	Value    uint64 `json:"value"`
	ValueTwo uint64 `json:"valueTwo"`
	Op       string `json:"op"`
}

// containerSeccompProfile is the inner stage's filter (seccomp_linux.go)
// in the engine's terms: the same calls denied with EPERM, socket(AF_UNIX)
// and AF_VSOCK, TIOCSTI and TIOCLINUX, clone with any namespace flag, and
// clone3 with ENOSYS. Everything else is allowed, as in the inner stage;
// the inner stage itself still runs under it, so a command sits behind both.
//
// With proxy, one kind of unix socket is let through, the one the init
// connects its proxy channel with (serveContainerProxy:
// SOCK_SEQPACKET|SOCK_CLOEXEC, protocol 0), for no command reaches it: the
// inner stage denies commands every unix socket. Were one to slip past,
// a seqpacket socket connects to no stream socket of a mounted directory,
// and the channel leads only to the proxy.
func containerSeccompProfile(proxy bool) seccompProfile {
	eperm, enosys := uint(unix.EPERM), uint(unix.ENOSYS)
	deny := func(name string, args ...seccompArg) seccompRule {
		return seccompRule{Names: []string{name}, Action: "SCMP_ACT_ERRNO", ErrnoRet: &eperm, Args: args}
	}
	// ioctl's request and socket's family are 32-bit: the kernel reads the
	// low word only, so compare that (a family of 1<<32|AF_UNIX is a unix
	// socket).
	low := func(i uint, v uint64) seccompArg {
		return seccompArg{Index: i, Value: 0xffffffff, ValueTwo: v, Op: "SCMP_CMP_MASKED_EQ"}
	}
	// A type with high bits set is not the one let through.
	unixRule := deny("socket", low(0, unix.AF_UNIX))
	if proxy {
		unixRule = deny("socket", low(0, unix.AF_UNIX), seccompArg{Index: 1, Value: inner.ProxyChannelType, Op: "SCMP_CMP_NE"})
	}
	var names []string
	for _, nr := range inner.DeniedSyscalls {
		names = append(names, syscallNames[nr])
	}
	rules := []seccompRule{
		{Names: names, Action: "SCMP_ACT_ERRNO", ErrnoRet: &eperm},
		unixRule,
		deny("socket", low(0, unix.AF_VSOCK)),
		deny("ioctl", low(1, unix.TIOCSTI)),
		deny("ioctl", low(1, unix.TIOCLINUX)),
		{Names: []string{"clone3"}, Action: "SCMP_ACT_ERRNO", ErrnoRet: &enosys},
	}
	// One rule per flag: a rule's arguments are ANDed, and any one
	// namespace flag must be enough to be refused.
	for bit := uint64(1); bit != 0; bit <<= 1 {
		if bit&inner.CloneNamespaces != 0 {
			rules = append(rules, deny("clone", seccompArg{Index: cloneFlagsArg(), Value: bit, ValueTwo: bit, Op: "SCMP_CMP_MASKED_EQ"}))
		}
	}
	arch := map[string][]string{"amd64": {"SCMP_ARCH_X86_64"}, "arm64": {"SCMP_ARCH_AARCH64"}}[runtime.GOARCH]
	return seccompProfile{DefaultAction: "SCMP_ACT_ALLOW", Architectures: arch, Syscalls: rules}
}

// cloneFlagsArg is clone's flags argument: the first everywhere harness
// builds a filter for (s390x, which swaps the first two, is not one).
func cloneFlagsArg() uint { return 0 }

// containerSeccomp is the profile as Docker's security option takes it.
func containerSeccomp(proxy bool) string {
	b, err := json.Marshal(containerSeccompProfile(proxy))
	if err != nil {
		panic(err) // a fixed structure of strings and numbers
	}
	return string(b)
}

// seccompOption is the security option that installs the profile. Docker
// takes the profile itself (its CLI reads the file); podman's compatible
// API takes a path (podman 4.3: "opening seccomp profile failed: open
// {...}"), so for podman it is written to dir, which no container mounts.
func seccompOption(podman bool, dir string, proxy bool) (string, error) {
	prof := containerSeccomp(proxy)
	if !podman {
		return "seccomp=" + prof, nil
	}
	path := filepath.Join(dir, "seccomp.json")
	if err := os.WriteFile(path, []byte(prof), 0o644); err != nil {
		return "", fmt.Errorf("writing the seccomp profile for podman: %w", err)
	}
	return "seccomp=" + path, nil
}

// isPodman reports whether the engine behind cli is podman's (its
// Docker-compatible API names a "Podman Engine" component), whichever
// backend name brought harness there (DOCKER_HOST may name podman's
// socket).
func isPodman(ctx context.Context, cli *client.Client) bool {
	v, err := cli.ServerVersion(ctx, client.ServerVersionOptions{})
	if err != nil {
		return false
	}
	for _, c := range v.Components {
		if strings.Contains(c.Name, "Podman") {
			return true
		}
	}
	return false
}
