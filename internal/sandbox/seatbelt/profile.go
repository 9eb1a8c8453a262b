package seatbelt

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/harness-dev/harness/internal/sandbox/gitshadow"

	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// The macOS profile is built the way Codex's is (codex-rs sandboxing
// seatbelt_base_policy.sbpl, itself after Chromium's common.sb): deny by
// default, no (import "system.sb"), and every grant named with the tool
// that needs it. Paths never appear in the profile text: each is a -D
// parameter, and so is every regular expression built from a path, so a
// path holding quotes or parentheses cannot change the profile.

// seatbeltSysctls are the sysctls a command may read. Not kern.procargs2
// (any process's arguments and environment: harness's API keys) nor
// anything else unnamed.
var seatbeltSysctls = []struct{ name, why string }{
	{"hw.activecpu", "runtime.NumCPU, make -j, Node os.cpus"},
	{"hw.ncpu", "nproc, sysconf(_SC_NPROCESSORS_CONF)"},
	{"hw.logicalcpu", "Python os.cpu_count"},
	{"hw.logicalcpu_max", "Python os.cpu_count"},
	{"hw.physicalcpu", "Rust num_cpus"},
	{"hw.physicalcpu_max", "Rust num_cpus"},
	{"hw.perflevel", "the Go runtime and Rust on Apple silicon (a prefix)"},
	{"hw.nperflevels", "the Go runtime on Apple silicon"},
	{"hw.memsize", "the JVM and Node size their heaps"},
	{"hw.pagesize", "malloc, the Go runtime"},
	{"hw.pagesize_compat", "malloc"},
	{"hw.cachelinesize", "libc memcpy, the Go runtime"},
	{"hw.cachelinesize_compat", "libc memcpy"},
	{"hw.l1dcachesize", "BLAS, the JVM"},
	{"hw.l2cachesize", "BLAS, the JVM"},
	{"hw.l3cachesize", "BLAS, the JVM"},
	{"hw.l1icachesize_compat", "the JVM"},
	{"hw.l1dcachesize_compat", "the JVM"},
	{"hw.l2cachesize_compat", "the JVM"},
	{"hw.l3cachesize_compat", "the JVM"},
	{"hw.cacheconfig", "OpenMP, the JVM"},
	{"hw.packages", "OpenMP"},
	{"hw.byteorder", "Perl, Python configure checks"},
	{"hw.cputype", "uname -m, clang, Rosetta checks"},
	{"hw.cpusubtype", "clang, the Go toolchain"},
	{"hw.cpufamily", "Accelerate, numpy"},
	{"hw.cpufrequency", "the JVM"},
	{"hw.cpufrequency_compat", "the JVM"},
	{"hw.busfrequency_compat", "the JVM"},
	{"hw.tbfrequency_compat", "mach_absolute_time users"},
	{"hw.machine", "uname -m"},
	{"hw.model", "system_profiler-free hardware checks"},
	{"hw.vectorunit", "Accelerate"},
	{"hw.optional.", "CPU feature detection: the Go runtime, Rust std_detect, numpy (a prefix)"},
	{"machdep.cpu.", "CPU feature detection on Intel Macs, brand strings (a prefix)"},
	{"kern.argmax", "xargs, find -exec +, the Go toolchain"},
	{"kern.hostname", "hostname, uname -n"},
	{"kern.maxfilesperproc", "ulimit -n, Node, the JVM"},
	{"kern.maxproc", "the JVM"},
	{"kern.osproductversion", "sw_vers, Python platform"},
	{"kern.osrelease", "uname -r"},
	{"kern.ostype", "uname -s"},
	{"kern.osversion", "sw_vers, uname -v"},
	{"kern.version", "uname -v"},
	{"kern.osvariant_status", "libSystem's os_variant checks"},
	{"kern.secure_kernel", "libSystem start-up"},
	{"kern.usrstack64", "the JVM, debuggers"},
	{"kern.boottime", "uptime, Python psutil"},
	{"kern.clockrate", "the JVM"},
	{"kern.proc.pid.", "the sandbox's own process info: ps, Go os/exec, Python psutil (a prefix; kinfo_proc only, never arguments)"},
	{"kern.proc.pgrp.", "job control in sh and make (a prefix)"},
	{"sysctl.proc_cputype", "Rosetta checks in clang and Homebrew scripts"},
	{"vm.loadavg", "uptime, make -l"},
	{"vm.swapusage", "top, psutil"},
}

