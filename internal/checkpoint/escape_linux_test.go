package checkpoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/harness-dev/harness/internal/testenv"
)

// watch reports every inotify event on dir and the files in it (an open,
// a read, a write, a chmod, an entry made, removed or moved): what the
// kernel saw, not what the code under test says it did. stop returns the
// events seen.
func watch(t *testing.T, dir string) (stop func() []string) {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		t.Fatalf("inotify: %v", err)
	}
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_ALL_EVENTS); err != nil {
		unix.Close(fd)
		t.Fatalf("inotify watch %s: %v", dir, err)
	}
	return func() []string {
		defer unix.Close(fd)
		var out []string
		buf := make([]byte, 64<<10)
		for {
			n, err := unix.Read(fd, buf)
			if n <= 0 || err != nil {
				return out
			}
			for off := 0; off+unix.SizeofInotifyEvent <= n; {
				mask := binary.NativeEndian.Uint32(buf[off+4:])
				l := int(binary.NativeEndian.Uint32(buf[off+12:]))
				name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+l]), "\x00")
				out = append(out, fmt.Sprintf("%s 0x%x", filepath.Join(dir, name), mask))
				off += unix.SizeofInotifyEvent + l
			}
		}
	}
}

// fastDir is a new directory on /dev/shm (a tmpfs) where there is one,
// else t.TempDir.
func fastDir(t *testing.T) string {
	t.Helper()
	if d, err := os.MkdirTemp("/dev/shm", "harness-checkpoint-test-"); err == nil {
		t.Cleanup(func() { os.RemoveAll(d) })
		return d
	}
	return t.TempDir()
}

// flip swaps each pair of entries (a, b) as fast as it can (an atomic
// exchange, or three renames where the file system has none) until
// stopped, and returns how many times it swapped. One goroutine for all
// pairs: on two cores, more would take turns with the code under test in
// the scheduler's 10 ms slices instead of racing it.
func flip(pairs ...[2]string) (stop func() int64) {
	var n atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			a, b := pairs[i%len(pairs)][0], pairs[i%len(pairs)][1]
			tmp := a + ".flip"
			err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
			if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
				if os.Rename(a, tmp) == nil {
					os.Rename(b, a)
					os.Rename(tmp, b)
					err = nil
				}
			}
			if err == nil {
				n.Add(1)
			}
		}
	}()
	return func() int64 {
		close(done)
		wg.Wait()
		return n.Load()
	}
}

// TestFlipperRaces: 1,000 races of a goroutine that swaps a project
// directory with a link to a directory outside, and a project file with a
// link to a fake key outside, as fast as it can, against undo --force and
// checkpoint scans. The kernel (inotify) sees nothing outside opened,
// read, written or made, the outside files are as they were, and the key's
// bytes are nowhere in the store.
func TestFlipperRaces(t *testing.T) {
	testenv.Slow(t)
	races := 1000
	if testing.Short() {
		races = 100
	}
	// In memory where there is a tmpfs: on a loaded disk a race costs 10
	// times more, and the issue asks for 1,000 of them.
	outside := outsideDirIn(t, fastDir(t))
	want := snap(t, outside)
	base := fastDir(t)
	journals := filepath.Join(fastDir(t), "checkpoints")
	stop := watch(t, outside)
	var flips int64
	start := time.Now()
	for i := range races {
		root := filepath.Join(base, fmt.Sprint(i))
		os.MkdirAll(filepath.Join(root, "d"), 0o755)
		os.WriteFile(filepath.Join(root, "d", "g"), []byte("old\n"), 0o644)
		os.WriteFile(filepath.Join(root, "id_rsa"), []byte("harmless\n"), 0o600)
		os.Symlink(outside, filepath.Join(root, "d.alt"))
		os.Symlink(filepath.Join(outside, "id_rsa"), filepath.Join(root, "id_rsa.alt"))
		store, _ := Open(filepath.Join(journals, fmt.Sprintf("s%d.jsonl", i)), root)
		store.StartTurn()
		end := store.Begin("c1", "bash")
		os.WriteFile(filepath.Join(root, "d", "f"), []byte("known\n"), 0o644)
		os.WriteFile(filepath.Join(root, "d", "g"), []byte("known\n"), 0o644)
		os.WriteFile(filepath.Join(root, "id_rsa"), []byte("harmless 2\n"), 0o600)
		end()
		stopFlip := flip([2]string{filepath.Join(root, "d"), filepath.Join(root, "d.alt")},
			[2]string{filepath.Join(root, "id_rsa"), filepath.Join(root, "id_rsa.alt")})
		// The live store's undo, with the flipper running: a scan, the
		// restore, a scan.
		store.Undo(Selection{FromTurn: 1}, Options{Force: true})
		flips += stopFlip()
	}
	elapsed := time.Since(start)
	if ev := stop(); len(ev) > 0 {
		t.Errorf("%d file system events outside the project, e.g. %v", len(ev), ev[:min(len(ev), 5)])
	}
	got := snap(t, outside)
	for p, w := range want {
		if got[p] != w {
			t.Errorf("outside %s: %q, was %q", p, got[p], w)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("outside %s appeared", p)
		}
	}
	if p := storeHolds(t, filepath.Join(journals, "x.jsonl"), fakeSecret); p != "" {
		t.Errorf("the outside key's bytes are in the checkpoint store: %s", p)
	}
	if flips < int64(races) {
		t.Errorf("only %d flips in %d races: the flippers did not race", flips, races)
	}
	t.Logf("%d races, %d flips, %v (%v a race)", races, flips, elapsed.Round(time.Millisecond), (elapsed / time.Duration(races)).Round(time.Microsecond))
}

