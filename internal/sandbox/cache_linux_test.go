package sandbox

import (
	"archive/zip"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/walls"
	"github.com/harness-dev/harness/internal/testenv"

	"github.com/harness-dev/harness/internal/shellquote"
)

// fakeModCache writes a host Go module cache holding one module,
// example.com/greet v1.0.0, in the layout of GOMODCACHE/cache/download.
func fakeModCache(t *testing.T, dir string) {
	t.Helper()
	v := filepath.Join(dir, "cache", "download", "example.com", "greet", "@v")
	if err := os.MkdirAll(v, 0o755); err != nil {
		t.Fatal(err)
	}
	mod := "module example.com/greet\n\ngo 1.21\n"
	os.WriteFile(filepath.Join(v, "list"), []byte("v1.0.0\n"), 0o644)
	os.WriteFile(filepath.Join(v, "v1.0.0.info"), []byte(`{"Version":"v1.0.0","Time":"2024-01-01T00:00:00Z"}`), 0o644)
	os.WriteFile(filepath.Join(v, "v1.0.0.mod"), []byte(mod), 0o644)
	f, err := os.Create(filepath.Join(v, "v1.0.0.zip"))
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for name, body := range map[string]string{
		"go.mod":   mod,
		"greet.go": "package greet\n\nfunc Hello() string { return \"hello from a dependency\" }\n",
	} {
		w, err := zw.Create("example.com/greet@v1.0.0/" + name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// envWithout is the process environment minus the named variables.
func envWithout(names ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, n := range names {
			drop = drop || k == n
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}

// TestCachePersistsAcrossSessions builds a module with one dependency in
// two sessions: the first fetches it read-only from the host's module
// cache (the only GOPROXY entry that answers: there is no network), the
// second has no host module cache at all and builds from the project's
// persistent cache.
func TestCachePersistsAcrossSessions(t *testing.T) {
	t.Parallel() // see parallelTests in main_test.go
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not in PATH")
	}
	if testing.Short() {
		t.Skip("compiles the standard library in a fresh cache")
	}
	// One backend: the build is the slow part, and both backends bind the
	// cache through the same writeRoots (TestCacheIsPerProject runs both).
	for _, backend := range []string{BackendBwrap} {
		t.Run(backend, func(t *testing.T) {
			requireBackend(t, backend)
			base, err := os.MkdirTemp(outsideBase(), "harness-cache-test-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
					if err == nil && d.IsDir() {
						os.Chmod(p, 0o755)
					}
					return nil
				})
				os.RemoveAll(base)
			})
			home, hostMod, root, proj := filepath.Join(base, "home"), filepath.Join(base, "hostmod"), filepath.Join(base, "cacheroot"), filepath.Join(base, "proj")
			for _, d := range []string{home, proj} {
				os.MkdirAll(d, 0o755)
			}
			fakeModCache(t, hostMod)
			os.WriteFile(filepath.Join(proj, "go.mod"), []byte("module app\n\ngo 1.21\n\nrequire example.com/greet v1.0.0\n"), 0o644)
			os.WriteFile(filepath.Join(proj, "app_test.go"), []byte(`package app

import (
	"testing"

	"example.com/greet"
)

func TestGreet(t *testing.T) {
	if greet.Hello() != "hello from a dependency" {
		t.Fatal(greet.Hello())
	}
}
`), 0o644)
			// go.sum, computed on the host from the same module files.
			tidy := exec.Command(goBin, "mod", "tidy")
			tidy.Dir = proj
			tidy.Env = append(envWithout("GOFLAGS", "GOPROXY", "GOMODCACHE"), "GOPROXY=file://"+hostMod+"/cache/download", "GOSUMDB=off",
				"GOMODCACHE="+filepath.Join(base, "tidymod"), "GOFLAGS=-modcacherw")
			if out, err := tidy.CombinedOutput(); err != nil {
				t.Fatalf("go mod tidy on the host: %v\n%s", err, out)
			}
			session := func(env []string) (Sandbox, *walls.Policy) {
				p, err := walls.NewPolicy(walls.PolicyOptions{Project: proj, Home: home, CacheRoot: root, Environ: env})
				if err != nil {
					t.Fatal(err)
				}
				sb, err := Open(context.Background(), walls.NewLive(p), backend)
				if err != nil {
					t.Fatal(err)
				}
				return sb, p
			}
			script := shellquote.Quote(goBin) + " test ./..."
			env1 := append(envWithout("GOMODCACHE", "GOPATH", "GOPROXY", "GOFLAGS"), "GOMODCACHE="+hostMod, "GOPROXY=off")
			sb, p := session(env1)
			if p.HostModCache() != hostMod || p.Cache() == "" {
				t.Fatalf("host module cache %q, project cache %q", p.HostModCache(), p.Cache())
			}
			start := time.Now()
			r, err := sb.Run(context.Background(), Cmd{Script: script, Timeout: 5 * time.Minute})
			first := time.Since(start)
			sb.Close()
			if err != nil || r.ExitCode != 0 {
				t.Fatalf("first session: %v exit %d\n%s", err, r.ExitCode, r.Output)
			}
			// Nothing was written to the host's module cache.
			if _, err := os.Stat(filepath.Join(hostMod, "example.com")); err == nil {
				t.Errorf("the first session extracted into the host's module cache")
			}

			// Second session: the host's module cache is gone.
			if err := os.Rename(hostMod, hostMod+".gone"); err != nil {
				t.Fatal(err)
			}
			sb, p = session(envWithout("GOMODCACHE", "GOPATH", "GOPROXY", "GOFLAGS"))
			defer sb.Close()
			if p.HostModCache() != "" {
				t.Fatalf("second session still sees a host module cache: %s", p.HostModCache())
			}
			start = time.Now()
			r, err = sb.Run(context.Background(), Cmd{Script: script, Timeout: 5 * time.Minute})
			second := time.Since(start)
			if err != nil || r.ExitCode != 0 {
				t.Fatalf("second session: %v exit %d\n%s", err, r.ExitCode, r.Output)
			}
			t.Logf("%s: go test ./... first session %v, second session %v: %s", backend, first.Round(time.Millisecond), second.Round(time.Millisecond), strings.TrimSpace(string(r.Output)))

			// The cache holds the build, and the way out is harness cache clean.
			list, err := walls.ListCaches(root)
			if err != nil || len(list) != 1 || list[0].Project != p.Project() || list[0].Bytes == 0 {
				t.Fatalf("ListCaches = %+v, %v", list, err)
			}
			// A symlink planted inside does not carry the clean outside.
			outside := filepath.Join(base, "outside")
			os.MkdirAll(outside, 0o755)
			os.WriteFile(filepath.Join(outside, "keep"), []byte("x"), 0o644)
			r, _ = sb.Run(context.Background(), Cmd{Script: "ln -s " + shellquote.Quote(outside) + " " + shellquote.Quote(p.Cache()+"/link") + " && echo planted"})
			if !strings.Contains(string(r.Output), "planted") {
				t.Fatalf("planting a symlink in the cache: %s", r.Output)
			}
			sb.Close()
			if err := walls.CleanCache(root, list[0].Dir); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(list[0].Dir); err == nil {
				t.Errorf("CleanCache left %s", list[0].Dir)
			}
			if _, err := os.Stat(filepath.Join(outside, "keep")); err != nil {
				t.Errorf("CleanCache followed a planted symlink: %v", err)
			}
		})
	}
}

