// Package sandbox runs the agent's shell commands inside kernel walls.
//
// # Rooms
//
// This package is the public face and the orchestration: Open, Sandbox,
// Cmd, Result, Run (the bound, the timeout, the kill, the tamper and git
// checks, the same for every backend), which backend runs (bwrap and
// landlock with their launcher, here; the others below), and Inspect
// for those who check a session from the host. The mechanisms are rooms
// of their own that never import this package (rooms_test.go holds them
// to it): this package imports them.
//
//   - backend: what the orchestration and the mechanisms share: the
//     Runner interface (something long-lived that runs a session's
//     commands: the launcher, a container), Options, ErrUnavailable.
//   - walls: the Policy (the walls' rules: an immutable snapshot), the
//     Live that holds a session's current one (Refresh publishes a new
//     one), and the file tools' descriptor-based I/O.
//   - linux/inner: what runs inside the walls (the inner stage, Landlock,
//     seccomp, the launcher's and the supervisors' side), and the
//     supervisors' view of what each command asked to write
//     (wrote_linux.go: seccomp user notification, attribution for undo,
//     not a wall), carried to the host in Result.Wrote.
//   - linux/cgroup: the session's cgroups, a child per command or
//     supervisor, their limits and kill.
//   - container: the docker and podman backend, a Runner; the only
//     package here that links the engine's client.
//   - seatbelt: the macOS profile, its loopback proxy rule, the kqueue
//     tracker.
//   - netproxy: the host-side network proxy and its records.
//   - gitshadow: commits inside, objects append-only, refs recoverable.
//   - autorun: files other programs run later, watched and reported.
//   - battery: the escape battery, a client of this package as the CLI
//     is (doctor runs it).
//   - ../gitsafe: how every git call of harness's is run.
//
// Everything below describes the whole; Policy, NewPolicy, Live, Refresh and
// the file I/O named here live in walls.
//
// # Contract
//
// NewPolicy computes a session's Policy once, on the host: the canonical
// project root (never /, $HOME or a system directory), the writable roots,
// the read-only carve-outs (every .git directory or pointer file and the
// gitdir it names, nested repositories, core.hooksPath targets, the
// project's .agents/, created empty when missing so it is read-only from
// the first command), the secrets nobody reads (~/.ssh, ~/.aws, …,
// ~/.agents/env), an environment allowlist that never passes an API key, a
// timeout and an output limit. A symlink at a protected path fails closed.
// With PolicyOptions.CacheRoot, the project also gets a persistent build
// cache (CacheRoot/projects/<hash>/cache, walls/cache.go) that only its own
// sessions' commands can write and no host toolchain reads; the build
// tools' cache variables point there, and the host's Go module cache is
// offered read-only as a file:// GOPROXY entry. ListCaches and CleanCache
// serve `harness cache`.
// Policy.CheckRead and Policy.CheckWrite answer by path (after resolving
// every symlink) for the permission gate; the file tools do their I/O
// through the Policy itself, descriptor-based (OpenRead, ReadFile,
// Live.WriteFile, Walk): the opened file's real path and type are what is
// checked, never a path reopened by name. Live.Refresh, run after every command
// and every file-tool write, finds repositories, gitdir pointers, separate
// and bare gitdirs and hooks paths that appeared mid-session, protects
// them from then on and returns them for the caller to report (Findings
// lists them all). The hidden list is the built-in secrets, the caller's
// PolicyOptions.Hide and the lines of ~/.agents/hidden; Keep paths beneath
// a hidden one stay readable.
//
// Open starts one session's Sandbox with a backend (auto picks the best and
// Detect says why) and refuses it unless a self-check write outside the
// project fails. Sandbox.Run executes one command in its own killable
// process tree with stdin at /dev/null, a bounded output buffer and a
// timeout (exit 124, and a message telling the model to narrow the
// command); afterwards it compares the protected paths with their state
// before and lists any change in Result.Tampered. Battery runs the live
// escape battery that `harness doctor` and the tests share: one runner
// (battery/battery.go), each system's world and probes in its own file.
//
// Backends: bwrap (Linux, preferred), landlock (Linux without bwrap),
// seatbelt (macOS sandbox-exec with a (deny default) profile whose paths are
// -D parameters), docker and podman (Linux, see Containers below), none (only on the user's request; every command then
// needs approval). On Linux the harness re-executes itself as the inner
// stage (RunHelperIfRequested, called first thing by main): it sets
// no_new_privs, applies Landlock and a seccomp filter on the thread that
// then execs the command.
//
// By default (WithLauncher; WithEnv or LauncherFromEnv turns it off when
// the environment the caller passes has HARNESS_SANDBOX_LAUNCHER=0) the
// bwrap and landlock backends put up their outer walls once per session,
// around a launcher: the harness binary, started lazily by the first Run,
// that serves commands over an inherited socketpair. Each command goes to
// a supervisor the launcher keeps (one command at a time each, reused): a
// child subreaper that puts up the inner stage above on one locked thread,
// starts /bin/sh -c from it in a new session, lets that thread die, and on
// exit, timeout or cancel kills every descendant until none is left. A
// launcher that died is restarted by the next Run, which says so in its
// output; Close stops it. The outer walls cost 6-9 ms per bwrap start, so
// this keeps a command within about 1.5x of running it unwalled
// (BenchmarkOverhead).
//
// # Threats and the wall that answers each
//
//   - Writing outside the project, or to .git (hooks run on the user's next
//     commit, config can name a filter or fsmonitor command): a read-only
//     bind of /, the project bound read-write, carve-outs bound read-only on
//     top; Landlock grants writes only to the project and the private /tmp.
//   - Commits inside, without the above: the project's own git directory
//     (and a worktree's gitdir and common directory) is a shadow
//     (gitshadow/gitwrite.go): refs, logs and packed-refs its own copies
//     (see below), HEAD, the index and the other data files copied in before each
//     command and copied back after it only when they are what git writes
//     there (HEAD a ref under refs/ or a hash, the index an index, never a
//     link), everything else (config, hooks/, info/, commondir, the
//     pointer file) read-only; a file planted under any other name stays
//     in the shadow and is swept before the next command. The shadow lives
//     outside the private /tmp, so a command cannot swap it for a link.
//   - Destroying history (rm -rf .git, reflog expire + gc --prune, deleting
//     or overwriting objects or packs): objects are append-only
//     (gitshadow/gitobjects.go). The shadow's own objects directory takes new
//     objects, with the real one mounted read-only inside it as its
//     alternate; as each object's name appears (an inotify watch) and
//     again after each command, the host adds each new loose object
//     whose content hashes to its name, and each new pack through its own
//     `git index-pack` (the command's index is never trusted), never
//     replacing a file. Refs, reflogs and packed-refs are the shadow's own
//     copies, and reach the host after the command only pointing at
//     objects the host has with all they reach; refs/replace never
//     changes, tags are put back, a ref refused for lost objects is
//     reported with its commit id, so the host's git fsck passes after
//     any command (gitshadow/refs.go). So every commit a branch ever
//     pointed at stays in the repository: branch heads that move off
//     their history or vanish are reported with the hash to return to
//     (Result.GitMoves). git
//     push is refused inside by configuration (an empty pushInsteadOf),
//     besides the permission gate's rule. Landlock without user
//     namespaces cannot mount the shadow: .git stays read-only there.
//   - Remounting / read-write, or mounting over a carve-out: capabilities are
//     all dropped (bwrap --cap-drop ALL; the helper clears every set and
//     locks the securebits), and seccomp denies mount, umount2, pivot_root,
//     open_tree, move_mount, fsopen, fsconfig, fsmount, fspick, mount_setattr.
//   - Regaining privilege in a fresh user namespace (unshare -Ur, then
//     mount or bind at will): no nested user namespaces (bwrap
//     --disable-userns) and seccomp denies unshare, setns and namespace
//     flags on clone; clone3 reports ENOSYS because seccomp cannot read its
//     flags.
//   - Reaching the host through /proc/<pid>/root or signalling host
//     processes: a PID namespace with a fresh /proc; Landlock's scope keeps
//     signals inside.
//   - Host daemons over unix sockets (docker = root, ssh-agent = the user's
//     keys, D-Bus = the desktop session): seccomp denies socket(AF_UNIX)
//     (socketpair stays for local pipes) and the known sockets are masked;
//     abstract sockets live in the network namespace. AF_VSOCK reaches the
//     hypervisor host: denied too.
//   - The network (exfiltration, downloads): a network namespace with only
//     loopback. The landlock backend has none, so its seccomp filter denies
//     socket() for every family and Landlock denies TCP bind and connect.
//     The way out, with WithProxy (netproxy/proxy.go), is the host's Proxy: the
//     launcher listens on ProxyPort on the namespace's loopback and passes
//     each accepted connection to the host over its control channel (no
//     unix socket a command could open); a sandbox of its own (no
//     launcher, or one that failed to start) has its inner stage listen
//     there and hand the listening socket itself to the host over an
//     inherited socketpair before it execs the command, so nothing inside
//     keeps it and the port stays bound. The landlock backend then gets a
//     network namespace of its own (the launcher's, or each command's),
//     commands may create TCP sockets there, and Landlock (ABI 4) lets
//     them connect to that port only and bind none. Without user
//     namespaces (no network namespace) there is no proxy and no socket:
//     Landlock's network rules name a port, not an address, so a grant for
//     the proxy's port on the host's loopback would reach that port on
//     any host. The proxy speaks HTTP (CONNECT and absolute-form) and
//     SOCKS5 (CONNECT, no authentication) on the one port, resolves names
//     on the host, dials the address it checked, refuses private addresses
//     without an exact rule, checks a tunnel's TLS server name, bounds
//     connections and closes idle ones, and records every connection with
//     the bytes each way; a command's output says which connections were
//     refused and why.
//   - Typing into the user's terminal (TIOCSTI, TIOCLINUX): a new session
//     without a controlling terminal, and seccomp denies both ioctls.
//   - Kernel attack surface that has produced sandbox escapes: io_uring_*
//     (bypasses seccomp's view of system calls), bpf, perf_event_open,
//     userfaultfd (widens race windows), keyctl/add_key/request_key (the
//     kernel keyring is not namespaced), kexec and module loading.
//   - Foreign system-call ABIs: the filter kills the process on an
//     architecture mismatch (i386 int 0x80) and on x32 numbers, which would
//     otherwise dodge every rule above.
//   - Secrets: deny-read paths are masked (an empty tmpfs or /dev/null), the
//     environment is cleared to an allowlist, and no variable whose name
//     says key, token, secret or password passes even when allowlisted.
//   - Outliving the timeout (background, setsid, nohup, double fork): with
//     a sandbox per command, the command is the init of its own PID
//     namespace, so killing it kills them all; with the launcher, its
//     supervisor is a child subreaper, so every orphan of the command's tree
//     is re-parented to it, and it SIGKILLs the tree from /proc until no
//     descendant is left, when the command times out and also when it exits
//     (as a namespace's end would). A grandchild cannot hold the output pipe
//     past a one-second grace.
//   - The launcher's own surface (it and the supervisors share the
//     commands' uid and PID namespace): a command inherits no descriptor
//     but stdin, stdout and stderr (everything else is close-on-exec, also
//     what the harness itself inherited); it cannot reach the control
//     channel, an unnamed socketpair, and socket(AF_UNIX) is denied anyway;
//     the channel only asks for more commands behind the same walls. Each
//     command runs in a Landlock domain of its own, created on a thread
//     that dies once the shell is forked, so the launcher and supervisors
//     are outside it: Landlock forbids ptrace out of a domain (any ABI),
//     and the launcher and supervisors are not dumpable (PR_SET_DUMPABLE 0),
//     so their memory, descriptors and environment stay closed too; from
//     ABI 6 Landlock's signal scope stops a command from killing them or a
//     command running beside it. Below ABI 6 such a kill is a denial of
//     service only: the next command restarts the launcher, and the
//     orphans of a killed supervisor are killed by the launcher, also a
//     subreaper. The launcher runs under the same seccomp filter, on every
//     thread, and without capabilities.
//   - Commands running at once see each other in /proc (their command
//     lines); with a sandbox per command they do not. Their memory and
//     descriptors stay closed (sibling Landlock domains).
//   - Exhausting memory through output (yes): a bounded buffer.
//   - A fork bomb or a runaway build: RLIMIT_NPROC (counted inside the
//     sandbox's user namespace) and RLIMIT_DATA on every command, 1024
//     processes, and 8 GiB or half the machine's memory (the less) of
//     data per process by default (HARNESS_SANDBOX_PIDS,
//     HARNESS_SANDBOX_MEMORY); the kernel exempts root from RLIMIT_NPROC,
//     so for a root harness the supervisor (or the host, per command)
//     counts the tree and kills it past the bound. The result says which
//     bound was hit. Where a cgroup v2 is writable (root, or a delegated
//     subtree; linux/cgroup) each command, or the launcher with all it
//     runs, starts inside a child cgroup of the session's
//     (CLONE_INTO_CGROUP, so nothing it forks is ever outside), which
//     cgroup.kill ends whole at the command's end, the launcher's and
//     Close, with pids.max and memory.max where those controllers can be
//     enabled there. The session's directory goes beneath the harness's
//     own cgroup or, where that cannot hand the controllers down (a leaf
//     among other processes, like a terminal's systemd scope), beside it
//     beneath its parent. Under the launcher on a v2-only host a command
//     cannot join a cgroup at clone time (clone3, whose flags the
//     commands' seccomp filter cannot read, is refused inside), and moving
//     a process waits out an RCU grace period (6 to 24 ms a move here, a
//     command costs 2): so before each command its supervisor sends the
//     host a pidfd of itself, and the host, the first time, moves it into
//     a cgroup of its own with the limits (plus room for the supervisor);
//     every command it forks is born there, one at a time, and anything
//     but the supervisor left there after a command is killed with it.
//     On a hybrid host (v2 mounted without controllers,
//     pids and memory on v1 hierarchies) each command gets a child of the
//     session's directory in the v1 pids and memory hierarchies instead,
//     with pids.max and memory.limit_in_bytes (memsw too) for the command
//     and all it starts: the thread that forks the command (the host's,
//     or under the launcher the supervisor's, with the tasks files the
//     host opened and sent along) writes itself into them first, so the
//     command is born inside, and back out after the fork. A child that
//     ends empty and under its limits is kept for a later command (a
//     memory cgroup's mkdir and rmdir cost more than the rest of a
//     command); any other is killed and removed. A command that reaches
//     the pids limit is killed whole (as past the counted bound); the
//     kernel's OOM killer acts at the memory limit; the result names the
//     limit and what holds it. The container backends keep the engine's
//     cgroup for the session's container instead. The battery (doctor)
//     says which bounds are in force and what holds each, and checks live
//     that a command runs in a cgroup carrying them. A dead harness's
//     empty cgroups are removed at the next start, as its temporary
//     directory is.
//   - Racing the host-side file tools (a symlink swapped between check and
//     use with renameat2 RENAME_EXCHANGE, by a test command or a parallel
//     sub-agent): the tools never check a path and reopen it; OpenRead opens
//     O_PATH with RESOLVE_NO_MAGICLINKS and checks the opened descriptor's
//     real path (/proc/self/fd) and identity, WriteFile walks directory
//     descriptors beneath the writable root and renames relative to the
//     last, Walk opens each directory relative to its parent without
//     following links. The tamper check runs around file-tool writes too.
//   - Making the file tools block or exhaust memory (/dev/zero, a FIFO,
//     /dev/stdin, /dev/fd/N, a 2 GB sparse file, /proc/kallsyms): regular
//     files only, nothing under /proc, /sys or /dev, the size bound checked
//     before a byte is read; a root harness is held to the mode bits a
//     command (no capabilities) faces.
//   - Outliving the command as a leader whose main thread exited while
//     others run (a zombie in /proc/<pid>/stat): the kill scan counts such a
//     process alive by its threads and kills it.
//   - Code of the agent's making run by harness on the host (a clean
//     filter, fsmonitor or hook in a repository made mid-session, run by
//     the per-turn git status): harness's git runs inside the walls (Git).
//   - Repositories, gitdir pointers, separate or bare gitdirs and hooks
//     paths created mid-session, to run code on the user's next git
//     command: Refresh after every command and file-tool write protects
//     them read-only (a new launcher mounts them), the file tools refuse
//     writes there and into git-shaped directories, each is reported with
//     what it would run; Findings, read again at the session's end, lists
//     them for the closing warning (harness run's stderr and its json
//     sandbox_findings, chat before a session closes).
//   - Instructions and skills as links to secrets: read through OpenRead.
//   - Secrets of other tools and sessions: other agents' credentials,
//     git's XDG store, the Hugging Face token, shell histories, the session
//     store and other sessions' spill files are hidden (Live.Keep keeps
//     this session's spill directory readable); ~/.agents/hidden adds
//     paths; variables pass by exact name only.
//   - Sub-agents writing through bash: their bash runs with Cmd.ReadOnly
//     (the project and --add-dir roots read-only, /tmp writable), or they
//     get none where the backend has no such variant.
//   - chmod, chown, utime and xattr changes outside the project (Landlock
//     does not mediate them): bwrap's read-only bind of /; the landlock
//     backend, in its mount namespace, makes every mount read-only but the
//     writable roots' (helperConfig.RORoot, mount_setattr), so they fail
//     with EROFS; without a mount namespace seccomp denies every form of
//     them (path and descriptor: seccomp sees neither the path nor how a
//     descriptor was opened), inside the project too, and Limits says so.
//
// # macOS (seatbelt)
//
// The profile (seatbelt/profile.go) is built as Codex's is: (deny default), no
// system.sb, every grant named with the tool that needs it. Threats and the
// rule that answers each there:
//
//   - Another spelling of a protected path (case, /System/Volumes/Data):
//     host-side checks compare device and inode (walls/identity.go) and fold
//     names not there yet by Unicode case orbit (the Kelvin sign is k, the
//     long s is s); the profile denies both spellings, and a name pattern
//     folded the same way (a -D parameter, never profile text) denies a
//     .git anywhere under a writable root and each protected path that
//     does not exist yet, also through /System/Volumes/Data.
//   - Reading other processes' environments (KERN_PROCARGS2, ps -E): only
//     named sysctls; process info of the sandbox's own processes only.
//   - The user's terminals: none but the ptys a command opens itself (the
//     pty extension), and commands start in a new session.
//   - A channel out while there is no network: no trustd or other daemon
//     that fetches; unix sockets only inside the session's $TMPDIR. With
//     WithProxy the proxy listens on a free port of the host's loopback
//     and the profile allows TCP sockets and outbound to localhost on that
//     port only (seatbelt/proxy.go).
//   - Secrets behind a symlink in a hidden directory: the link's target is
//     hidden too (walls/secrets.go); macOS's stores (keychains, browser profiles,
//     cookies) are on the list; mapping a secret executable is denied with
//     reading it.
//   - Outliving the command: a kqueue tracker (seatbelt/track_darwin.go) follows every
//     fork from the start (the shell waits at a gate on descriptor 3 until
//     the tracker follows it) and kills the tree on exit, timeout and Close.
//   - A sandbox that did not start passing for one that holds: the
//     self-check (selfcheck.go) needs a write inside to work and one outside
//     to be denied, and names sandbox-exec's exit 65 (no compile).
//
// # Containers (docker, podman)
//
// The container backend (container/container_linux.go) maps the same Policy onto
// an engine through its Engine API (the official client, with package engine's
// additions): one long-lived container per
// session, an exec per command. Only what the Policy names is mounted —
// the writable roots read-write at the same paths, the carve-outs and git
// shadows as bwrap mounts them, the private /tmp (a host directory, so it
// outlives a container replaced when the carve-outs grow), the harness
// binary read-only; hidden paths are not there at all. The container has
// --network none, every capability dropped, no-new-privileges, a
// read-only root, pids and memory limits, the environment allowlist, and
// a seccomp profile with the inner stage's denials
// (container/container_seccomp_linux.go). The harness binary is its init (killing
// strays) and each command's supervisor (containerserve_linux.go): a
// child subreaper that starts the command behind the inner stage and
// kills its whole tree when it exits or when the exec's stdin ends (the
// host's timeout or cancel). With WithProxy the init also listens on
// ProxyPort on the container's loopback and passes each connection to the
// host's Proxy, as the launcher does, over a unix socket of the host's
// bound at /.harness/proxy.sock (container/container_net_linux.go); the engine's
// profile then lets through that one kind of unix socket (seqpacket) for
// the init, while the inner stage still denies commands every unix
// socket. The image: HARNESS_IMAGE (in the environment given with
// WithEnv; the sandbox reads none itself), else the project's
// harness.Dockerfile (built with the Dockerfile alone as context), else
// DefaultImage, an empty root with the host's /usr and /etc bound
// read-only (built offline, in a moment). auto never picks a container.
//
// What a backend cannot hold on the machine at hand, Limits says plainly
// (and `harness doctor` prints it).
package sandbox
