package app

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// The history's disk counts a file only when the agent's commands see
// the same file: a regular file inside the project, of exactly the size
// asked, read through the policy. A FIFO, a symlink out of the project,
// a host /tmp file and a secret are never "on disk".
func TestProjectDisk(t *testing.T) {
	o := testOptions(t)
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pol := s.Sandbox.Policy()
	body := []byte("print('hello')\n")
	proj := pol.Project()
	write := func(p string, b []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(proj, "a.py"), body)
	write(filepath.Join(proj, "sub", "b.py"), body)
	outside := filepath.Join(t.TempDir(), "out.py")
	write(outside, body)
	if err := os.Symlink(outside, filepath.Join(proj, "link.py")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(proj, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.CreateTemp("/tmp", "harness-disk-*.py")
	if err != nil {
		t.Fatal(err)
	}
	tmp.Write(body)
	tmp.Close()
	defer os.Remove(tmp.Name())
	secret := filepath.Join(o.Source.Home, ".agents", "env")
	write(secret, body)

	d := projectDisk{pol}
	for _, tc := range []struct {
		path string
		size int
		ok   bool
	}{
		{"a.py", len(body), true},
		{filepath.Join(proj, "a.py"), len(body), true},
		{"sub/b.py", len(body), true},
		{"sub/../a.py", len(body), true},
		{"a.py", len(body) - 1, false},
		{"a.py", len(body) + 1, false},
		{"missing.py", len(body), false},
		{"link.py", len(body), false},
		{outside, len(body), false},
		{"../" + filepath.Base(filepath.Dir(outside)) + "/out.py", len(body), false},
		{tmp.Name(), len(body), false},
		{"fifo", 0, false},
		{secret, len(body), false},
	} {
		sum, ok := d.Sum(tc.path, tc.size)
		if ok != tc.ok {
			t.Errorf("Sum(%q, %d) ok %v, want %v", tc.path, tc.size, ok, tc.ok)
		}
		if ok && sum != sha256.Sum256(body) {
			t.Errorf("Sum(%q) is not the file's hash", tc.path)
		}
	}
}
