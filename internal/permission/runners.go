package permission

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// The build tools and test runners the defaults allow (and those a user's
// rule may allow: go build, mvn, gradle, dotnet, rspec) run the project's
// own code by design; the sandbox holds the walls. What they must not do
// unasked is run a program of the model's choosing or write where no rule
// lets it: every option that names a program, a shell, a preload, a
// config that can name one, a directory whose code or config they load,
// or an output path is in the tables below, from each tool's manual:
//
//   - go help build, go help testflag (cmd/go)
//   - GNU make manual, "Options Summary" and "Overriding Variables"
//   - pytest "Command-line Flags" reference; unittest's command-line interface
//   - npm config (docs.npmjs.com/cli/using-npm/config), pnpm and yarn (v1) CLI docs
//   - The Cargo Book, "cargo test" and "Command-line overrides" (--config)
//   - Maven CLI options (mvn --help), Gradle "Command-Line Interface"
//   - dotnet test and MSBuild command-line reference
//   - rspec --help (RSpec::Core::Parser)

// goBuildOpts are the build flags every go command that builds shares.
var goBuildOpts = []opt{
	{long: "C", arg: needArg, role: rDir, why: "builds in a directory outside the project"},
	{long: "a"}, {long: "n"}, {long: "race"}, {long: "msan"}, {long: "asan"}, {long: "cover"},
	{long: "v"}, {long: "work"}, {long: "x"}, {long: "linkshared"}, {long: "modcacherw"},
	{long: "trimpath"}, {long: "json"}, {long: "i"},
	{long: "p", arg: needArg}, {long: "covermode", arg: needArg}, {long: "coverpkg", arg: needArg},
	{long: "buildmode", arg: needArg}, {long: "buildvcs", arg: optArg}, {long: "compiler", arg: needArg},
	{long: "installsuffix", arg: needArg}, {long: "mod", arg: needArg}, {long: "tags", arg: needArg},
	{long: "pgo", arg: needArg, role: rRead},
	{long: "pkgdir", arg: needArg, role: rWrite},
	{long: "o", arg: needArg, role: rWrite},
	{long: "toolexec", arg: needArg, role: rRun},
	{long: "exec", arg: needArg, role: rRun},
	{long: "modfile", arg: needArg, role: rDir, why: "uses a go.mod outside the project, whose replace directives can name any code"},
	{long: "overlay", arg: needArg, role: rDir, why: "replaces source files as a file outside the project says"},
	{long: "gcflags", arg: needArg, role: rAsk, ok: goToolFlagsOK, why: "passes flags to the compiler, which can name programs and output files"},
	{long: "ldflags", arg: needArg, role: rAsk, ok: goToolFlagsOK, why: "passes flags to the linker, which can name programs (-extld) and output files"},
	{long: "asmflags", arg: needArg, role: rAsk, ok: goToolFlagsOK, why: "passes flags to the assembler, which can name output files"},
	{long: "gccgoflags", arg: needArg, role: rAsk, ok: goToolFlagsOK, why: "passes flags to gccgo, which can name programs and output files"},
}

// goTestOpts are go test's own flags and the test binary's (also spelled
// -test.NAME); the profiles and logs they name are written.
var goTestOpts = []opt{
	{long: "c"}, {long: "failfast"}, {long: "fullpath"}, {long: "short"}, {long: "benchmem"},
	{long: "paniconexit0"},
	{long: "run", arg: needArg}, {long: "skip", arg: needArg}, {long: "bench", arg: needArg},
	{long: "benchtime", arg: needArg}, {long: "count", arg: needArg}, {long: "cpu", arg: needArg},
	{long: "parallel", arg: needArg}, {long: "timeout", arg: needArg}, {long: "shuffle", arg: needArg},
	{long: "fuzz", arg: needArg}, {long: "fuzztime", arg: needArg}, {long: "fuzzminimizetime", arg: needArg},
	{long: "list", arg: needArg}, {long: "vet", arg: needArg}, {long: "memprofilerate", arg: needArg},
	{long: "blockprofilerate", arg: needArg}, {long: "mutexprofilefraction", arg: needArg},
	{long: "coverprofile", arg: needArg, role: rWrite}, {long: "cpuprofile", arg: needArg, role: rWrite},
	{long: "memprofile", arg: needArg, role: rWrite}, {long: "blockprofile", arg: needArg, role: rWrite},
	{long: "mutexprofile", arg: needArg, role: rWrite}, {long: "trace", arg: needArg, role: rWrite},
	{long: "outputdir", arg: needArg, role: rWrite}, {long: "fuzzcachedir", arg: needArg, role: rWrite},
	{long: "testlogfile", arg: needArg, role: rWrite}, {long: "gocoverdir", arg: needArg, role: rWrite},
}

