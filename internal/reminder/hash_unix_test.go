//go:build unix

package reminder

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Hashing never opens what is not a regular file (a FIFO would block the
// open forever), never reads a huge file, and re-reads only files whose
// stat changed.
func TestHashingBounded(t *testing.T) {
	dir := repo(t)
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Skip("no mkfifo:", err)
	}
	big := filepath.Join(dir, "big.bin")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxHashSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	os.WriteFile(filepath.Join(dir, "small.txt"), []byte("x"), 0o644)
	b := New(dir, fixed)
	ctx := context.Background()
	done := make(chan string)
	go func() { done <- b.Build(ctx, "") }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the reminder hangs on a FIFO in the project")
	}
	if b.hashed != 1 {
		t.Errorf("read %d files, want 1 (small.txt; not the FIFO, not the big file)", b.hashed)
	}
	b.Build(ctx, "")
	if b.hashed != 1 {
		t.Errorf("re-read unchanged files: %d reads", b.hashed)
	}
	os.WriteFile(filepath.Join(dir, "small.txt"), []byte("xy"), 0o644)
	if err := os.Truncate(big, MaxHashSize+2); err != nil {
		t.Fatal(err)
	}
	got := b.Build(ctx, "")
	if b.hashed != 2 || !strings.Contains(got, "- small.txt (new)") || !strings.Contains(got, "- big.bin (new)") {
		t.Errorf("after changes: %d reads, reminder:\n%s", b.hashed, got)
	}
}