// TestSpecialFiles: a FIFO (with bytes waiting in it and a writer holding
// it open) and, as root, a character device in the project: scans and
// undo do not hang on them and never read them, also while a flipper
// swaps a project file with the FIFO.
func TestSpecialFiles(t *testing.T) {
	const marker = "fifo-bytes-4c1d7e"
	root := t.TempDir()
	fifo := filepath.Join(root, "p")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := os.OpenFile(fifo, os.O_RDWR, 0) // a writer that never blocks
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.Write(bytes.Repeat([]byte(marker), 100))
	dev := ""
	if os.Geteuid() == 0 {
		dev = filepath.Join(root, "zero")
		if err := unix.Mknod(dev, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 5))); err != nil {
			t.Logf("no device node: %v", err)
			dev = ""
		}
	}
	os.WriteFile(filepath.Join(root, "f"), []byte("plain\n"), 0o644)
	journal := filepath.Join(t.TempDir(), "checkpoints", "s.jsonl")
	store, _ := Open(journal, root)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 200 {
			store.StartTurn()
			end := store.Begin("c", "bash")
			os.WriteFile(filepath.Join(root, "f"), []byte(fmt.Sprint(time.Now().UnixNano())), 0o644)
			end()
		}
		stop := flip([2]string{filepath.Join(root, "f"), fifo})
		for range 200 {
			store.Begin("c", "bash")()
		}
		store.Undo(Selection{FromTurn: 1}, Options{Force: true})
		stop()
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("scans or undo hang on a FIFO or a device")
	}
	if p := storeHolds(t, journal, marker); p != "" {
		t.Errorf("the FIFO was read: its bytes are in %s", p)
	}
	blobs, _ := os.ReadDir(filepath.Join(filepath.Dir(journal), "blobs"))
	for _, b := range blobs {
		if fi, err := b.Info(); err == nil && fi.Size() > 1<<10 {
			t.Errorf("a %d-byte blob: the device was read", fi.Size())
		}
	}
	if dev != "" {
		if fi, err := os.Lstat(dev); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
			t.Errorf("the device is gone: %v %v", fi, err)
		}
	}
}

// nobodyEnv marks the test binary re-run as nobody.
const nobodyEnv = "HARNESS_CHECKPOINT_TEST_NOBODY"

// TestEscapesAsNobody re-runs the tests above as an unprivileged user
// (uid 65534, no groups), where the kernel, not root's privileges,
// decides what a swapped link reaches.
func TestEscapesAsNobody(t *testing.T) {
	testenv.Slow(t)
	if os.Getenv(nobodyEnv) != "" {
		t.Skip("this is the unprivileged run")
	}
	setpriv, bin := testenv.NobodyBinary(t, "", "the other tests")
	cmd := testenv.AsNobody(setpriv, bin, []string{"-test.run=^(TestUndoSwapped.*|TestUndoRefuses.*|TestScanSwapped.*|TestFlipperRaces|TestSpecialFiles)$", "-test.count=1", "-test.v"},
		nobodyEnv+"=1", "TMPDIR=/tmp")
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("\nPASS")) || !bytes.Contains(out, []byte("--- PASS: TestFlipperRaces")) {
		t.Errorf("as nobody: %v\n%s", err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "races,") {
			t.Log("as nobody:", strings.TrimSpace(l))
		}
	}
}
