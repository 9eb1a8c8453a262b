//go:build unix

package autorun

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWatchFIFO: a FIFO under a watched name neither stalls the scan nor
// goes unreported.
func TestWatchFIFO(t *testing.T) {
	root := t.TempDir()
	w := New(root)
	if err := syscall.Mkfifo(filepath.Join(root, ".envrc"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan []File)
	go func() { done <- w.Changes() }()
	select {
	case ch := <-done:
		if len(ch) != 1 || !strings.HasSuffix(ch[0].Path, ".envrc") {
			t.Errorf("%+v", ch)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the scan stalled on a FIFO")
	}
}
