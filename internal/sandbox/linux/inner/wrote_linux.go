package inner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Write attribution: which paths a command's processes asked to write,
// seen by the sandbox itself, so the host can tell the command's changes
// from anyone else's made in the same moment (package checkpoint).
//
// The command's thread installs, after its walls, one more seccomp filter
// with SECCOMP_FILTER_FLAG_NEW_LISTENER: it returns SECCOMP_RET_USER_NOTIF
// for the calls that create, change or remove a path (writeCalls; open
// and openat only when their flags ask to write), and the supervisor,
// whose process the thread belongs to, holds the listener. For each
// notification it reads the path arguments from /proc/PID/mem, resolves
// them against the caller's working directory or directory descriptor
// (/proc/PID/cwd, /proc/PID/fd/N), checks the notification is still
// valid (SECCOMP_IOCTL_NOTIF_ID_VALID) and answers
// SECCOMP_USER_NOTIF_FLAG_CONTINUE: the kernel then performs the call
// itself, with the caller's own credentials, and the walls decide as
// before. Nothing is emulated and nothing is refused here.
//
// This is attribution, not a security boundary: a caller can change the
// path in its memory between the read and the call (another thread), and
// a command that wants to hide a write can. The walls remain what holds
// writes; a wrong set only moves a change between "the command's" and
// "someone else's" in the journal. Children inherit the filter, so the
// whole tree is covered, double forks and background jobs included (the
// supervisor kills them all when the command ends). Paths outside the
// tracked roots (the host's Job.Track) are dropped; the set is bounded
// (maxWrotePaths, maxWroteBytes), and past it, or on anything the
// supervisor cannot read, the set is unknown and the host falls back to
// taking every change in the command's window as the command's.

// argPair names a path argument: the index of its directory descriptor
// (-1: the working directory) and of the path itself (-1: the descriptor
// alone, as fchmod).
type argPair struct{ dir, path int }

// writeCall is how one system call names the paths it writes.
type writeCall struct {
	// flagsArg, when non-zero, is the argument holding open(2) flags: the
	// call is reported only when they ask to write. howArg, when
	// non-zero, is openat2's struct open_how, whose flags the supervisor
	// reads from memory.
	flagsArg, howArg int
	paths            []argPair
	// follows: a symlink as the last component is followed.
	follows bool
}

// openWriteFlags are the open flags that make an open a write.
const openWriteFlags = unix.O_WRONLY | unix.O_RDWR | unix.O_CREAT | unix.O_TRUNC

// Bounds of one command's write set; past either it is unknown.
const (
	maxWrotePaths = 4096
	maxWroteBytes = 256 << 10
)

// MaxWroteReport bounds the JSON of a write set in a report: every byte
// of a path may take six to escape.
const MaxWroteReport = 6*maxWroteBytes + 3*maxWrotePaths

const retNotify = unix.SECCOMP_RET_USER_NOTIF

// writeProgram is the attribution filter: every other call, and any call
// of another architecture (the walls' filter kills those), is allowed.
func writeProgram() []Bpf {
	p := []Bpf{load(offArch), jeq(AuditArch, 1, 0), ret(RetAllow), load(offNr)}
	nrs := make([]uint32, 0, len(writeCalls))
	for nr := range writeCalls {
		nrs = append(nrs, nr)
	}
	slices.Sort(nrs)
	for _, nr := range nrs {
		c := writeCalls[nr]
		if c.flagsArg == 0 {
			p = append(p, jeq(nr, 0, 1), ret(retNotify))
			continue
		}
		// The flags are an int: the low word. Both branches return, as
		// the load replaced the number.
		p = append(p, jeq(nr, 0, 4),
			load(offArg0+8*uint32(c.flagsArg)),
			Bpf{Code: unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K, Jt: 0, Jf: 1, K: openWriteFlags},
			ret(retNotify), ret(RetAllow))
	}
	return append(p, ret(RetAllow))
}

// installWriteListener installs the attribution filter on the calling
// thread (no_new_privs already set) and returns its listener, or why not.
func installWriteListener() (int, error) {
	if AuditArch == 0 || len(writeCalls) == 0 {
		return -1, errors.New("no attribution filter for this architecture")
	}
	if selfPid() != os.Getpid() {
		// Notifications carry pids of this PID namespace; a /proc of
		// another would name other processes.
		return -1, errors.New("/proc is not this PID namespace's")
	}
	prog := writeProgram()
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	fd, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&fprog)))
	if e != 0 {
		return -1, fmt.Errorf("seccomp user notification: %w", e)
	}
	// The caller waits while the supervisor answers: wake it on the
	// answering CPU (6.6 and later; older kernels just wake it later).
	unix.Syscall(unix.SYS_IOCTL, fd, unix.SECCOMP_IOCTL_NOTIF_SET_FLAGS, unix.SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP)
	return int(fd), nil
}

