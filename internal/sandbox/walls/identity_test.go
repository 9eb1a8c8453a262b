package walls

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// foldFS is a fake of a default macOS volume: names are compared without
// case, and /System/Volumes/Data is firmlinked onto /. Each node keeps the
// spelling it was created with, as APFS does.
type foldFS struct {
	nodes map[string]*foldNode // lower-cased canonical path -> node
	next  uint64
}

type foldNode struct {
	name string
	id   uint64
	dir  bool
	link string
}

const firmlink = "/system/volumes/data"

func newFoldFS() *foldFS {
	return &foldFS{nodes: map[string]*foldNode{"/": {name: "/", id: 1, dir: true}}, next: 2}
}

// apfsFold folds what strings.ToLower leaves apart and APFS does not: the
// Kelvin sign and the long s.
var apfsFold = strings.NewReplacer("\u212a", "k", "\u017f", "s")

func (f *foldFS) key(name string) string {
	k := apfsFold.Replace(strings.ToLower(filepath.Clean(name)))
	if k == firmlink {
		return "/"
	}
	if rest, ok := strings.CutPrefix(k, firmlink+"/"); ok {
		return "/" + rest
	}
	return k
}

func (f *foldFS) add(path string, dir bool, link string) *foldNode {
	for d := filepath.Dir(path); d != "/"; d = filepath.Dir(d) {
		if _, ok := f.nodes[f.key(d)]; !ok {
			f.add(d, true, "")
		}
	}
	n := &foldNode{name: filepath.Base(path), id: f.next, dir: dir, link: link}
	f.next++
	f.nodes[f.key(path)] = n
	return n
}

// hardlink gives path the node (and identity) of target.
func (f *foldFS) hardlink(target, path string) { f.nodes[f.key(path)] = f.nodes[f.key(target)] }

type foldInfo struct{ n *foldNode }

