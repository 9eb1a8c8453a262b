package walls

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"
)

// TestPolicyHasNoMutableParts keeps the Policy a snapshot: no exported
// field another package could set, and no lock or atomic in it (one
// would mean something in it still changes after it is published). The
// identity cache and the scan's tree watch are reached by pointer: a
// memo and the seed NewLive copies, never a rule.
func TestPolicyHasNoMutableParts(t *testing.T) {
	var check func(path string, typ reflect.Type)
	check = func(path string, typ reflect.Type) {
		switch typ.Kind() {
		case reflect.Struct:
			if pkg := typ.PkgPath(); pkg == "sync" || pkg == "sync/atomic" {
				t.Errorf("%s is a %s: a Policy must not change once published", path, typ)
				return
			}
			for i := range typ.NumField() {
				f := typ.Field(i)
				check(path+"."+f.Name, f.Type)
			}
		case reflect.Array:
			check(path+"[]", typ.Elem())
		}
	}
	typ := reflect.TypeFor[Policy]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.IsExported() {
			t.Errorf("Policy.%s is exported: other packages read a Policy through its methods", f.Name)
		}
		check("Policy."+f.Name, f.Type)
	}
}

// TestSnapshotsNeverChange: one goroutine changes the rules as a session
// does (a command makes a repository and Refresh adopts it, the spill
// directory is kept, plan mode goes on and off) while readers take
// snapshots. Under -race no reader may see a write; a snapshot read twice
// reads the same (its carve-outs, generation, plan flag), whatever
// changed in between and whatever the reader did to the lists it got;
// and a snapshot taken after a change shows it.
func TestSnapshotsNeverChange(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proj, home := filepath.Join(base, "proj"), filepath.Join(base, "home")
	os.MkdirAll(proj, 0o755)
	os.MkdirAll(home, 0o755)
	pol, err := NewPolicy(PolicyOptions{Project: proj, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	l := NewLive(pol)
	first := l.Policy()
	const n = 30
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		for i := range n {
			dot := filepath.Join(proj, fmt.Sprintf("r%d", i), ".git")
			os.MkdirAll(dot, 0o755)
			os.WriteFile(filepath.Join(dot, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
			l.Refresh()
			l.Keep(filepath.Join(home, ".agents", "sessions", fmt.Sprint(i)))
			l.SetProjectReadOnly(i%2 == 0)
			l.SetTempDir(filepath.Join(base, fmt.Sprint("tmp", i)))
		}
	}()
	type view struct {
		ro, prot, keep []string
		gen            int
		plan           bool
		tmp            string
	}
	read := func(p *Policy) view {
		return view{p.ReadOnly(), p.Protected(), p.KeepReadable(), p.Generation(), p.ProjectReadOnly(), p.TempDir()}
	}
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				snap := l.Policy()
				a := read(snap)
				if len(a.ro) > 0 {
					a.ro[0] = "changed by a reader" // a copy: the snapshot keeps its own
				}
				_ = snap.CheckWrite(filepath.Join(proj, "r0", ".git", "config"))
				_ = snap.RoBinds()
				_ = snap.MaskPaths()
				b := read(snap)
				if len(a.ro) > 0 {
					a.ro[0] = b.ro[0]
				}
				if !slices.Equal(a.ro, b.ro) || !slices.Equal(a.prot, b.prot) || !slices.Equal(a.keep, b.keep) ||
					a.gen != b.gen || a.plan != b.plan || a.tmp != b.tmp {
					t.Errorf("a snapshot changed while held:\n%+v\n%+v", a, b)
					return
				}
			}
		}()
	}
	wg.Wait()
	if v := read(first); len(v.keep) != 0 || v.gen != 0 || v.plan || v.tmp != "" || slices.Contains(v.ro, filepath.Join(proj, "r0", ".git")) {
		t.Errorf("the first snapshot shows later changes: %+v", v)
	}
	last := l.Policy()
	for i := range n {
		dot := filepath.Join(proj, fmt.Sprintf("r%d", i), ".git")
		if !slices.Contains(last.ReadOnly(), dot) {
			t.Errorf("the current snapshot does not hold %s read-only", dot)
		}
		if last.CheckWrite(filepath.Join(dot, "config")) == nil {
			t.Errorf("the current snapshot lets %s/config be written", dot)
		}
	}
	if got := len(last.KeepReadable()); got < n {
		t.Errorf("the current snapshot keeps %d paths readable, want %d", got, n)
	}
	if last.ProjectReadOnly() != ((n-1)%2 == 0) || last.TempDir() != filepath.Join(base, fmt.Sprint("tmp", n-1)) {
		t.Errorf("the current snapshot has plan mode %v and /tmp %q, the last set", last.ProjectReadOnly(), last.TempDir())
	}
	if last.Generation() < n {
		t.Errorf("generation %d after %d carve-out changes", last.Generation(), 2*n)
	}
}
