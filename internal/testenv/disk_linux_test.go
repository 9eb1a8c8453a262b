package testenv

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSmallDisk: after PadToPage and fill, the next append meets ENOSPC;
// after free it goes through.
func TestSmallDisk(t *testing.T) {
	dir, fill, free := SmallDisk(t, "")
	path := filepath.Join(dir, "log")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("first line\n"); err != nil {
		t.Fatal(err)
	}
	PadToPage(t, path, func(text string) error {
		_, err := f.WriteString(`{"text":"` + text + `"}` + "\n")
		return err
	})
	fill()
	if _, err := f.WriteString("on a full disk\n"); !errors.Is(err, unix.ENOSPC) {
		t.Fatalf("a write to the full disk: %v, want ENOSPC", err)
	}
	free()
	if _, err := f.WriteString("space back\n"); err != nil {
		t.Fatalf("a write after free: %v", err)
	}
}