func (i foldInfo) Name() string { return i.n.name }
func (i foldInfo) Size() int64  { return 0 }
func (i foldInfo) Mode() fs.FileMode {
	switch {
	case i.n.link != "":
		return fs.ModeSymlink | 0o777
	case i.n.dir:
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (i foldInfo) ModTime() time.Time { return time.Time{} }
func (i foldInfo) IsDir() bool        { return i.n.dir }
func (i foldInfo) Sys() any           { return fileID{dev: 1, Ino: i.n.id} }

func (f *foldFS) Lstat(name string) (fs.FileInfo, error) {
	n, ok := f.nodes[f.key(name)]
	if !ok {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: fs.ErrNotExist}
	}
	return foldInfo{n}, nil
}

func (f *foldFS) Stat(name string) (fs.FileInfo, error) {
	r := resolveFS(f, name)
	n, ok := f.nodes[f.key(r)]
	if !ok || n.link != "" {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
	}
	return foldInfo{n}, nil
}

func (f *foldFS) Readlink(name string) (string, error) {
	n, ok := f.nodes[f.key(name)]
	if !ok || n.link == "" {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
	}
	return n.link, nil
}

// macPolicy is a policy for /Users/me/proj on the fake volume.
func macPolicy(t *testing.T) *Policy {
	t.Helper()
	f := newFoldFS()
	for _, d := range []string{"/Users/me/proj/.git/hooks", "/Users/me/proj/src", "/Users/me/proj/.agents", "/Users/me/.ssh", "/Users/me/.agents", "/Users/me/other"} {
		f.add(d, true, "")
	}
	for _, file := range []string{"/Users/me/proj/.git/config", "/Users/me/proj/.git/hooks/pre-commit", "/Users/me/proj/src/main.go", "/Users/me/.ssh/id_rsa", "/Users/me/.agents/env", "/Users/me/.netrc"} {
		f.add(file, false, "")
	}
	f.hardlink("/Users/me/.netrc", "/Users/me/proj/netrc-copy")
	f.add("/Users/me/proj/link-ssh", false, "/USERS/me/.SSH")
	return &Policy{
		project:   "/Users/me/proj",
		writable:  []string{"/Users/me/proj"},
		readOnly:  []string{"/Users/me/proj/.git", "/Users/me/proj/.agents"},
		protected: []string{"/Users/me/proj/.git", "/Users/me/proj/.agents", "/Users/me/proj/.githooks"},
		denyRead:  []string{"/Users/me/.ssh", "/Users/me/.agents/env", "/Users/me/.netrc", "/Users/me/.aws"},
		fsys:      f,
		idents:    &rootIDs{},
	}
}

// TestIdentityDecisions: on a case-insensitive volume with firmlinks, a
// path decision depends on what the path names, not how it is spelled.
func TestIdentityDecisions(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX paths")
	}
	p := macPolicy(t)
	reads := []struct {
		path string
		ok   bool
	}{
		{"/Users/me/proj/src/main.go", true},
		{"/users/ME/PROJ/SRC/main.GO", true},
		{"/Users/me/.ssh/id_rsa", false},
		{"/Users/me/.SSH/id_rsa", false},
		{"/USERS/ME/.Ssh", false},
		{"/System/Volumes/Data/Users/me/.ssh/id_rsa", false},
		{"/system/volumes/data/users/me/.agents/ENV", false},
		{"/Users/me/.Agents/Env", false},
		{"/Users/me/proj/netrc-copy", false},      // a hard link: the same file
		{"/Users/me/proj/link-ssh/id_rsa", false}, // a link spelled in another case
		{"/Users/me/.ssh-not-secret/x", true},     // a sibling name is not beneath
		{"/System/Volumes/Data/Users/me/other", true},
		{"/Users/me/.aw\u017f/credentials", false}, // a secret not there yet, a long s for its s
		{"/Users/me/.\u017f\u017fh/id_rsa", false}, // one that exists, the same
		{"/Users/me/\u212a/x", true},
	}
	for _, tt := range reads {
		err := p.CheckRead(tt.path)
		if (err == nil) != tt.ok {
			t.Errorf("CheckRead(%q) = %v, want ok=%v", tt.path, err, tt.ok)
		}
	}
	writes := []struct {
		path string
		ok   bool
	}{
		{"/Users/me/proj/src/new.go", true},
		{"/Users/me/PROJ/src/new.go", true},                       // granted by identity
		{"/System/Volumes/Data/Users/me/proj/src/new.go", true},   // and through the firmlink
		{"/Users/me/proj/.GIT/hooks/pre-commit", false},           // an existing carve-out
		{"/Users/me/proj/.Git/config", false},                     //
		{"/System/Volumes/Data/Users/me/proj/.git/config", false}, //
		{"/users/me/proj/.git/HOOKS/post-checkout", false},        // a new file in it
		{"/Users/me/proj/.GITHOOKS/pre-commit", false},            // a carve-out that does not exist yet
		{"/System/Volumes/Data/Users/ME/proj/.githooks/x", false}, //
		{"/Users/me/proj/.AGENTS/rules", false},                   //
		{"/Users/me/proj/sub/.Git/config", false},                 // a new nested repository
		{"/Users/me/proj/src/.GIT", false},                        //
		{"/Users/me/proj/netrc-copy", false},                      // the secret, by another name
		{"/Users/me/other/x", false},                              // outside
		{"/Users/me/PROJ2/x", false},                              // a longer name is not beneath
		{"/System/Volumes/Data/Users/me/other/x", false},          //
		{"/Users/me/proj/link-ssh/authorized_keys", false},        //
		{"/Users/me/proj/.githoo\u212as/pre-commit", false},       // the Kelvin sign folds to k on APFS
		{"/Users/me/proj/.githook\u017f/pre-commit", false},       // the long s to s
		{"/Users/me/proj/.agent\u017f/rules", false},              //
		{"/Users/me/proj/src/.gitignore", true},                   // .git as a prefix only
		{"/Users/me/proj/src/.github/workflows/ci.yml", true},     //
	}
	for _, tt := range writes {
		err := p.CheckWrite(tt.path)
		if (err == nil) != tt.ok {
			t.Errorf("CheckWrite(%q) = %v, want ok=%v", tt.path, err, tt.ok)
		}
	}
}