var (
	// go build, run, install, vet...: options end at the first package
	// (what follows go run's package is the program's).
	specGoBuild = &spec{oneDash: true, posix: true, opts: goBuildOpts}
	// go test takes its flags and the test binary's among the packages
	// (joined on first use: not at init, which every process start pays).
	specGoTest = sync.OnceValue(func() *spec {
		return &spec{oneDash: true, strip: "test.", opts: slices.Concat(goBuildOpts, goTestOpts)}
	})
	specGoVet = sync.OnceValue(func() *spec {
		return &spec{oneDash: true, opts: slices.Concat(goBuildOpts, []opt{{long: "vettool", arg: needArg, role: rRun}})}
	})
)

var goOptLevelRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^-m(=?[0-9])?$`) })

// goToolFlagsOK: -gcflags/-ldflags values made only of flags that change
// code generation or strip symbols, never ones that name a program or a
// file ("all=-N -l", "-s -w -X main.version=1").
func goToolFlagsOK(v string) bool {
	fs := strings.Fields(v)
	for i := 0; i < len(fs); i++ {
		f := fs[i]
		if pkg, rest, ok := strings.Cut(f, "="); ok && !strings.HasPrefix(pkg, "-") {
			f = rest // "all=-N": a package pattern, then the flag
		}
		switch {
		case f == "":
		case slices.Contains([]string{"-N", "-l", "-m", "-s", "-w", "-S", "-B", "-race", "-dwarf=false", "-checkptr"}, f):
		case goOptLevelRe().MatchString(f):
		case f == "-X":
			i++ // the next field is the import path.name=value
		case strings.HasPrefix(f, "-X=") || (strings.HasPrefix(f, "-X") && strings.Contains(f, "=")):
		default:
			return false
		}
	}
	return true
}

// makeVarRe is a command-line variable assignment: NAME OP VALUE.
var makeVarRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([A-Za-z_.][A-Za-z0-9_.-]*)\s*(:::=|::=|:=|\+=|\?=|!=|=)(.*)$`)
})

