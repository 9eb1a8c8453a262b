package inner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// The harness re-executes itself as the inner stage; these argv[1] values
// select it. They are not user commands.
const (
	helperArg = "__harness-sandbox-helper"
	ProbeArg  = "__harness-sandbox-probe"
	// launcherArg starts a session's long-lived launcher inside the walls;
	// supervisorArg one command's supervisor, which the launcher starts.
	LauncherArg   = "__harness-sandbox-launcher"
	SupervisorArg = "__harness-sandbox-supervisor"
	// containerInitArg and containerExecArg are the container backend's
	// init and per-command supervisor (containerserve_linux.go).
	ContainerInitArg = "__harness-container-init"
	ContainerExecArg = "__harness-container-exec"
)

// helperFailed is the exit status when the inner stage could not put up its
// walls: the command never ran (fail closed).
const HelperFailed = 125

// helperConfig is what the host tells the inner stage, as JSON in argv[2].
type HelperConfig struct {
	// Write lists the paths (as seen inside) Landlock leaves writable.
	Write []string `json:"write"`
	// DenySockets: "unix" denies socket(AF_UNIX) and AF_VSOCK (a network
	// namespace covers the rest); "all" denies socket() for every family.
	DenySockets string `json:"deny_sockets"`
	// NoNet: Landlock also denies TCP bind/connect when the ABI has it.
	NoNet bool `json:"no_net"`
	// DropCaps: drop every capability (bwrap has done it already).
	DropCaps bool `json:"drop_caps"`
	// ReadOnly are bind-mounted read-only over themselves when the helper
	// runs in its own mount namespace (landlock backend with user namespaces).
	ReadOnly []string `json:"read_only,omitempty"`
	// Git are the shadows of git directories commands may write
	// (gitwrite.go), mounted in that mount namespace.
	Git []GitMount `json:"git,omitempty"`
	// Mask are hidden (secrets, host sockets) in that mount namespace;
	// Keep, beneath a hidden directory, are bound back read-only.
	Mask []string `json:"mask,omitempty"`
	Keep []string `json:"keep,omitempty"`
	// Tmp, when set with a mount namespace, is bind-mounted at /tmp; Rebind
	// are writable roots under /tmp to mount again on top of it.
	Tmp    string   `json:"tmp,omitempty"`
	Rebind []string `json:"rebind,omitempty"`
	// Helper, the harness binary's host path when it lies under /tmp, is
	// bound read-only at helperInTmp in the private /tmp, as bwrap does.
	Helper string `json:"helper,omitempty"`
	// RORoot, in that mount namespace, makes every mount read-only but
	// those of Write, after the other mounts: chmod, chown, utime and
	// xattr changes, which Landlock does not mediate, then fail with EROFS
	// outside the writable roots. DenyMeta denies those calls outright by
	// seccomp, where no mount namespace holds them (or the kernel has no
	// mount_setattr).
	RORoot   bool `json:"ro_root,omitempty"`
	DenyMeta bool `json:"deny_meta,omitempty"`
	// RequireLandlock fails closed when the kernel has no Landlock (the
	// landlock backend has no other wall against writes).
	RequireLandlock bool `json:"require_landlock,omitempty"`
	// ProxyPort: listen there on the sandbox's loopback for the host's
	// proxy (proxy_linux.go). The launcher hands each connection it
	// accepts to the host; the inner stage of a sandbox of its own hands
	// the listening socket itself over, before it execs the command.
	ProxyPort int `json:"proxy_port,omitempty"`
	// ConnectPort, with NoNet, is the one TCP port Landlock lets commands
	// connect to (the proxy's, in the launcher's network namespace).
	ConnectPort int `json:"connect_port,omitempty"`
	// Forward are the loopback ports forwarded to the host's
	// (loopback.go): listened on beside ProxyPort, and connectable.
	Forward []int `json:"forward,omitempty"`
	// MaxProcs and MaxData are the resource bounds (Policy.MaxProcs,
	// MaxMemory), set as RLIMIT_NPROC and RLIMIT_DATA; 0 is none.
	MaxProcs int   `json:"max_procs,omitempty"`
	MaxData  int64 `json:"max_data,omitempty"`
	// Place: before each command a supervisor asks the host to put it in
	// a cgroup v2 of its own (sandbox/linux/cgroup, placement; moved the first
	// time only), so each command it forks is born there.
	Place bool `json:"place,omitempty"`
	// SeccompInherited is set only by the launcher, for the supervisors it
	// starts after installing this same filter on all its threads: the
	// command then does not stack a second copy.
	SeccompInherited bool `json:"seccomp_inherited,omitempty"`
}

