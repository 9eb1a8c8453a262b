package sandbox

import (
	"os"
	"path/filepath"
	"strings"
)

// sandboxEnv is the environment inside: the policy's allowlist plus
// variables that point every cache and temporary file at tmp (the private
// temporary directory as seen inside), so compilers and package managers
// work without writing to $HOME.
func sandboxEnv(p *Policy, tmp, backend string) []string {
	env := append([]string(nil), p.Env...)
	set := func(k, v string) {
		for i, kv := range env {
			if strings.HasPrefix(kv, k+"=") {
				env[i] = k + "=" + v
				return
			}
		}
		env = append(env, k+"="+v)
	}
	if !hasEnv(env, "PATH") {
		set("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	}
	cache := tmp + "/.cache"
	set("TMPDIR", tmp)
	set("XDG_CACHE_HOME", cache)
	set("GOCACHE", cache+"/go-build")
	set("GOPATH", tmp+"/go")
	if mc := goModCache(p); mc != "" {
		set("GOMODCACHE", mc) // read-only inside: what is downloaded builds, nothing new is fetched
	}
	set("npm_config_cache", cache+"/npm")
	set("PIP_CACHE_DIR", cache+"/pip")
	set("CARGO_TARGET_DIR", tmp+"/cargo-target")
	set("HARNESS_SANDBOX", backend)
	return env
}

func hasEnv(env []string, k string) bool {
	for _, kv := range env {
		if strings.HasPrefix(kv, k+"=") {
			return true
		}
	}
	return false
}

// goModCache finds the host's Go module cache without running go.
func goModCache(p *Policy) string {
	cands := []string{os.Getenv("GOMODCACHE")}
	if gp := os.Getenv("GOPATH"); gp != "" {
		cands = append(cands, filepath.Join(filepath.SplitList(gp)[0], "pkg", "mod"))
	}
	if p.Home != "" {
		cands = append(cands, filepath.Join(p.Home, "go", "pkg", "mod"))
	}
	for _, c := range cands {
		if c == "" {
			continue
		}
		if st, err := os.Stat(c); err == nil && st.IsDir() && p.CheckRead(c) == nil {
			return c
		}
	}
	return ""
}
