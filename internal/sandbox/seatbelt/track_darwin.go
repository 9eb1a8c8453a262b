package seatbelt

import (
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// kqTracker follows one command's processes from its start: kqueue
// EVFILT_PROC reports each fork (macOS has no NOTE_TRACK) and the root's
// exit; on a fork it rescans the process table and watches every new
// descendant, so a process stays known after its parent exits or it calls
// setsid. kill SIGKILLs all of them until none is left.
type kqTracker struct {
	kq, root, self int
	mu             sync.Mutex
	tracked        trackedSet
	stop           chan struct{}
	wg             sync.WaitGroup
}

// trackProcesses starts following pid's tree. It never fails the command:
// without kqueue the session, group and table scan still find most of it.
func trackProcesses(pid int) *kqTracker {
	t := &kqTracker{kq: -1, root: pid, self: os.Getpid(), tracked: trackedSet{}, stop: make(chan struct{})}
	if kq, err := unix.Kqueue(); err == nil {
		t.kq = kq
	}
	t.watch(pid)
	t.rescan()
	if t.kq >= 0 {
		t.wg.Add(1)
		go t.loop()
	}
	return t
}

func (t *kqTracker) watch(pid int) {
	if t.kq < 0 {
		return
	}
	var ev unix.Kevent_t
	unix.SetKevent(&ev, pid, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_CLEAR)
	ev.Fflags = unix.NOTE_FORK | unix.NOTE_EXIT
	_, _ = unix.Kevent(t.kq, []unix.Kevent_t{ev}, nil, nil) // ESRCH: it is gone already
}

// processTable reads the process table (kern.proc.all); the members of
// session sid (kern.proc.session) carry it, the others -1.
func processTable(sid int) []procEntry {
	procs, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil
	}
	inSession := map[int]bool{}
	if sess, err := unix.SysctlKinfoProcSlice("kern.proc.session", sid); err == nil {
		for _, p := range sess {
			inSession[int(p.Proc.P_pid)] = true
		}
	}
	out := make([]procEntry, 0, len(procs))
	for _, p := range procs {
		e := procEntry{
			pid: int(p.Proc.P_pid), ppid: int(p.Eproc.Ppid), pgid: int(p.Eproc.Pgid), sid: -1,
			start: p.Proc.P_starttime.Sec*1_000_000 + int64(p.Proc.P_starttime.Usec),
		}
		if inSession[e.pid] {
			e.sid = sid
		}
		out = append(out, e)
	}
	return out
}

// rescan adopts the command's current processes and watches new ones.
func (t *kqTracker) rescan() []procEntry {
	t.mu.Lock()
	defer t.mu.Unlock()
	before := len(t.tracked)
	members := t.tracked.adopt(processTable(t.root), t.root, t.self)
	if len(t.tracked) != before {
		for _, e := range members {
			t.watch(e.pid)
		}
	}
	return members
}

func (t *kqTracker) loop() {
	defer t.wg.Done()
	evs := make([]unix.Kevent_t, 16)
	ts := unix.NsecToTimespec(int64(100 * time.Millisecond))
	for {
		select {
		case <-t.stop:
			return
		default:
		}
		n, err := unix.Kevent(t.kq, nil, evs, &ts)
		if err != nil && err != unix.EINTR {
			return
		}
		rootExited := false
		for _, ev := range evs[:max(n, 0)] {
			if ev.Fflags&unix.NOTE_EXIT != 0 && int(ev.Ident) == t.root {
				rootExited = true
			}
		}
		if n > 0 {
			t.rescan()
		}
		if rootExited {
			// As a PID namespace's end would: nothing outlives the command,
			// and nothing holds its output pipe open.
			t.killAll()
		}
	}
}

// killAll SIGKILLs every process of the command until a scan finds none.
func (t *kqTracker) killAll() {
	for i := 0; i < 50; i++ {
		members := t.rescan()
		alive := 0
		for _, e := range members {
			if e.pid == t.root {
				continue // the root is reaped by its Wait, not here
			}
			if unix.Kill(e.pid, unix.SIGKILL) == nil {
				alive++
			}
		}
		if alive == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// kill kills the tree and stops following it.
func (t *kqTracker) kill() {
	t.killAll()
	select {
	case <-t.stop:
	default:
		close(t.stop)
	}
	t.wg.Wait()
	if t.kq >= 0 {
		unix.Close(t.kq)
		t.kq = -1
	}
}