// RunHelperIfRequested returns at once unless this process was started as
// the sandbox's inner stage (or one of its probes); then it puts up the
// inner walls and execs the command, never returning. main calls it first
// thing; a test binary's TestMain may call it so the test binary can serve
// as the helper.
func RunHelperIfRequested() {
	if len(os.Args) < 2 {
		return
	}
	switch os.Args[1] {
	case ShapeArg:
		fmt.Println(Shape())
		os.Exit(0)
	case ContainerInitArg, ContainerExecArg:
		runContainerStage(os.Args)
	case helperArg:
		if len(os.Args) < 5 || os.Args[3] != "--" {
			fmt.Fprintln(os.Stderr, "harness sandbox helper: bad arguments")
			os.Exit(HelperFailed)
		}
		var cfg HelperConfig
		if err := json.Unmarshal([]byte(os.Args[2]), &cfg); err != nil {
			fmt.Fprintf(os.Stderr, "harness sandbox helper: %v\n", err)
			os.Exit(HelperFailed)
		}
		err := execInner(cfg, os.Args[4:])
		fmt.Fprintf(os.Stderr, "harness sandbox helper: %v\n", err)
		os.Exit(HelperFailed)
	case ProbeArg:
		exitStage(runProbe(os.Args[2:]))
	case LauncherArg, SupervisorArg:
		if len(os.Args) != 3 {
			fmt.Fprintln(os.Stderr, "harness sandbox launcher: bad arguments")
			os.Exit(HelperFailed)
		}
		var cfg HelperConfig
		if err := json.Unmarshal([]byte(os.Args[2]), &cfg); err != nil {
			fmt.Fprintf(os.Stderr, "harness sandbox launcher: %v\n", err)
			os.Exit(HelperFailed)
		}
		serve := serveLauncher
		if os.Args[1] == SupervisorArg {
			serve = serveSupervisor
		}
		if err := serve(cfg); err != nil {
			fmt.Fprintf(os.Stderr, "harness sandbox %s: %v\n", os.Args[1], err)
			os.Exit(HelperFailed)
		}
		exitStage(0)
	}
}

func HelperArgv(exe string, cfg HelperConfig, argv ...string) ([]string, error) {
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	return append([]string{exe, helperArg, string(b), "--"}, argv...), nil
}

// gitMount is how one shadow is mounted inside: Shadow over Dir, then
// Dir/RW read-write and Dir/RO read-only from the real directory, and,
// when Objects is set, the real Dir/objects read-only at
// Dir/objects/.harness-base (gitObjectsBase), the alternate of the
// shadow's own objects directory.
type GitMount struct {
	Shadow  string   `json:"shadow"`
	Dir     string   `json:"dir"`
	RW      []string `json:"rw,omitempty"`
	RO      []string `json:"ro,omitempty"`
	Objects bool     `json:"objects,omitempty"`
}

// GitObjectsBase is the name, inside the shadow's objects directory, of
// the read-only mount of the real one. Not a fan-out name ("00".."ff")
// nor pack/ or info/, so git never treats it as part of the local store.
const GitObjectsBase = ".harness-base"

// BaseObjects is where the real objects directory is mounted inside
// (its source is the same path outside).
func (m GitMount) BaseObjects() (src, dst string) {
	return filepath.Join(m.Dir, "objects"), filepath.Join(m.Dir, "objects", GitObjectsBase)
}