// TestIdentityRealFS: the same decisions on the real (case-sensitive)
// kernel: a hard link to a secret file inside the project is the secret,
// and an opened descriptor is judged by what it is, not its name.
func TestIdentityRealFS(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("descriptor paths from /proc")
	}
	p, proj, home, _ := policyFixture(t)
	if err := os.Link(home+"/.netrc", proj+"/src/netrc"); err != nil {
		t.Fatal(err)
	}
	if err := p.CheckRead(proj + "/src/netrc"); err == nil {
		t.Error("CheckRead allowed a hard link to ~/.netrc")
	}
	if err := p.CheckWrite(proj + "/src/netrc"); err == nil {
		t.Error("CheckWrite allowed a hard link to ~/.netrc")
	}
	// On a case-sensitive volume .GIT is another name, refused anyway: a
	// denial errs on the side of the stranger spelling.
	if err := p.CheckWrite(proj + "/.GIT/config"); err == nil {
		t.Error("CheckWrite allowed .GIT/config")
	}
	open := func(path string) *os.File {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	if err := p.CheckOpened(open(proj+"/link-ssh"), false); err == nil {
		t.Error("CheckOpened allowed ~/.ssh/id_rsa opened through a link")
	}
	if err := p.CheckOpened(open(proj+"/src/main.go"), false); err != nil {
		t.Errorf("CheckOpened refused a project file: %v", err)
	}
	if err := p.CheckOpened(open(proj+"/src/main.go"), true); err != nil {
		t.Errorf("CheckOpened refused a write to a project file: %v", err)
	}
	if err := p.CheckOpened(open(proj+"/.git/config"), true); err == nil {
		t.Error("CheckOpened allowed a write to .git/config")
	}
	f := open(proj + "/src/main.go")
	// The name the file was opened by decides nothing: move it out.
	if err := os.Rename(proj+"/src/main.go", filepath.Dir(proj)+"/outside/main.go"); err != nil {
		t.Fatal(err)
	}
	if err := p.CheckOpened(f, true); err == nil {
		t.Error("CheckOpened allowed a write to a file that is now outside the project")
	}
}

// TestHiddenLinkTargets: a symlink inside a hidden directory hides what it
// points to, unless that is inside the project (said in Notes).
func TestHiddenLinkTargets(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks")
	}
	base, _ := filepath.EvalSymlinks(t.TempDir())
	home, proj, dot := base+"/home", base+"/proj", base+"/dotfiles"
	for _, d := range []string{home + "/.ssh", proj, dot} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(dot+"/id_ed25519", []byte("key"), 0o600)
	os.WriteFile(proj+"/known_hosts", []byte("x"), 0o600)
	os.Symlink(dot+"/id_ed25519", home+"/.ssh/id_ed25519")
	os.Symlink(proj+"/known_hosts", home+"/.ssh/known_hosts")
	p, err := NewPolicy(PolicyOptions{Project: proj, Home: home, Environ: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CheckRead(dot + "/id_ed25519"); err == nil {
		t.Errorf("the target of a link in ~/.ssh is readable; DenyRead = %v", p.denyRead)
	}
	if err := p.CheckRead(proj + "/known_hosts"); err != nil {
		t.Errorf("a link target inside the project was hidden: %v", err)
	}
	if !strings.Contains(strings.Join(p.notes, "\n"), "known_hosts") {
		t.Errorf("Notes do not say the link into the project stays readable: %q", p.notes)
	}
}