// TestCacheIsPerProject: one project's walls do not let it write another
// project's cache, nor the record naming the project.
func TestCacheIsPerProject(t *testing.T) {
	testenv.Slow(t)
	t.Parallel() // see parallelTests in main_test.go
	// One backend: the build is the slow part, and both backends bind the
	// cache through the same writeRoots (TestCacheIsPerProject runs both).
	for _, backend := range []string{BackendBwrap, BackendLandlock} {
		t.Run(backend, func(t *testing.T) {
			requireBackend(t, backend)
			base, err := os.MkdirTemp(outsideBase(), "harness-cache-test-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(base) })
			root := filepath.Join(base, "cacheroot")
			os.MkdirAll(filepath.Join(base, "home"), 0o755)
			var pols []*walls.Policy
			for _, name := range []string{"a", "b"} {
				proj := filepath.Join(base, name)
				os.MkdirAll(proj, 0o755)
				p, err := walls.NewPolicy(walls.PolicyOptions{Project: proj, Home: filepath.Join(base, "home"), CacheRoot: root})
				if err != nil {
					t.Fatal(err)
				}
				pols = append(pols, p)
			}
			if pols[0].Cache() == pols[1].Cache() {
				t.Fatalf("two projects share a cache: %s", pols[0].Cache())
			}
			sb, err := Open(context.Background(), walls.NewLive(pols[0]), backend)
			if err != nil {
				t.Fatal(err)
			}
			defer sb.Close()
			r, err := sb.Run(context.Background(), Cmd{Script: "echo ok > \"$GOCACHE.probe\" && echo own-ok; echo x > " + shellquote.Quote(pols[1].Cache()+"/planted") + " 2>/dev/null && echo other-written; echo x >> " + shellquote.Quote(filepath.Dir(pols[0].Cache())+"/project") + " 2>/dev/null && echo record-written; true"})
			if err != nil {
				t.Fatal(err)
			}
			out := string(r.Output)
			if !strings.Contains(out, "own-ok") || strings.Contains(out, "other-written") || strings.Contains(out, "record-written") {
				t.Errorf("output %q: want the own cache writable, the other project's cache and the record not", out)
			}
			if _, err := os.Stat(pols[1].Cache() + "/planted"); err == nil {
				t.Errorf("project a wrote project b's cache")
			}
		})
	}
}