// seatbeltPrefixSysctl reports the names above matched as a prefix.
func seatbeltPrefixSysctl(name string) bool {
	return strings.HasSuffix(name, ".") || name == "hw.perflevel"
}

// FirmlinkData is where the firmlinked half of the system volume lives:
// /Users/me is also /System/Volumes/Data/Users/me. Denials name both.
const FirmlinkData = "/System/Volumes/Data"

// seatbeltProfile generates the macOS sandbox-exec profile for p. tmp is
// the session's private temporary directory (canonical, so under
// /private/var/folders there).
func seatbeltProfile(p *walls.Policy, tmp string) (profile string, params []string) {
	pw := &profileWriter{n: map[string]int{}}
	pw.processes()
	pw.reads(p)
	pw.writes(p, tmp)
	pw.carveOuts(p)
	pw.network(p, tmp)
	return pw.b.String(), pw.params
}

// profileWriter builds a profile section by section; every path goes in
// as a -D parameter, never spliced into the text.
type profileWriter struct {
	b      strings.Builder
	n      map[string]int
	params []string
}

// param names value as the next parameter of prefix.
func (pw *profileWriter) param(prefix, value string) string {
	k := fmt.Sprintf("%s_%d", prefix, pw.n[prefix])
	pw.n[prefix]++
	pw.params = append(pw.params, k+"="+value)
	return fmt.Sprintf("(param %q)", k)
}

func (pw *profileWriter) w(format string, a ...any) { fmt.Fprintf(&pw.b, format, a...) }

// denyVariants are the paths and, on the Data volume, their firmlinked
// twins.
func denyVariants(paths []string) []string {
	var out []string
	for _, d := range paths {
		out = walls.AppendUnique(out, d)
		if !walls.Within(d, FirmlinkData) {
			out = walls.AppendUnique(out, FirmlinkData+d)
		}
	}
	return out
}

// processes: what commands may do as processes (exec, signals, the
// system services tools need, named sysctls).
func (pw *profileWriter) processes() {
	w := pw.w
	w(`(version 1)
; Generated by harness from the session policy. Paths are -D parameters.
(deny default)

; Commands run commands; signals stay inside.
(allow process-exec process-fork)
(allow signal (target same-sandbox))
; The sandbox's own process info (ps, psutil, Go os/exec); harness and the
; user's other processes stay unseen.
(allow process-info* (target same-sandbox))
; host_processor_info: Node os.cpus() (libuv).
(allow mach-host*)
; getpwuid, getgrgid: whoami, id, git, ssh, Python pwd.
(allow mach-lookup (global-name "com.apple.system.opendirectoryd.libinfo"))
; CFPreferences reads: defaults, xcrun, swift, Foundation tools.
(allow user-preference-read)
(allow ipc-posix-shm-read* (ipc-posix-name-prefix "apple.cfprefs."))
(allow mach-lookup
  (global-name "com.apple.cfprefsd.daemon")
  (global-name "com.apple.cfprefsd.agent")
  (local-name "com.apple.cfprefsd.agent"))
; POSIX semaphores: Python multiprocessing (SemLock), PostgreSQL initdb.
(allow ipc-posix-sem)
; OpenMP's registration segment (libomp: numpy, PyTorch, scikit-learn).
(allow ipc-posix-shm-read-data ipc-posix-shm-write-create ipc-posix-shm-write-unlink
  (ipc-posix-name-regex #"^/__KMP_REGISTERED_LIB_[0-9]+$"))
; Java reads the CPU type through a sysctl "write" of a buffer.
(allow sysctl-write (sysctl-name "kern.grade_cputype"))
; Named sysctls only: never kern.procargs2 (harness's environment).
(allow sysctl-read`)
	for _, s := range seatbeltSysctls {
		if seatbeltPrefixSysctl(s.name) {
			w("\n  (sysctl-name-prefix %q) ; %s", s.name, s.why)
		} else {
			w("\n  (sysctl-name %q) ; %s", s.name, s.why)
		}
	}
	w(`
  )

; Read anywhere but the secrets and the terminals (below).
(allow file-read*)
`)
}

// reads: everything but the secrets and the terminals.
func (pw *profileWriter) reads(p *walls.Policy) {
	w, param := pw.w, pw.param
	if deny := denyVariants(p.DenyRead()); len(deny) > 0 {
		// Mapping a file executable reads it too.
		w("(deny file-read* file-write* file-map-executable")
		for _, d := range deny {
			w("\n  (subpath %s)", param("DENY", d))
		}
		w(")\n")
	}
}

