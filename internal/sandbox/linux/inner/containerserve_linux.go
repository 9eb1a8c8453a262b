package inner

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The inside of the container backend: the harness binary, mounted
// read-only at containerHelper, is the container's init (containerInitArg)
// and each command's supervisor (containerExecArg).

// runContainerStage serves argv when it names a container stage (it then
// never returns) and returns otherwise.
func runContainerStage(argv []string) {
	switch argv[1] {
	case ContainerInitArg:
		exitStage(serveContainerInit(argv[2:]))
	case ContainerExecArg:
		if len(argv) != 4 {
			fmt.Fprintln(os.Stderr, "harness container exec: bad arguments")
			os.Exit(HelperFailed)
		}
		exitStage(serveContainerExec(argv[2], argv[3]))
	}
}

// serveContainerInit is PID 1 of a session's container: it reaps, and
// kills what reaches it. Every command runs under a supervisor that is a
// child subreaper, so a process re-parented to init is an orphan of a
// supervisor that died (killed from inside on a kernel without Landlock
// signal scoping): its tree must not outlive its command. Execs have a
// parent outside the container (ppid 0 here) and are left alone. With a
// port (args[0]), it also forwards the network proxy (container_net_linux.go),
// and the host loopback ports the rules allow (args[1:]), as the bwrap
// launcher does.
func serveContainerInit(args []string) int {
	if err := guardSelf(); err != nil {
		fmt.Fprintf(os.Stderr, "harness container init: %v\n", err)
		return HelperFailed
	}
	if len(args) > 0 {
		if err := serveContainerProxy(args[0], args[1:]); err != nil {
			fmt.Fprintf(os.Stderr, "harness container init: %v\n", err)
			return HelperFailed
		}
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		for {
			var ws unix.WaitStatus
			if _, err := unix.Wait4(-1, &ws, 0, nil); err != nil && err != unix.EINTR {
				time.Sleep(50 * time.Millisecond)
			}
		}
	}()
	self := selfPid()
	tick := time.NewTicker(200 * time.Millisecond)
	for {
		select {
		case <-stop:
			return 0
		case <-tick.C:
			for _, p := range scanProcs() {
				if p.ppid == self && p.live() {
					killProc(p.pid)
					killDescendants(p.pid)
				}
			}
		}
	}
}

// serveContainerExec supervises one command: /bin/sh -c script behind the
// inner stage (cfgJSON, as the bwrap backend's), in a new session, stdin
// at /dev/null, stdout and stderr the exec's own. When the command exits,
// or when this process's stdin ends (the host's kill: a timeout, a
// cancel, the host gone), every descendant is killed; it exits with the
// command's status (128+n for signal n).
func serveContainerExec(cfgJSON, script string) int {
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "harness container exec: %v\n", err)
		return HelperFailed
	}
	if err := guardSelf(); err != nil {
		return fail(err)
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fail(fmt.Errorf("becoming a child subreaper: %w", err))
	}
	dir, err := os.Getwd()
	if err != nil {
		return fail(err)
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		return fail(err)
	}
	pid, err := syscall.ForkExec("/proc/self/exe", []string{os.Args[0], helperArg, cfgJSON, "--", "/bin/sh", "-c", script}, &syscall.ProcAttr{
		Dir: dir, Env: os.Environ(), Files: []uintptr{null.Fd(), 1, 2},
		Sys: &syscall.SysProcAttr{Setsid: true},
	})
	null.Close()
	if err != nil {
		return fail(fmt.Errorf("starting the command: %w", err))
	}
	kill := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		close(kill)
	}()
	exited := make(chan unix.WaitStatus, 1)
	go func() { exited <- reapUntil(pid) }()
	var ws unix.WaitStatus
	select {
	case ws = <-exited:
	case <-kill:
		killDescendants(selfPid())
		ws = <-exited
	}
	// Whatever it left running dies with it, as when a PID namespace's
	// init exits.
	for i := 0; !reapAll() && i < 5000; i++ {
		killDescendants(selfPid())
		time.Sleep(time.Millisecond)
	}
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}
