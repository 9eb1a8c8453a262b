//go:build ignore

// Startup measures what harness pays before it does anything: the CPU of
// `harness --version` against the first version's binary, paired and
// interleaved in one run, the binaries' sizes, and the package inits'
// time and allocations (GODEBUG=inittrace=1). Every re-exec of the binary
// (sandbox helper, launcher, supervisor, container init) pays the same
// start, so this is a floor under each sandboxed command too.
//
//	go run scripts/startup.go [-first REV] [-rounds N] [-keep DIR] [NAME=BINARY...]
//
// It builds REV (default: the first commit whose cmd/harness builds) in a
// temporary git worktree, and the working tree, each twice: plainly (go
// build, as the first version was built) and as the README installs it
// (CGO_ENABLED=0 -trimpath -ldflags="-s -w"); "vs first" is against the
// first version as it was built, and the two README builds give the
// like-for-like ratio. Extra
// NAME=BINARY arguments join the paired runs, for a before/after in one
// run. CPU is user+system time from wait4, summed over -rounds runs of
// each binary in a fresh random order per round; the ratio's spread is the
// range of the ratios of ten equal blocks of rounds.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// readmeFlags and readmeEnv are the README's install command's.
var (
	readmeFlags = []string{"-trimpath", "-ldflags=-s -w"}
	readmeEnv   = []string{"CGO_ENABLED=0"}
)

type binary struct {
	name, path string
	cpu        []time.Duration // per round
}

func main() {
	first := flag.String("first", "0905719", "the first version: a git revision whose ./cmd/harness builds")
	rounds := flag.Int("rounds", 500, "runs of each binary")
	keep := flag.String("keep", "", "build into this directory and keep the binaries (default: a temporary one)")
	flag.Parse()

	dir := *keep
	if dir == "" {
		d, err := os.MkdirTemp("", "harness-startup-")
		check(err)
		cleanup = func() { os.RemoveAll(d) }
		defer cleanup()
		dir = d
	}
	check(os.MkdirAll(dir, 0o755))

	// The first version as it was built (go build), and as the README
	// builds now, for a like-for-like ratio.
	firstBin := filepath.Join(dir, "harness-first")
	firstReadme := filepath.Join(dir, "harness-first-readme")
	if _, err := os.Stat(firstReadme); err != nil {
		wt := filepath.Join(dir, "first-src")
		run("git", "worktree", "add", "--detach", wt, *first)
		err := tryBuild(wt, firstBin, nil)
		if err == nil {
			err = tryBuild(wt, firstReadme, readmeEnv, readmeFlags...)
		}
		run("git", "worktree", "remove", "--force", wt)
		if err != nil {
			fail("go build of %s: %v", *first, err)
		}
	}
	plain := filepath.Join(dir, "harness-plain")
	readme := filepath.Join(dir, "harness-readme")
	build(".", plain, nil)
	build(".", readme, readmeEnv, readmeFlags...)

	bins := []*binary{
		{name: "first (" + *first + ")", path: firstBin},
		{name: "now, go build", path: plain},
		{name: "now, README build", path: readme},
		{name: "first, README build", path: firstReadme},
	}
	for _, a := range flag.Args() {
		name, path, ok := strings.Cut(a, "=")
		if !ok {
			fail("argument %q: want NAME=BINARY", a)
		}
		bins = append(bins, &binary{name: name, path: path})
	}

	fmt.Printf("%-24s %12s\n", "binary", "size (MB)")
	for _, b := range bins {
		fi, err := os.Stat(b.path)
		check(err)
		fmt.Printf("%-24s %12.2f\n", b.name, float64(fi.Size())/1e6)
	}

	// Paired: every round runs every binary once, in a fresh order.
	order := make([]int, len(bins))
	for i := range order {
		order[i] = i
	}
	for range *rounds {
		rand.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, i := range order {
			bins[i].cpu = append(bins[i].cpu, cpuOf(bins[i].path, "--version"))
		}
	}
	fmt.Printf("\n`--version`, %d interleaved runs each (user+sys CPU from wait4)\n", *rounds)
	fmt.Printf("%-24s %12s %12s %18s\n", "binary", "mean (ms)", "vs first", "blocks' range")
	for _, b := range bins {
		ratio, lo, hi := ratios(b.cpu, bins[0].cpu)
		fmt.Printf("%-24s %12.3f %12.3f %9.3f–%.3f\n", b.name, mean(b.cpu), ratio, lo, hi)
	}

	fmt.Printf("\ninits (GODEBUG=inittrace=1 --version, median of 21 runs)\n")
	fmt.Printf("%-24s %12s %12s %12s\n", "binary", "clock (ms)", "bytes", "allocs")
	for _, b := range bins {
		ms, bytes, allocs, top := inits(b.path, 21)
		fmt.Printf("%-24s %12.3f %12d %12d   top: %s\n", b.name, ms, bytes, allocs, top)
	}
}