// The kernel's struct seccomp_notif and seccomp_notif_resp.
type seccompNotif struct {
	ID    uint64
	Pid   uint32
	Flags uint32
	Nr    int32
	Arch  uint32
	IP    uint64
	Args  [6]uint64
}

type seccompResp struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}

// writeLog collects one command's write set.
type writeLog struct {
	// journal, when the host gave one, gets each path as it is added, a
	// JSON string a line, before the call it came from goes on, and
	// "null" once the set is unknown: a harness killed mid-command
	// leaves its record of what the command wrote (package checkpoint).
	journal *os.File
	track   []string
	mu      sync.Mutex
	seen    map[string]bool
	dirs    map[string]string // realDir's, used by the serving goroutine alone
	size    int
	why     string // set once the set is unknown
}

// serveWrites answers fd's notifications until stop is called, which
// returns the set; only paths beneath track are kept. stop must be called
// once the command's tree is gone: it closes fd.
func serveWrites(fd int, track []string, journal *os.File) (stop func() Writes) {
	l := &writeLog{track: track, seen: map[string]bool{}, dirs: map[string]string{}, journal: journal}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		l.fail("a pipe: " + err.Error())
		// Without a way to stop it, serve until the filter has no users.
		p = [2]int{-1, -1}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.serve(fd, p[0])
	}()
	return func() Writes {
		if p[1] >= 0 {
			unix.Write(p[1], []byte{0})
		}
		<-done
		unix.Close(fd)
		if p[0] >= 0 {
			unix.Close(p[0])
			unix.Close(p[1])
		}
		return l.result()
	}
}

func (l *writeLog) serve(fd, stopFD int) {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(stopFD), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(fds, -1)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			l.fail("polling: " + err.Error())
			return // stop closes fd: a caller still waiting fails with ENOSYS
		}
		if fds[0].Revents&unix.POLLIN != 0 {
			l.handle(fd)
		} else if fds[0].Revents&(unix.POLLHUP|unix.POLLERR) != 0 {
			// No process uses the filter any more.
			if stopFD < 0 {
				return
			}
			fds[0].Fd = -1
		}
		if fds[1].Revents != 0 {
			return
		}
	}
}

// handle answers one notification, recording the paths it names.
func (l *writeLog) handle(fd int) {
	var n seccompNotif
	if err := ioctlPtr(fd, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&n)); err != nil {
		return // ENOENT: the caller died meanwhile
	}
	paths, err := l.pathsOf(fd, &n)
	// Still the same call of the same process: what was read is its own.
	// One that is no longer valid never happens (its process died, as
	// when harness is killed and the tree with it): a read that failed
	// then loses nothing, and the set so far stays known.
	valid := ioctlPtr(fd, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&n.ID)) == nil
	if err != nil && valid {
		l.fail(err.Error())
	}
	if valid {
		for _, p := range paths {
			l.add(p, writeCalls[uint32(n.Nr)].follows)
		}
	}
	resp := seccompResp{ID: n.ID, Flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
	ioctlPtr(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
}

func ioctlPtr(fd int, req uint, arg unsafe.Pointer) error {
	for {
		_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg))
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return e
		}
		return nil
	}
}

// pathsOf reads the absolute paths a notified call names.
func (l *writeLog) pathsOf(fd int, n *seccompNotif) ([]string, error) {
	if l.unknown() {
		return nil, nil // nothing more to learn
	}
	c, ok := writeCalls[uint32(n.Nr)]
	if !ok {
		return nil, nil
	}
	pid := strconv.Itoa(int(n.Pid))
	if c.howArg != 0 {
		// openat2: struct open_how starts with the flags, a u64.
		var b [8]byte
		if err := readMem(int(n.Pid), b[:], n.Args[c.howArg]); err != nil {
			return nil, fmt.Errorf("reading openat2's flags: %w", err)
		}
		if *(*uint64)(unsafe.Pointer(&b[0]))&openWriteFlags == 0 {
			return nil, nil
		}
	}
	var out []string
	for _, a := range c.paths {
		name := ""
		if a.path >= 0 {
			var err error
			if name, err = readCString(int(n.Pid), n.Args[a.path]); err != nil {
				return nil, err
			}
		}
		if filepath.IsAbs(name) {
			out = append(out, name)
			continue
		}
		base := "/proc/" + pid + "/cwd"
		if a.dir >= 0 && int32(n.Args[a.dir]) != unix.AT_FDCWD {
			base = "/proc/" + pid + "/fd/" + strconv.Itoa(int(int32(n.Args[a.dir])))
		}
		dir, err := os.Readlink(base)
		if err != nil || !filepath.IsAbs(dir) || strings.HasSuffix(dir, " (deleted)") {
			continue // not a directory of the file system (the call fails), or gone
		}
		out = append(out, filepath.Join(dir, name))
	}
	return out, nil
}