// makeSafeValue is a value no recipe can turn into a program of its own:
// no $, backquote, blank, slash or shell operator.
var makeSafeValue = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.,:+=@%-]*$`) })
var (
	specMake = &spec{abbrev: true, opts: []opt{
		{short: 'C', long: "directory", arg: needArg, role: rDir, why: "runs a makefile outside the project"},
		{short: 'f', long: "file", arg: needArg, role: rDir, why: "runs a makefile outside the project"},
		{long: "makefile", arg: needArg, role: rDir, why: "runs a makefile outside the project"},
		{short: 'I', long: "include-dir", arg: needArg, role: rDir, why: "includes makefiles from outside the project"},
		{short: 'E', long: "eval", arg: needArg, role: rRun},
		{short: 't', long: "touch", role: rAsk, why: "touches the targets' files instead of building them"},
		{short: 'j', long: "jobs", arg: optArg}, {short: 'l', long: "load-average", arg: optArg},
		{long: "max-load", arg: optArg}, {short: 'O', long: "output-sync", arg: optArg},
		{short: 'o', long: "old-file", arg: needArg}, {long: "assume-old", arg: needArg},
		{short: 'W', long: "what-if", arg: needArg}, {long: "new-file", arg: needArg},
		{long: "assume-new", arg: needArg}, {long: "debug", arg: optArg}, {long: "shuffle", arg: optArg},
		{long: "jobserver-auth", arg: needArg}, {long: "jobserver-style", arg: needArg},
	}}

	// pytest, also as python -m pytest; argparse takes unique prefixes.
	specPytest = &spec{abbrev: true, opts: []opt{
		{short: 'p', arg: needArg, role: rRun, ok: func(v string) bool { return strings.HasPrefix(v, "no:") }},
		{short: 'c', long: "config-file", arg: needArg, role: rDir, why: "reads a config outside the project, which can load plugins"},
		{long: "inifile", arg: needArg, role: rDir, why: "reads a config outside the project, which can load plugins"},
		{long: "rootdir", arg: needArg, role: rDir, why: "takes its config and conftest.py from outside the project"},
		{long: "confcutdir", arg: needArg, role: rDir, why: "loads conftest.py files from outside the project"},
		{long: "basetemp", arg: needArg, role: rWrite}, // pytest empties it first
		{short: 'o', long: "override-ini", arg: needArg, role: rAsk, ok: pytestIniOK,
			why: "overrides a config setting, which can load plugins or name paths"},
		{long: "junitxml", arg: needArg, role: rWrite}, {long: "junit-xml", arg: needArg, role: rWrite},
		{long: "resultlog", arg: needArg, role: rWrite}, {long: "result-log", arg: needArg, role: rWrite},
		{long: "report-log", arg: needArg, role: rWrite}, {long: "log-file", arg: needArg, role: rWrite},
		{long: "debug", arg: optArg, role: rWrite},
		{long: "pdbcls", arg: needArg, role: rRun},
		{long: "cov-config", arg: needArg, role: rDir, why: "reads a coverage config outside the project"},
		{long: "cov-report", arg: needArg, role: rAsk, ok: func(v string) bool { return !strings.Contains(v, ":") },
			why: "writes a coverage report where its value says"},
		{short: 'k', arg: needArg}, {short: 'm', arg: needArg}, {short: 'r', arg: needArg},
		{short: 'W', long: "pythonwarnings", arg: needArg}, {short: 'n', long: "numprocesses", arg: needArg},
		{long: "tb", arg: needArg}, {long: "maxfail", arg: needArg}, {long: "durations", arg: needArg},
		{long: "durations-min", arg: needArg}, {long: "deselect", arg: needArg}, {long: "ignore", arg: needArg},
		{long: "ignore-glob", arg: needArg}, {long: "import-mode", arg: needArg}, {long: "capture", arg: needArg},
		{long: "log-level", arg: needArg}, {long: "log-cli-level", arg: needArg}, {long: "log-format", arg: needArg},
		{long: "log-file-level", arg: needArg}, {long: "color", arg: needArg}, {long: "dist", arg: needArg},
		{long: "timeout", arg: needArg}, {long: "lfnf", arg: needArg}, {long: "cov", arg: optArg},
		// Exact names that would otherwise read as prefixes of the above
		// (--co of --config-file, --pdb of --pdbcls).
		{long: "co"}, {long: "collect-only"}, {long: "lf"}, {long: "ff"}, {long: "nf"}, {long: "sw"},
		{long: "pdb"}, {long: "trace"}, {long: "setup-show"}, {long: "setup-only"}, {long: "setup-plan"},
		{long: "cache-clear"}, {long: "cache-show", arg: optArg}, {long: "runxfail"},
	}}

	// python -m unittest [discover -s START -t TOP].
	specUnittest = &spec{opts: []opt{
		{short: 's', long: "start-directory", arg: needArg, role: rDir, why: "runs tests from outside the project"},
		{short: 't', long: "top-level-directory", arg: needArg, role: rDir, why: "imports tests from outside the project"},
		{short: 'p', long: "pattern", arg: needArg}, {short: 'k', arg: needArg}, {long: "durations", arg: needArg},
	}}

	// npm, pnpm and yarn: every option is a config key (nopt takes unique
	// prefixes); pnpm's --config.KEY=VALUE is checked on its own.
	specJS = &spec{abbrev: true, opts: []opt{
		{long: "script-shell", arg: needArg, role: rRun}, {long: "node-options", arg: needArg, role: rRun},
		{long: "shell", arg: needArg, role: rRun}, {short: 'c', long: "call", arg: needArg, role: rRun},
		{long: "init-module", arg: needArg, role: rRun}, {long: "onload-script", arg: needArg, role: rRun},
		{long: "node-gyp", arg: needArg, role: rRun}, {long: "editor", arg: needArg, role: rRun},
		{long: "browser", arg: needArg, role: rRun}, {long: "viewer", arg: needArg, role: rRun},
		{long: "git", arg: needArg, role: rRun},
		{short: 'C', long: "prefix", arg: needArg, role: rDir, why: "runs the scripts of a package outside the project"},
		{long: "dir", arg: needArg, role: rDir, why: "runs the scripts of a package outside the project"},
		{long: "cwd", arg: needArg, role: rDir, why: "runs the scripts of a package outside the project"},
		{long: "userconfig", arg: needArg, role: rDir, why: "reads a config outside the project, which can name a script shell"},
		{long: "globalconfig", arg: needArg, role: rDir, why: "reads a config outside the project, which can name a script shell"},
		{long: "use-yarnrc", arg: needArg, role: rDir, why: "reads a config outside the project, which can name a script shell"},
		{long: "cache", arg: needArg, role: rWrite}, {long: "logs-dir", arg: needArg, role: rWrite},
		{long: "modules-folder", arg: needArg, role: rWrite}, {long: "global-folder", arg: needArg, role: rWrite},
		{long: "cache-folder", arg: needArg, role: rWrite}, {long: "link-folder", arg: needArg, role: rWrite},
		{long: "store-dir", arg: needArg, role: rWrite}, {long: "virtual-store-dir", arg: needArg, role: rWrite},
		{short: 'w', long: "workspace", arg: needArg}, {long: "filter", arg: needArg}, {long: "loglevel", arg: needArg},
	}}

	// cargo test/build/run (clap: no prefixes); after -- the test
	// binary's libtest options.
	specCargo = &spec{opts: []opt{
		{long: "config", arg: needArg, role: rDir, bad: func(v string) bool { return strings.Contains(v, "=") },
			why: "sets cargo config inline or from outside the project, which can name programs (target.*.runner, build.rustc-wrapper…)"},
		{short: 'Z', arg: needArg, role: rAsk, why: "turns on unstable cargo features, some of which run programs or read config from elsewhere"},
		{short: 'C', arg: needArg, role: rDir, why: "builds a package outside the project"},
		{long: "manifest-path", arg: needArg, role: rDir, why: "builds a package outside the project (its build.rs runs)"},
		{long: "target-dir", arg: needArg, role: rWrite}, {long: "artifact-dir", arg: needArg, role: rWrite},
		{long: "out-dir", arg: needArg, role: rWrite}, {long: "lockfile-path", arg: needArg, role: rWrite},
		{short: 'p', long: "package", arg: needArg}, {short: 'F', long: "features", arg: needArg},
		{long: "target", arg: needArg}, {long: "profile", arg: needArg}, {short: 'j', long: "jobs", arg: needArg},
		{long: "message-format", arg: needArg}, {long: "color", arg: needArg}, {long: "exclude", arg: needArg},
		{long: "timings", arg: optArg}, {long: "bin", arg: optArg}, {long: "example", arg: optArg},
		{long: "test", arg: optArg}, {long: "bench", arg: optArg},
	}}
	specLibtest = &spec{opts: []opt{{long: "logfile", arg: needArg, role: rWrite}}}

	// mvn: commons-cli, -opt and --option alike, unique prefixes.
	specMvn = &spec{oneDash: true, abbrev: true, opts: []opt{
		{long: "s", arg: needArg, role: rDir, why: "reads settings outside the project, which can name programs and repositories"},
		{long: "settings", arg: needArg, role: rDir, why: "reads settings outside the project, which can name programs and repositories"},
		{long: "gs", arg: needArg, role: rDir, why: "reads settings outside the project, which can name programs and repositories"},
		{long: "global-settings", arg: needArg, role: rDir, why: "reads settings outside the project, which can name programs and repositories"},
		{long: "t", arg: needArg, role: rDir, why: "reads toolchains outside the project, which name the JDK it runs"},
		{long: "toolchains", arg: needArg, role: rDir, why: "reads toolchains outside the project, which name the JDK it runs"},
		{long: "gt", arg: needArg, role: rDir, why: "reads toolchains outside the project, which name the JDK it runs"},
		{long: "global-toolchains", arg: needArg, role: rDir, why: "reads toolchains outside the project, which name the JDK it runs"},
		{long: "f", arg: needArg, role: rDir, why: "builds a POM outside the project"},
		{long: "file", arg: needArg, role: rDir, why: "builds a POM outside the project"},
		{long: "l", arg: needArg, role: rWrite}, {long: "log-file", arg: needArg, role: rWrite},
		{long: "P", arg: needArg}, {long: "activate-profiles", arg: needArg}, {long: "pl", arg: needArg},
		{long: "projects", arg: needArg}, {long: "rf", arg: needArg}, {long: "resume-from", arg: needArg},
		{long: "T", arg: needArg}, {long: "threads", arg: needArg}, {long: "b", arg: needArg}, {long: "builder", arg: needArg},
	}}

	// gradle / ./gradlew.
	specGradle = &spec{oneDash: true, opts: []opt{
		{long: "I", arg: needArg, role: rDir, why: "runs an init script from outside the project"},
		{long: "init-script", arg: needArg, role: rDir, why: "runs an init script from outside the project"},
		{long: "c", arg: needArg, role: rDir, why: "runs a settings script from outside the project"},
		{long: "settings-file", arg: needArg, role: rDir, why: "runs a settings script from outside the project"},
		{long: "b", arg: needArg, role: rDir, why: "runs a build script from outside the project"},
		{long: "build-file", arg: needArg, role: rDir, why: "runs a build script from outside the project"},
		{long: "p", arg: needArg, role: rDir, why: "builds a project outside this one"},
		{long: "project-dir", arg: needArg, role: rDir, why: "builds a project outside this one"},
		{long: "include-build", arg: needArg, role: rDir, why: "runs the build scripts of a build outside the project"},
		{long: "g", arg: needArg, role: rDir, why: "uses a Gradle home outside the project, whose init scripts and properties run"},
		{long: "gradle-user-home", arg: needArg, role: rDir, why: "uses a Gradle home outside the project, whose init scripts and properties run"},
		{long: "project-cache-dir", arg: needArg, role: rWrite},
		{long: "write-verification-metadata", arg: needArg, role: rAsk, why: "writes gradle/verification-metadata.xml"},
		{long: "P", arg: needArg}, {long: "project-prop", arg: needArg}, {long: "x", arg: needArg},
		{long: "exclude-task", arg: needArg}, {long: "tests", arg: needArg}, {long: "console", arg: needArg},
		{long: "warning-mode", arg: needArg}, {long: "max-workers", arg: needArg}, {long: "priority", arg: needArg},
		{long: "dependency-verification", arg: needArg}, {long: "F", arg: needArg},
	}}

	// dotnet test/build/run; MSBuild's own switches are checked on their own.
	specDotnet = &spec{opts: []opt{
		{short: 's', long: "settings", arg: needArg, role: rDir, why: "reads run settings outside the project, which name adapters and data collectors"},
		{long: "test-adapter-path", arg: needArg, role: rDir, why: "loads test adapters from outside the project"},
		{short: 'l', long: "logger", arg: needArg, role: rAsk, why: "writes a log file where its value says",
			ok: func(v string) bool { return !strings.Contains(strings.ToLower(v), "logfile") }},
		{short: 'o', long: "output", arg: needArg, role: rWrite},
		{long: "results-directory", arg: needArg, role: rWrite},
		{short: 'd', long: "diag", arg: needArg, role: rWrite},
		{short: 'e', long: "environment", arg: needArg, role: rAsk, ok: dotnetEnvOK,
			why: "sets an environment variable of the test host that changes what it runs"},
		{short: 'c', long: "configuration", arg: needArg}, {short: 'f', long: "framework", arg: needArg},
		{long: "filter", arg: needArg}, {long: "collect", arg: needArg}, {short: 'v', long: "verbosity", arg: needArg},
		{short: 'a', long: "arch", arg: needArg}, {long: "os", arg: needArg}, {short: 'r', long: "runtime", arg: needArg},
		{long: "blame-crash-dump-type", arg: needArg}, {long: "blame-hang-timeout", arg: needArg},
		{long: "blame-hang-dump-type", arg: needArg},
	}}

	// rspec, also as bundle exec rspec (Ruby's OptionParser takes prefixes).
	specRspec = &spec{abbrev: true, opts: []opt{
		{short: 'r', long: "require", arg: needArg, role: rDir, why: "loads Ruby code from outside the project"},
		{short: 'I', arg: needArg, role: rDir, why: "loads Ruby code from outside the project"},
		{short: 'O', long: "options", arg: needArg, role: rDir, why: "reads options from a file outside the project, which can load code"},
		{long: "default-path", arg: needArg, role: rDir, why: "runs specs from outside the project"},
		{short: 'o', long: "out", arg: needArg, role: rWrite},
		{long: "init", role: rAsk, why: "writes .rspec and spec/spec_helper.rb"},
		{short: 'X', long: "drb", role: rAsk, why: "hands the specs to a DRb server"},
		{long: "drb-port", arg: needArg}, {short: 'f', long: "format", arg: needArg},
		{short: 'e', long: "example", arg: needArg}, {short: 'E', long: "example-matches", arg: needArg},
		{short: 't', long: "tag", arg: needArg}, {short: 'P', long: "pattern", arg: needArg},
		{long: "exclude-pattern", arg: needArg}, {long: "seed", arg: needArg}, {long: "order", arg: needArg},
		{short: 'p', long: "profile", arg: optArg}, {long: "failure-exit-code", arg: needArg},
		{long: "error-exit-code", arg: needArg},
	}}
)

// pytestIniOK: -o KEY=VALUE for keys that only change what is reported.
func pytestIniOK(v string) bool {
	key, _, _ := strings.Cut(v, "=")
	return slices.Contains([]string{"log_cli", "log_cli_level", "log_level", "console_output_style",
		"xfail_strict", "junit_family", "verbosity_assertions", "verbosity_test_cases",
		"empty_parameter_set_mark", "asyncio_mode", "timeout", "faulthandler_timeout"}, strings.TrimSpace(key))
}

func dotnetEnvOK(v string) bool {
	name, _, _ := strings.Cut(v, "=")
	up := strings.ToUpper(name)
	return !isRiskyVar(name) && !strings.HasPrefix(up, "DOTNET_") && !strings.HasPrefix(up, "COR")
}

// safeProps are -D system properties of mvn and gradle that only choose
// tests or skip work.
var safeProps = []string{"test", "it.test", "skipTests", "skipITs", "maven.test.skip",
	"maven.test.failure.ignore", "surefire.failIfNoSpecifiedTests", "failIfNoTests",
	"groups", "excludedGroups", "maven.javadoc.skip", "checkstyle.skip", "spotless.check.skip"}

// runThrough are the launchers that run the command named next in the
// project's environment: their command's options are checked as its own.
var runThrough = [][]string{{"bundle", "exec"}, {"uv", "run"}, {"poetry", "run"}, {"pipenv", "run"},
	{"pnpm", "exec"}, {"yarn", "exec"}, {"npx"}}

// runnerOptions checks the options of a build tool or test runner named
// base (by its own name, or as the project's wrapper script: ./gradlew).
func (sc *shellCheck) runnerOptions(base string, args []token) {
	for _, rt := range runThrough {
		if base != rt[0] || len(args) < len(rt)-1 {
			continue
		}
		if !slices.EqualFunc(args[:len(rt)-1], rt[1:], func(t token, w string) bool { return !t.dyn && t.s == w }) {
			continue
		}
		inner := skipOpts(args[len(rt)-1:], "--gemfile")
		if len(inner) > 0 && !inner[0].dyn {
			name, _ := cmdName(inner[0].s)
			sc.runnerOptions(name, inner[1:])
		}
		return
	}
	switch base {
	case "go":
		sub := firstWord(args)
		rest := args[min(len(args), 1):]
		switch sub {
		case "test":
			sc.runner("go test")
			before, after, _ := cutWord(rest, "-args", "--args")
			sc.codeOperands("go test", sc.applySpec("go test", specGoTest(), before), goCodePath)
			sc.applySpec("go test", specGoTest(), after) // the test binary reads -test.* too
		case "vet":
			sc.runner("go vet")
			sc.codeOperands("go vet", sc.applySpec("go vet", specGoVet(), rest), goCodePath)
		case "build", "run", "install", "list", "generate", "fix":
			sc.applySpec("go "+sub, specGoBuild, rest)
		}
	case "make", "gmake":
		sc.runner(base)
		for _, t := range sc.applySpec(base, specMake, args) {
			sc.makeVar(base, t)
		}
	case "pytest", "py.test":
		sc.runner(base)
		sc.codeOperands(base, sc.applySpec(base, specPytest, args), pytestPath)
	case "python", "python3":
		mod, rest := pythonModule(args)
		switch mod {
		case "pytest":
			sc.runner(base + " -m pytest")
			sc.codeOperands(base+" -m pytest", sc.applySpec("pytest", specPytest, rest), pytestPath)
		case "unittest":
			sc.runner(base + " -m unittest")
			sc.codeOperands(base+" -m unittest", sc.applySpec("unittest", specUnittest, rest), unittestPath)
		}
	case "npm", "pnpm", "yarn":
		sc.runner(base)
		for _, t := range args {
			if !t.dyn && t.s == "--" {
				break
			}
			if strings.HasPrefix(t.s, "--config.") {
				sc.ask("ask: " + base + " " + strings.SplitN(t.s, "=", 2)[0] + " sets a config key, which can name a script shell or node options")
			}
		}
		before, _, _ := cutWord(args, "--")
		sc.applySpec(base, specJS, before)
	case "cargo":
		sc.runner(base)
		before, after, _ := cutWord(args, "--")
		sc.applySpec("cargo", specCargo, before)
		sc.applySpec("cargo test --", specLibtest, after)
	case "mvn", "mvnw", "gradle", "gradlew":
		sc.runner(base)
		s := specMvn
		if strings.HasPrefix(base, "gradle") {
			s = specGradle
		}
		sc.applySpec(base, s, sc.javaProps(base, args))
	case "dotnet":
		if sub := firstWord(args); sub == "test" || sub == "build" || sub == "run" {
			sc.runner("dotnet " + sub)
			before, after, dash := cutWord(args[1:], "--")
			sc.applySpec("dotnet "+sub, specDotnet, sc.msbuildSwitches("dotnet "+sub, before))
			if dash && sub == "test" && len(after) > 0 {
				sc.ask("ask: dotnet test -- sets run settings, which can name adapters and data collectors")
			}
		}
	case "rspec":
		sc.runner(base)
		sc.codeOperands(base, sc.applySpec(base, specRspec, args), pytestPath)
	}
}

// runner asks when a runner would run outside the project: in the
// private /tmp (code there is the model's to write unasked), in another
// directory of the machine (code the user never chose to run: the rules
// that allow runners are about the project's own tests), or in a
// directory computed at run time.
func (sc *shellCheck) runner(what string) {
	if sc.cwd == "" {
		sc.ask("ask: " + what + " runs in a directory computed at run time")
		return
	}
	if !sc.inside(sc.cwd) {
		if free, _ := sc.g.privateTmp(sc.cwd); free {
			sc.ask("ask: " + what + " runs code from the private /tmp, which any command may write")
			return
		}
		sc.ask("ask: " + what + " runs in " + sc.cwd + ", outside the project, and would run the code there")
	}
}

// codeOperands checks the operands of a runner that name the code it runs
// (go test FILE.go or ../pkg, pytest DIR/test_x.py::case): a path outside
// the project asks, as the runner's own directory does. pathOf says which
// operands are paths, and which part of them; the rest (import paths,
// module names, test filters) name code the project already depends on.
func (sc *shellCheck) codeOperands(what string, ops []token, pathOf func(string) (string, bool)) {
	for _, t := range ops {
		if t.dyn {
			sc.ask("ask: " + what + " has an operand computed at run time, which could name code outside the project")
			continue
		}
		if p, ok := pathOf(t.s); ok {
			sc.inProject(token{s: p, glob: t.glob}, what+" "+t.s, "runs code from outside the project")
		}
	}
}

// goCodePath: a go package or file operand that is a path (absolute,
// ./ or ../, or a .go file), not an import path.
func goCodePath(s string) (string, bool) {
	if filepath.IsAbs(s) || s == "." || s == ".." || strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") ||
		strings.HasPrefix(s, "~") || strings.HasSuffix(s, ".go") {
		return strings.TrimSuffix(s, "/..."), true
	}
	return "", false
}

// pytestPath: pytest and rspec operands are paths, with a test's name or
// line after :: or : (tests/test_x.py::case, spec/x_spec.rb:12).
func pytestPath(s string) (string, bool) {
	if p, _, ok := strings.Cut(s, "::"); ok {
		s = p
	}
	if i := strings.LastIndex(s, ":"); i > 0 && strings.Trim(s[i+1:], "0123456789") == "" {
		s = s[:i]
	}
	return s, s != ""
}

// unittestPath: unittest operands are module names, or paths to test
// files.
func unittestPath(s string) (string, bool) {
	if strings.ContainsRune(s, '/') || strings.HasSuffix(s, ".py") {
		return s, true
	}
	return "", false
}

// inside says abs (and what its symlinks resolve to) is in the project.
func (sc *shellCheck) inside(abs string) bool {
	p := sc.g.o.Project
	if !within(abs, p) {
		return false
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil && !within(r, p) && !within(canon(r), p) {
		return false
	}
	return true
}

// inProject checks a directory or file whose code or config a tool uses
// (rDir): a literal path inside the project passes, anything else asks.
func (sc *shellCheck) inProject(t token, what, why string) {
	if why == "" {
		why = "uses code or config from outside the project"
	}
	if t.dyn || t.glob {
		sc.ask("ask: " + what + " names a path computed at run time; it " + why)
		return
	}
	abs, ok := sc.path(t.s)
	if !ok {
		sc.ask("ask: " + what + " names a path relative to a directory computed at run time; it " + why)
		return
	}
	if !sc.inside(abs) {
		sc.ask("ask: " + what + " " + why)
	}
	sc.read(t)
}

// makeVar checks a make operand that assigns a variable: a recipe may
// run its value, so only plain values of ordinary variables pass.
func (sc *shellCheck) makeVar(base string, t token) {
	m := makeVarRe().FindStringSubmatch(t.s)
	if m == nil && !t.dyn {
		return // a target
	}
	if t.dyn {
		if strings.Contains(t.s, "=") || !strings.ContainsAny(t.s, "/") {
			sc.ask("ask: " + base + " has an operand computed at run time, which could set a variable its recipes run")
		}
		return
	}
	name, op, val := m[1], m[2], m[3]
	switch {
	case op == "!=":
		sc.ask("ask: " + base + " " + name + "!= runs a shell command")
	case slices.Contains([]string{"SHELL", ".SHELLFLAGS", "MAKESHELL", "MAKEFLAGS", "MFLAGS", "GNUMAKEFLAGS", "MAKEFILES", "MAKE", "MAKEOVERRIDES"}, name):
		sc.ask("ask: " + base + " " + name + "= changes the shell or the makefiles it runs")
	case !makeSafeValue().MatchString(val):
		sc.ask("ask: " + base + " " + name + "= sets a variable to text its recipes may run")
	}
}

// javaProps checks mvn's and gradle's -D system properties and returns
// the other arguments.
func (sc *shellCheck) javaProps(base string, args []token) []token {
	var rest []token
	for i := 0; i < len(args); i++ {
		t := args[i]
		var prop token
		switch {
		case t.dyn && (t.s == "" || t.s == "-"):
			rest = append(rest, t)
			continue
		case t.s == "-D" || t.s == "--define" || t.s == "--system-prop":
			if i+1 >= len(args) {
				continue
			}
			i++
			prop = args[i]
		case strings.HasPrefix(t.s, "-D"):
			prop = t
			prop.s = t.s[2:]
		case strings.HasPrefix(t.s, "--define=") || strings.HasPrefix(t.s, "--system-prop="):
			prop = t
			_, prop.s, _ = strings.Cut(t.s, "=")
		default:
			rest = append(rest, t)
			continue
		}
		key, _, _ := strings.Cut(prop.s, "=")
		if prop.dyn || !slices.Contains(safeProps, key) {
			sc.ask("ask: " + base + " -D" + key + " sets a system property, which can name a program or a path (exec.executable, maven.repo.local, org.gradle.java.home…)")
		}
	}
	return rest
}

// msbuildSwitches checks the MSBuild switches dotnet passes on
// (-p:NAME=VALUE, -bl:FILE, -logger:ASSEMBLY, @response files) and returns
// the other arguments.
func (sc *shellCheck) msbuildSwitches(what string, args []token) []token {
	var rest []token
	for _, t := range args {
		s := strings.ToLower(strings.TrimLeft(t.s, "-/"))
		switch {
		case t.dyn && t.s == "":
			rest = append(rest, t)
		case strings.HasPrefix(t.s, "@"):
			sc.inProject(token{s: t.s[1:], dyn: t.dyn}, what+" @FILE", "reads arguments from a file outside the project")
		case (strings.HasPrefix(t.s, "-") || strings.HasPrefix(t.s, "/")) && strings.Contains(s, ":") &&
			slices.Contains([]string{"p", "property", "bl", "binarylogger", "logger", "distributedlogger", "dl", "fl", "fileloggerparameters", "flp", "restoreproperty", "rp", "getproperty"}, strings.SplitN(s, ":", 2)[0]):
			sc.ask("ask: " + what + " " + strings.SplitN(t.s, ":", 2)[0] + ": sets an MSBuild property or logger, which can name programs and files")
		default:
			rest = append(rest, t)
		}
	}
	return rest
}

// pythonModule is the module python runs with -m, past the
// interpreter's own options, and the module's arguments; "" when it runs
// no module.
func pythonModule(args []token) (string, []token) {
	for i := 0; i < len(args); i++ {
		t := args[i]
		switch {
		case t.dyn || !strings.HasPrefix(t.s, "-") || t.s == "-" || t.s == "--":
			return "", nil
		case t.s == "-m" && i+1 < len(args) && !args[i+1].dyn:
			return args[i+1].s, args[i+2:]
		case t.s == "-W" || t.s == "-X":
			i++
		case strings.HasPrefix(t.s, "--"):
		default:
			// A bundle: -Bm MOD, -mMOD; -c runs code.
			for j := 1; j < len(t.s); j++ {
				switch t.s[j] {
				case 'c':
					return "", nil
				case 'W', 'X':
					if j == len(t.s)-1 {
						i++
					}
					j = len(t.s)
				case 'm':
					if j < len(t.s)-1 {
						return t.s[j+1:], args[i+1:]
					}
					if i+1 < len(args) && !args[i+1].dyn {
						return args[i+1].s, args[i+2:]
					}
					return "", nil
				}
			}
		}
	}
	return "", nil
}

// firstWord is the first argument if it is a literal word, else "".
func firstWord(args []token) string {
	if len(args) == 0 || args[0].dyn {
		return ""
	}
	return args[0].s
}

// cutWord splits args at the first literal word among seps.
func cutWord(args []token, seps ...string) (before, after []token, found bool) {
	for i, t := range args {
		if !t.dyn && slices.Contains(seps, t.s) {
			return args[:i], args[i+1:], true
		}
	}
	return args, nil, false
}