// writes: the writable roots, the private temporary directory, the
// devices every tool writes, and no terminal but its own.
func (pw *profileWriter) writes(p *walls.Policy, tmp string) {
	w, param := pw.w, pw.param
	w("\n; Write only the writable roots (the project's build cache among them)\n; and the private temporary directory.\n(allow file-write*")
	for _, root := range p.WriteRoots() {
		w("\n  (subpath %s)", param("WRITE", root))
	}
	w("\n  (subpath %s))\n", param("TMP", tmp))
	w(`; Devices every tool writes: the null device and its own descriptors.
(allow file-write-data
  (require-all (literal "/dev/null") (vnode-type CHARACTER-DEVICE))
  (literal "/dev/zero") (literal "/dev/stdout") (literal "/dev/stderr") (regex #"^/dev/fd/[0-9]+$"))

; No terminal but the pseudo-terminals a command makes itself (script,
; expect, Python pty, node-pty): never /dev/tty or the user's open tabs.
(deny file-read* file-write* file-ioctl
  (literal "/dev/tty") (literal "/dev/console") (regex #"^/dev/tty") (regex #"^/dev/cu\.") (regex #"^/dev/pty"))
(allow pseudo-tty)
(allow file-read* file-write* file-ioctl (literal "/dev/ptmx"))
(allow file-read* file-write* file-ioctl
  (require-all (regex #"^/dev/ttys[0-9]+$") (extension "com.apple.sandbox.pty")))
`)
}

// carveOuts: what stays read-only inside the writable roots.
func (pw *profileWriter) carveOuts(p *walls.Policy) {
	w, param := pw.w, pw.param
	readOnly, protected := p.ReadOnly(), p.Protected()
	ro := dedupe(append(append([]string(nil), readOnly...), protected...))
	if len(ro) > 0 {
		w("\n; Carve-outs: .git, hooks, the harness's project config.\n(deny file-write*")
		for _, r := range denyVariants(ro) {
			w("\n  (subpath %s)", param("RO", r))
		}
		w(")\n")
	}
	w("; Carve-outs by name, any case, existing or not: a .git anywhere under a\n; writable root (a new repository), and each protected path still missing.\n(deny file-write*")
	for _, root := range p.Writable() {
		w("\n  (regex %s)", param("RE", gitNameRegex(root)))
	}
	for _, r := range protected {
		if !gitshadow.Contains(readOnly, r) {
			w("\n  (regex %s)", param("RE", pathRegex(r)))
		}
	}
	w(")\n")
	if anc := ancestors(ro, p.Writable()); len(anc) > 0 {
		w("; Renaming or removing a parent would carry a carve-out away.\n(deny file-write-unlink")
		for _, a := range anc {
			w("\n  (literal %s)", param("ANC", a))
		}
		w(")\n")
	}
}

// network: a private loopback of unix sockets, and TCP on localhost only
// when the user asked.
func (pw *profileWriter) network(p *walls.Policy, tmp string) {
	w, param := pw.w, pw.param
	w(`
; A private loopback: unix sockets inside the session's temporary directory
; (test servers, databases, language servers); nothing else on the network,
; and no trustd or other daemon that would fetch on a command's behalf.
(allow system-socket (socket-domain AF_UNIX))
(allow network-bind (local unix-socket (subpath %s)))
(allow network-outbound (remote unix-socket (subpath %s)))
`, param("SOCK", tmp), param("SOCK", tmp))
	if p.LoopbackTCP() {
		w(`; Loopback TCP, asked for by the user (HARNESS_SANDBOX_LOOPBACK=1): dev
; servers and httptest. Every command of the session shares it.
(allow network-bind (local ip "localhost:*"))
(allow network-inbound (local ip "localhost:*"))
(allow network-outbound (remote ip "localhost:*"))
`)
	}
}