// readMem reads len(b) bytes at addr in pid's memory, in one call
// (process_vm_readv: no descriptor to open per notification).
func readMem(pid int, b []byte, addr uint64) error {
	local := []unix.Iovec{{Base: &b[0], Len: uint64(len(b))}}
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(b)}}
	n, err := unix.ProcessVMReadv(pid, local, remote, 0)
	if err != nil {
		return err
	}
	if n < len(b) {
		return errors.New("a short read")
	}
	return nil
}

// readCString reads a NUL-terminated string of at most PATH_MAX bytes at
// addr, a page at a time (the next page may not be mapped).
func readCString(pid int, addr uint64) (string, error) {
	const pathMax, page = 4096, 4096
	var out []byte
	buf := make([]byte, page)
	for len(out) < pathMax {
		if addr > math.MaxInt64 {
			return "", errors.New("a path argument out of range")
		}
		b := buf[:page-int(addr%page)]
		if err := readMem(pid, b, addr); err != nil {
			return "", fmt.Errorf("reading a path argument: %w", err)
		}
		if i := bytes.IndexByte(b, 0); i >= 0 {
			return string(append(out, b[:i]...)), nil
		}
		out = append(out, b...)
		addr += uint64(len(b))
	}
	return "", nil // longer than PATH_MAX: the call fails
}

// add records p, and p with its directories' symlinks resolved (the host
// scans the real places), each only beneath a tracked root.
func (l *writeLog) add(p string, follows bool) {
	p = filepath.Clean(p)
	cands := []string{p}
	if dir, err := l.realDir(filepath.Dir(p)); err == nil {
		r := filepath.Join(dir, filepath.Base(p))
		if follows {
			if t, err := filepath.EvalSymlinks(r); err == nil {
				r = t
			}
		}
		if r != p {
			cands = append(cands, r)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range cands {
		if l.why != "" || l.seen[c] || !l.tracked(c) {
			continue
		}
		if !utf8.ValidString(c) {
			l.why = "a path written is not UTF-8"
			continue
		}
		l.seen[c] = true
		l.size += len(c)
		if len(l.seen) > maxWrotePaths || l.size > maxWroteBytes {
			l.why = fmt.Sprintf("the command wrote more than %d paths", maxWrotePaths)
			if l.size > maxWroteBytes {
				l.why = fmt.Sprintf("the paths the command wrote take more than %d KiB", maxWroteBytes>>10)
			}
			l.journalLine(nil)
			continue
		}
		l.journalLine(&c)
	}
}

// journalLine appends p to the journal ("null": the set is unknown); a
// journal that fails makes the set unknown there too. Called with mu held.
func (l *writeLog) journalLine(p *string) {
	if l.journal == nil {
		return
	}
	b, _ := json.Marshal(p)
	if _, err := l.journal.Write(append(b, '\n')); err != nil {
		l.journal = nil
	}
}

// realDir is dir with its symlinks resolved, remembered for the command
// (a command rarely swaps a directory for a link mid-way, and a wrong
// guess only misattributes): most writes land in few directories.
func (l *writeLog) realDir(dir string) (string, error) {
	if r, ok := l.dirs[dir]; ok {
		return r, nil
	}
	r, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	if len(l.dirs) >= maxDirCache {
		clear(l.dirs)
	}
	l.dirs[dir] = r
	return r, nil
}

// maxDirCache bounds the directories realDir remembers.
const maxDirCache = 1024

func (l *writeLog) tracked(p string) bool {
	for _, r := range l.track {
		if within(p, r) {
			return true
		}
	}
	return false
}

func (l *writeLog) fail(why string) {
	l.mu.Lock()
	if l.why == "" {
		l.why = why
		l.journalLine(nil)
	}
	l.mu.Unlock()
}

func (l *writeLog) unknown() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.why != ""
}

func (l *writeLog) result() Writes {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.track) == 0 {
		return Writes{Why: "the host named no roots to attribute"}
	}
	if l.why != "" {
		return Writes{Why: l.why}
	}
	out := make([]string, 0, len(l.seen))
	for p := range l.seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return Writes{Paths: out, Known: true}
}
