package testenv

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// SmallDisk mounts a 256 KiB tmpfs at dir (a new temporary directory when
// dir is "") for the rest of the test and returns it, with a function that
// fills it to ENOSPC and one that frees it again: a full disk, for real,
// under whatever the test writes there. It needs root (NeedRoot).
func SmallDisk(t testing.TB, dir string) (mnt string, fill, free func()) {
	t.Helper()
	NeedRoot(t)
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=256k"); err != nil {
		Missing(t, Root, "cannot mount a tmpfs: "+err.Error())
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	filler := filepath.Join(dir, "filler")
	fill = func() {
		f, err := os.Create(filler)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		block := make([]byte, 4096)
		for {
			if _, err := f.Write(block); err != nil {
				if !errors.Is(err, unix.ENOSPC) {
					t.Fatal(err)
				}
				break
			}
		}
		// Byte by byte into the last page, so not even a short line fits.
		for {
			if _, err := f.Write(block[:1]); err != nil {
				break
			}
		}
	}
	free = func() {
		if err := os.Remove(filler); err != nil {
			t.Fatal(err)
		}
	}
	return dir, fill, free
}

// PadToPage makes the file at path end exactly at a page boundary by
// calling add with a text of x's, twice: tmpfs takes appends into a page
// it has already given the file even when full, so only then does the next
// write meet SmallDisk's full disk. add must append one line whose length
// is a fixed overhead plus the text's (a log entry with a fixed time).
func PadToPage(t testing.TB, path string, add func(text string) error) {
	t.Helper()
	size := func() int64 {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	before := size()
	if err := add("x"); err != nil {
		t.Fatal(err)
	}
	line := size() - before // the overhead plus one x
	room := 4096 - size()%4096
	if room < line {
		room += 4096
	}
	if err := add(strings.Repeat("x", int(1+room-line))); err != nil {
		t.Fatal(err)
	}
	if s := size(); s%4096 != 0 {
		t.Fatalf("padding left %s at %d bytes", path, s)
	}
}