// regexQuote escapes s for the sandbox's regular expressions and folds
// every cased letter into its whole simple case-folding orbit: APFS ignores
// case, and a name that does not exist yet is matched as the command spells
// it. ASCII-only orbits become a class ([kK]); one with a letter beyond
// ASCII (k, K and the Kelvin sign; s, S and the long s) an alternation of
// whole UTF-8 sequences, as a class would match single bytes.
func regexQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		orbit := walls.FoldOrbit(r)
		ascii := true
		for _, o := range orbit {
			ascii = ascii && o < utf8.RuneSelf
		}
		switch {
		case len(orbit) > 1 && ascii:
			b.WriteString("[" + string(orbit) + "]")
		case len(orbit) > 1:
			alts := make([]string, len(orbit))
			for i, o := range orbit {
				alts[i] = string(o)
			}
			b.WriteString("(" + strings.Join(alts, "|") + ")")
		case strings.ContainsRune(`\.+*?()|[]{}^$`, r): // the value is a -D parameter: no string quoting
			b.WriteString(`\` + string(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// gitNameRegex matches a .git (directory or pointer file, any case) at any
// depth under root, and everything beneath it, also spelled through the
// firmlink.
func gitNameRegex(root string) string {
	return "^" + firmlinkOpt(root) + regexQuote(strings.TrimSuffix(root, "/")) + "/(.*/)?" + regexQuote(".git") + "(/.*)?$"
}

// pathRegex matches path (any case, also through the firmlink) and
// everything beneath it.
func pathRegex(path string) string {
	return "^" + firmlinkOpt(path) + regexQuote(path) + "(/.*)?$"
}

// firmlinkOpt is an optional /System/Volumes/Data prefix (any case) for a
// path outside it.
func firmlinkOpt(path string) string {
	if walls.Within(path, FirmlinkData) {
		return ""
	}
	return "(" + regexQuote(FirmlinkData) + ")?"
}

// seatbeltEnv adds to the environment what darwin's toolchains need beyond
// sandboxEnv: their caches default to ~/Library/Caches (os.UserCacheDir
// ignores XDG_CACHE_HOME there), which is read-only inside.
func seatbeltEnv(p *walls.Policy, env []string, tmp string) []string {
	cache := tmp + "/.cache"
	if p.Cache() != "" {
		cache = p.Cache() // the project's persistent cache (cache.go)
	}
	for _, kv := range []string{
		"GOLANGCI_LINT_CACHE=" + cache + "/golangci-lint",
		"STATICCHECK_CACHE=" + cache + "/staticcheck",
		"CLANG_MODULE_CACHE_PATH=" + cache + "/clang/ModuleCache", // clang -fmodules, swiftc
		"YARN_CACHE_FOLDER=" + cache + "/yarn",
		"HOMEBREW_CACHE=" + cache + "/Homebrew",
		"SWIFTPM_CACHE_DIR=" + cache + "/swiftpm",
		"PYTHONPYCACHEPREFIX=" + cache + "/pycache", // system Python's site-packages are read-only
		// Their darwin defaults are ~/Library/Caches/<tool> too.
		"CCACHE_DIR=" + cache + "/ccache",
		"SCCACHE_DIR=" + cache + "/sccache",
		"COMPOSER_CACHE_DIR=" + cache + "/composer",
		"POETRY_CACHE_DIR=" + cache + "/pypoetry",
		"BLACK_CACHE_DIR=" + cache + "/black",
		"PYLINTHOME=" + cache + "/pylint",
		"ZIG_GLOBAL_CACHE_DIR=" + cache + "/zig",
	} {
		k, _, _ := strings.Cut(kv, "=")
		if !walls.HasEnv(env, k) {
			env = append(env, kv)
		}
	}
	return env
}

func dedupe(in []string) []string {
	var out []string
	for _, s := range in {
		out = walls.AppendUnique(out, s)
	}
	return out
}

// ancestors lists the directories between each protected path and the
// writable root holding it (the root included).
func ancestors(protected, roots []string) []string {
	var out []string
	for _, p := range protected {
		for _, r := range roots {
			if !walls.Within(p, r) || p == r {
				continue
			}
			for d := filepath.Dir(p); walls.Within(d, r); d = filepath.Dir(d) {
				out = walls.AppendUnique(out, d)
				if d == r {
					break
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// seatbeltArgs is the sandbox-exec command line (before the command) and
// the environment for p, with tmp the session's private directory.
func seatbeltArgs(p *walls.Policy, tmp string) (argv, env []string) {
	profile, params := seatbeltProfile(p, tmp)
	argv = []string{"/usr/bin/sandbox-exec", "-p", profile}
	for _, kv := range params {
		argv = append(argv, "-D", kv)
	}
	return append(argv, "--"), seatbeltEnv(p, walls.SandboxEnv(p, tmp, "seatbelt"), tmp)
}
