package inner

import (
	"encoding/json"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// The pieces of one command's supervision (superviseOne): the
// descriptors it came with, its start, and the wait for its end.

// commandFDs are the descriptors a job came with beyond its control
// socket and output: the cgroup tasks files to enter and to leave by
// (pairs), and an odd one last, the write journal (wrote_linux.go).
type commandFDs struct {
	raw          []int    // every one past stdio, closed at the end
	enter, leave []int    // the tasks files
	journal      *os.File // closed by itself, not with the raw descriptors
	placed       []int    // a placement's own, closed at the end too
}

func splitCommandFDs(fds []int) commandFDs {
	cf := commandFDs{raw: fds[3:]}
	places := fds[3:]
	if len(places)%2 == 1 {
		cf.journal = os.NewFile(uintptr(places[len(places)-1]), "write journal")
		places = places[:len(places)-1]
	}
	cf.enter, cf.leave = places[:len(places)/2], places[len(places)/2:]
	return cf
}

func (cf *commandFDs) close() {
	for _, fd := range cf.raw {
		if cf.journal == nil || uintptr(fd) != cf.journal.Fd() {
			unix.Close(fd)
		}
	}
	if cf.journal != nil {
		cf.journal.Close()
	}
	for _, fd := range cf.placed {
		unix.Close(fd)
	}
}

// startJob has the command thread start j, in the cgroup the host placed
// this supervisor's command in (place: asked for first), and closes this
// side's output ends; ok is false when there is nothing left to report
// or the failure was reported already.
func startJob(t commandThread, j Job, cf *commandFDs, place bool, ctrl, out, errw *os.File, enc *json.Encoder) (s started, ok bool) {
	defer out.Close()
	defer errw.Close()
	enter, leave := cf.enter, cf.leave
	if place {
		pe, pl, err := askPlacement(ctrl)
		if err != nil {
			close(t.jobs) // the host is gone: nothing to report to
			return s, false
		}
		if len(pe) > 0 {
			enter, leave = pe, pl
			cf.placed = append(cf.placed, pe[0], pl[0])
		}
	}
	// The output ends are closed before a failure's report: the host's
	// copies then end with it.
	fail := func(err error, code int) {
		fmt.Fprintf(errw, "harness sandbox: %v\n", err)
		out.Close()
		errw.Close()
		enc.Encode(Report{Done: true, Code: code})
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		close(t.jobs)
		fail(err, HelperFailed)
		return s, false
	}
	t.jobs <- startReq{job: j, stdio: []uintptr{null.Fd(), out.Fd(), errw.Fd()}, enter: enter, leave: leave}
	s = <-t.started
	null.Close()
	if s.err != nil {
		fail(s.err, s.code)
		return s, false
	}
	return s, true
}

// awaitCommand waits for the command (pid) to end, killing its tree when
// the host says so (or goes away) or when it passes maxProcs (limit is
// then maxProcs), and reaps whatever it left.
func awaitCommand(pid int, dec *json.Decoder, maxProcs int) (ws unix.WaitStatus, limit int) {
	exited := make(chan unix.WaitStatus, 1)
	go func() { exited <- reapUntil(pid) }()
	kill := make(chan struct{})
	go func() {
		for {
			var m Job
			if err := dec.Decode(&m); err != nil || m.Kill {
				close(kill)
				return
			}
		}
	}()
	// The kernel exempts root from RLIMIT_NPROC: count the tree and kill
	// it past the bound (the rlimit already holds everyone else).
	stopWatch := make(chan struct{})
	over := WatchProcs(selfPid(), maxProcs, stopWatch)
	select {
	case ws = <-exited:
		// Whatever it left running dies with it, as when a PID namespace's
		// init exits.
	case <-kill:
		killDescendants(selfPid())
		ws = <-exited
	case <-over:
		limit = maxProcs
		killDescendants(selfPid())
		ws = <-exited
	}
	close(stopWatch)
	if !reapAll() {
		killDescendants(selfPid())
		reapAll()
	}
	return ws, limit
}
