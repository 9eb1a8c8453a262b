package backend

import (
	"context"
	"debug/buildinfo"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/harness-dev/harness/internal/sandbox/linux/inner"
)

// HelperName is the small binary installed beside harness (cmd/harness-sandbox)
// that a sandbox re-executes for each command, its launcher and its
// supervisors instead of harness itself: it links the inner stage alone,
// so its start skips the init of every package harness links for the rest
// (the MCP SDK, the terminal's libraries), about a third of harness's CPU
// at start.
const HelperName = "harness-sandbox"

// HelperExe is the binary a sandbox re-executes inside: the helper beside
// the harness executable when it is of the same build and canWrite says no
// command can write it, else harness itself (SelfExe). A helper from
// another build could read the host's configuration differently, and one
// commands could rewrite would run before the walls are up: neither is
// used. why says which was chosen and, when harness itself, why not the
// helper (for doctor).
func HelperExe(canWrite func(string) bool) (exe, why string, err error) {
	self, err := SelfExe()
	if err != nil {
		return "", "", err
	}
	cand := filepath.Join(filepath.Dir(self), HelperName)
	// Whether it may be run is decided before it is run: asking it its
	// Shape runs it on the host.
	if canWrite != nil && canWrite(cand) {
		return self, "harness itself: " + cand + " is where commands can write, so it is not run", nil
	}
	if why := foreign(self, cand); why != "" {
		return self, "harness itself: " + why, nil
	}
	if ok, reason := sameBuild(cand); !ok {
		return self, "harness itself: " + reason, nil
	}
	return cand, "the small helper beside harness (" + cand + ")", nil
}

// foreign says why cand may not be run at all: not a regular file, owned
// by another user than harness, or writable by anyone but its owner; ""
// when none of those.
func foreign(self, cand string) string {
	st, err := os.Lstat(cand)
	if err != nil {
		return "" // missing: sameBuild says so
	}
	own, err := os.Stat(self)
	if err != nil {
		return err.Error()
	}
	switch {
	case !st.Mode().IsRegular():
		return cand + " is not a regular file, so it is not run"
	case st.Mode().Perm()&0o022 != 0:
		return cand + " is writable by others than its owner, so it is not run"
	case !sameOwner(st, own):
		return cand + " belongs to another user than harness, so it is not run"
	}
	return ""
}

// sameBuild reports whether the helper at cand was built with this
// harness: the same module version, toolchain and VCS stamps; and, unless
// those pin the code (a commit, unmodified), the same Shape (the
// configuration it is handed, the wire version), asked of the helper
// itself once per version of the file.
func sameBuild(cand string) (bool, string) {
	mine, ok := debug.ReadBuildInfo()
	if !ok {
		return false, "this harness carries no build information"
	}
	st := stamps(mine)
	pinned := st.revision != "" && st.modified == "false"
	hi, err := helperInfo(cand, !pinned)
	if err != nil {
		if os.IsNotExist(err) {
			return false, "no " + HelperName + " beside it (go install ./cmd/... installs both)"
		}
		return false, HelperName + " beside it is not usable: " + err.Error()
	}
	if hi.bi.Main.Path != mine.Main.Path || hi.bi.Main.Version != mine.Main.Version || hi.bi.GoVersion != mine.GoVersion || stamps(hi.bi) != st {
		return false, HelperName + " beside it is from another version of harness (install both: go install ./cmd/...)"
	}
	if !pinned && hi.shape != inner.Shape() {
		return false, HelperName + " beside it is from another build of harness (install both: go install ./cmd/...)"
	}
	return true, ""
}

type buildStamps struct{ revision, modified, time, goos, goarch string }

func stamps(bi *debug.BuildInfo) buildStamps {
	var s buildStamps
	for _, kv := range bi.Settings {
		switch kv.Key {
		case "vcs.revision":
			s.revision = kv.Value
		case "vcs.modified":
			s.modified = kv.Value
		case "vcs.time":
			s.time = kv.Value
		case "GOOS":
			s.goos = kv.Value
		case "GOARCH":
			s.goarch = kv.Value
		}
	}
	return s
}

var (
	infoMu    sync.Mutex
	infoCache = map[string]infoEntry{}
)

type infoEntry struct {
	mtime time.Time
	size  int64
	info  *helperFacts
	err   error
}

// helperFacts are a helper binary's build information and Shape.
type helperFacts struct {
	bi    *debug.BuildInfo
	shape string
}

// helperInfo reads cand's build information and, with ask, asks it its
// Shape, once per version of the file.
func helperInfo(cand string, ask bool) (*helperFacts, error) {
	st, err := os.Stat(cand)
	if err != nil {
		return nil, err
	}
	infoMu.Lock()
	defer infoMu.Unlock()
	if e, ok := infoCache[cand]; ok && e.mtime.Equal(st.ModTime()) && e.size == st.Size() && (!ask || e.err != nil || e.info.shape != "") {
		return e.info, e.err
	}
	f, err := readFacts(cand, ask)
	infoCache[cand] = infoEntry{mtime: st.ModTime(), size: st.Size(), info: f, err: err}
	return f, err
}

func readFacts(cand string, ask bool) (*helperFacts, error) {
	bi, err := buildinfo.ReadFile(cand)
	if err != nil {
		return nil, err
	}
	if !ask {
		return &helperFacts{bi: bi}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), shapeWait)
	defer cancel()
	out, err := exec.CommandContext(ctx, cand, inner.ShapeArg).Output()
	if err != nil {
		return nil, fmt.Errorf("asking it its shape: %w", err)
	}
	return &helperFacts{bi: bi, shape: strings.TrimSpace(string(out))}, nil
}

// shapeWait bounds the helper's answer (a few milliseconds).
const shapeWait = 10 * time.Second
