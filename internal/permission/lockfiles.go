package permission

import (
	"bufio"
	"encoding/json"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// LockfileHosts reads the registries the project's lockfiles name, for
// the @lockfiles network preset: the hosts of https:// "resolved" URLs in
// package-lock.json and yarn.lock, the registries in Cargo.lock and
// uv.lock (crates.io's and PyPI's index stand for their presets' hosts,
// which they download from). Only what a lockfile states outright counts:
// a registry left to the tool's configuration is not guessed. The result
// is "host:443" entries, sorted.
//
// The lockfiles are the project's, which the agent can edit: the preset
// is read when the rules are loaded (at session start), and a user who
// enables it trusts what the project's lockfiles say then. Because the
// agent may have written them, only public DNS names count: an IP
// literal, localhost, a single-label name or a local-only suffix is
// ignored, and the rules a preset makes never name a host exactly, so
// they cannot reach a loopback or private address even through a public
// name that resolves to one (the proxy checks the address it dials).
func LockfileHosts(project string) []string {
	hosts := map[string]bool{}
	addURL := func(raw string) {
		u, err := url.Parse(strings.TrimSpace(raw))
		if err != nil || u.Scheme != "https" || u.Hostname() == "" || (u.Port() != "" && u.Port() != "443") || !publicName(u.Hostname()) {
			return
		}
		hosts[strings.ToLower(u.Hostname())+":443"] = true
	}
	addPreset := func(name string) {
		for _, h := range netPresets[name] {
			hosts[h] = true
		}
	}
	if b, err := readSmall(filepath.Join(project, "package-lock.json")); err == nil {
		var lock struct {
			Packages     map[string]struct{ Resolved string } `json:"packages"`
			Dependencies map[string]struct{ Resolved string } `json:"dependencies"`
		}
		if json.Unmarshal(b, &lock) == nil {
			for _, p := range lock.Packages {
				addURL(p.Resolved)
			}
			for _, p := range lock.Dependencies {
				addURL(p.Resolved)
			}
		}
	}
	scanLines(filepath.Join(project, "yarn.lock"), func(l string) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "resolved "); ok {
			addURL(strings.Trim(v, `"`))
		}
	})
	scanLines(filepath.Join(project, "Cargo.lock"), func(l string) {
		v, ok := strings.CutPrefix(strings.TrimSpace(l), "source = ")
		if !ok {
			return
		}
		v = strings.Trim(v, `"`)
		switch {
		case v == "registry+https://github.com/rust-lang/crates.io-index", v == "sparse+https://index.crates.io/":
			addPreset("crates")
		case strings.HasPrefix(v, "sparse+"):
			addURL(strings.TrimPrefix(v, "sparse+"))
		}
	})
	scanLines(filepath.Join(project, "uv.lock"), func(l string) {
		_, v, ok := strings.Cut(l, `registry = "`)
		if !ok {
			return
		}
		v, _, _ = strings.Cut(v, `"`)
		if strings.TrimSuffix(v, "/") == "https://pypi.org/simple" {
			addPreset("pypi")
			return
		}
		addURL(v)
	})
	out := make([]string, 0, len(hosts))
	for h := range hosts {
		out = append(out, h)
	}
	sort.Strings(out)
	return out
}

// publicName reports whether host is a DNS name that can be public: not
// an IP literal, not single-label, not localhost or a suffix reserved
// for local networks (RFC 6761, 6762, 8375 and the common private ones).
func publicName(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if net.ParseIP(h) != nil || !strings.Contains(h, ".") {
		return false
	}
	for _, s := range []string{".localhost", ".local", ".internal", ".home.arpa", ".lan", ".localdomain", ".intranet", ".corp", ".home", ".test", ".invalid", ".example"} {
		if strings.HasSuffix(h, s) {
			return false
		}
	}
	// An all-numeric last label is an IP address in some parser's eyes
	// (0x7f.1, 2130706433.x): no public TLD is numeric.
	last := h[strings.LastIndexByte(h, '.')+1:]
	return strings.Trim(last, "0123456789x") != ""
}

const maxLockfile = 64 << 20

func readSmall(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || st.Size() > maxLockfile {
		return nil, os.ErrInvalid
	}
	return os.ReadFile(path)
}

func scanLines(path string, f func(string)) {
	b, err := readSmall(path)
	if err != nil {
		return
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f(sc.Text())
	}
}
