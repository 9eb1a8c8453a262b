package walls

import (
	"os"
	"path/filepath"
	"strings"
)

// SandboxEnv is the environment inside: the policy's allowlist plus
// variables that point every cache and temporary file at tmp (the private
// temporary directory as seen inside), so compilers and package managers
// work without writing to $HOME.
func SandboxEnv(p *Policy, tmp, backend string) []string {
	env := append([]string(nil), p.env...)
	set := func(k, v string) {
		for i, kv := range env {
			if strings.HasPrefix(kv, k+"=") {
				env[i] = k + "=" + v
				return
			}
		}
		env = append(env, k+"="+v)
	}
	if !HasEnv(env, "PATH") {
		set("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	}
	cache := tmp + "/.cache"
	set("TMPDIR", tmp)
	set("GOPATH", tmp+"/go")
	if p.cache != "" {
		cacheEnv(p, set)
	} else {
		set("XDG_CACHE_HOME", cache)
		set("GOCACHE", cache+"/go-build")
		if p.hostModCache != "" {
			set("GOMODCACHE", p.hostModCache) // read-only inside: what is downloaded builds, nothing new is fetched
		}
		set("npm_config_cache", cache+"/npm")
		set("PIP_CACHE_DIR", cache+"/pip")
		set("CARGO_TARGET_DIR", tmp+"/cargo-target")
	}
	set("HARNESS_SANDBOX", backend)
	for _, kv := range gitPushRefusal {
		k, v, _ := strings.Cut(kv, "=")
		set(k, v)
	}
	return env
}

func HasEnv(env []string, k string) bool {
	for _, kv := range env {
		if strings.HasPrefix(kv, k+"=") {
			return true
		}
	}
	return false
}

// hostGo finds the host's Go module cache (without running go) and GOPROXY.
func hostGo(p *Policy, env []string) (modCache, proxy string) {
	get := func(k string) string {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				return v
			}
		}
		return ""
	}
	proxy = get("GOPROXY")
	cands := []string{get("GOMODCACHE")}
	if gp := get("GOPATH"); gp != "" {
		cands = append(cands, filepath.Join(filepath.SplitList(gp)[0], "pkg", "mod"))
	}
	if p.home != "" {
		cands = append(cands, filepath.Join(p.home, "go", "pkg", "mod"))
	}
	for _, c := range cands {
		if c == "" || !filepath.IsAbs(c) {
			continue
		}
		if st, err := os.Stat(c); err == nil && st.IsDir() && p.CheckRead(c) == nil {
			if r, err := canonical(c); err == nil {
				c = r
			}
			return c, proxy
		}
	}
	return "", proxy
}
