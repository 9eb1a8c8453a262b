package gitshadow

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Objects as they appear.
//
// After's import alone would leave a window: an object a command writes
// is in the shadow, which the command can write, until the command ends,
// so `git commit && rm -rf .git/objects/??` would lose the commit. The
// host therefore watches the shadow's object directory (inotify) for the
// whole session and imports each object the moment its final name
// appears: git names a loose object by linking a finished temporary file
// into place, and a pack by renaming its index in last. From then on the
// object is in the real directory, which no command can write. Import is
// the same checked import as After's (importLoose, importPack), which
// still runs after each command for whatever the watch missed.

// objectWatch is one shadow's watch; stop ends it.
type objectWatch struct {
	stop func()
}

func (sh *gitShadow) startWatch() {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return // After's import still runs
	}
	f := os.NewFile(uintptr(fd), "inotify")
	root, err := os.OpenRoot(sh.ObjectsDir())
	if err != nil {
		f.Close()
		return
	}
	w := &watcher{f: f, fd: fd, root: root, dir: sh.ObjectsDir(), wds: map[int32]string{},
		imp: importer{root: root, real: filepath.Join(sh.Dir, "objects"), sha256: repoUsesSHA256(sh.Dir), store: sh.store, wait: waiting{}}}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	w.add("")
	w.add("pack")
	w.scan(ctx)
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.loop(ctx)
	}()
	sh.watch = &objectWatch{stop: func() {
		cancel()
		f.Close() // wakes the read
		wg.Wait()
		root.Close()
	}}
}

type watcher struct {
	f    *os.File
	fd   int
	root *os.Root
	dir  string           // the shadow's objects directory (host path)
	wds  map[int32]string // watch → directory relative to dir ("" for dir)
	// imp holds back an object until what it links to is on the host
	// (links.go); After's import refuses what still waits then.
	imp importer
}

const watchMask = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW

func (w *watcher) add(rel string) {
	wd, err := unix.InotifyAddWatch(w.fd, filepath.Join(w.dir, rel), watchMask)
	if err == nil {
		w.wds[int32(wd)] = rel
	}
}

// scan imports what is there already (a directory made before its watch).
func (w *watcher) scan(ctx context.Context) {
	ents, err := readRootDir(w.root, ".")
	if err != nil {
		return
	}
	for _, e := range ents {
		if n := e.Name(); len(n) == 2 && isHex(n) && e.IsDir() {
			w.add(n)
			w.scanDir(ctx, n)
		}
	}
}

func (w *watcher) scanDir(ctx context.Context, dir string) {
	files, err := readRootDir(w.root, dir)
	if err != nil {
		return
	}
	for _, f := range files {
		w.found(ctx, dir, f.Name())
	}
}

// found imports dir/name if it is an object's final name.
func (w *watcher) found(ctx context.Context, dir, name string) {
	switch {
	case dir == "pack":
		if strings.HasPrefix(name, "pack-") && strings.HasSuffix(name, ".idx") {
			if importPack(ctx, w.root, "pack/"+strings.TrimSuffix(name, ".idx")+".pack", w.imp.real, w.imp.sha256) == nil {
				w.imp.retryAll()
			}
		}
	case len(dir) == 2 && isHex(name):
		_, _ = w.imp.loose(dir + "/" + name)
	}
}

func (w *watcher) loop(ctx context.Context) {
	buf := make([]byte, 64<<10)
	for {
		n, err := w.f.Read(buf)
		if err != nil || ctx.Err() != nil {
			return
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			nameBytes := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			off += unix.SizeofInotifyEvent + int(ev.Len)
			name := strings.TrimRight(string(nameBytes), "\x00")
			dir, known := w.wds[ev.Wd]
			switch {
			case ev.Mask&unix.IN_Q_OVERFLOW != 0:
				w.scan(ctx)
				w.scanDir(ctx, "pack")
			case ev.Mask&unix.IN_IGNORED != 0:
				delete(w.wds, ev.Wd)
			case !known:
			case dir == "" && ev.Mask&unix.IN_ISDIR != 0 && len(name) == 2 && isHex(name):
				w.add(name)
				w.scanDir(ctx, name)
			case dir == "" && name == "pack" && ev.Mask&unix.IN_ISDIR != 0:
				w.add("pack")
				w.scanDir(ctx, "pack")
			case dir != "":
				w.found(ctx, dir, name)
			}
		}
	}
}