// cpuOf runs the binary once and returns its user+system CPU.
func cpuOf(path string, args ...string) time.Duration {
	cmd := exec.Command(path, args...)
	check(cmd.Run())
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

func mean(d []time.Duration) float64 {
	var s time.Duration
	for _, x := range d {
		s += x
	}
	return float64(s.Microseconds()) / float64(len(d)) / 1000
}

// ratios returns sum(a)/sum(b) and the lowest and highest of the same
// ratio over ten equal blocks of rounds.
func ratios(a, b []time.Duration) (all, lo, hi float64) {
	sum := func(d []time.Duration) float64 {
		var s time.Duration
		for _, x := range d {
			s += x
		}
		return float64(s)
	}
	all = sum(a) / sum(b)
	lo, hi = all, all
	n := len(a) / 10
	for i := 0; n > 0 && i < 10; i++ {
		r := sum(a[i*n:(i+1)*n]) / sum(b[i*n:(i+1)*n])
		lo, hi = min(lo, r), max(hi, r)
	}
	return all, lo, hi
}

var initLine = regexp.MustCompile(`^init (\S+) @\S+ ms, ([0-9.]+) ms clock, ([0-9]+) bytes, ([0-9]+) allocs`)

// inits runs the binary n times with the init trace and returns the median
// total clock, bytes and allocations over all package inits, and the five
// packages with the most clock in the median run.
func inits(path string, n int) (ms float64, bytes_, allocs int64, top string) {
	type trace struct {
		ms            float64
		bytes, allocs int64
		pkgs          map[string]float64
	}
	var ts []trace
	for range n {
		cmd := exec.Command(path, "--version")
		cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		check(cmd.Run())
		t := trace{pkgs: map[string]float64{}}
		sc := bufio.NewScanner(&stderr)
		for sc.Scan() {
			m := initLine.FindStringSubmatch(sc.Text())
			if m == nil {
				continue
			}
			c, _ := strconv.ParseFloat(m[2], 64)
			b, _ := strconv.ParseInt(m[3], 10, 64)
			a, _ := strconv.ParseInt(m[4], 10, 64)
			t.ms += c
			t.bytes += b
			t.allocs += a
			t.pkgs[m[1]] += c
		}
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].ms < ts[j].ms })
	med := ts[len(ts)/2]
	names := make([]string, 0, len(med.pkgs))
	for p := range med.pkgs {
		names = append(names, p)
	}
	slices.SortFunc(names, func(a, b string) int {
		if med.pkgs[a] > med.pkgs[b] {
			return -1
		}
		if med.pkgs[a] < med.pkgs[b] {
			return 1
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, p := range names[:min(5, len(names))] {
		parts = append(parts, fmt.Sprintf("%s %.2f", strings.TrimPrefix(p, "github.com/harness-dev/harness/"), med.pkgs[p]))
	}
	return med.ms, med.bytes, med.allocs, strings.Join(parts, ", ")
}

func build(dir, out string, env []string, flags ...string) {
	if err := tryBuild(dir, out, env, flags...); err != nil {
		fail("go build in %s: %v", dir, err)
	}
}

func tryBuild(dir, out string, env []string, flags ...string) error {
	args := append([]string{"build"}, flags...)
	args = append(args, "-o", out, "./cmd/harness")
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

func run(name string, args ...string) {
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fail("%s %s: %v", name, strings.Join(args, " "), err)
	}
}

func check(err error) {
	if err != nil {
		fail("%v", err)
	}
}

// cleanup removes the temporary build directory, also when fail exits.
var cleanup = func() {}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "startup: "+format+"\n", args...)
	cleanup()
	os.Exit(1)
}
