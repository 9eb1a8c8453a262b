package permission

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// runnerGate allows, besides the defaults, the runners and build tools
// the defaults leave to the user: their rules must not cover the options
// that run programs or write either.
func runnerGate(t *testing.T) *Gate {
	return testGate(t, func(o *Options) {
		o.Allow = []string{"bash go build *", "bash go run *", "bash go install *", "bash mvn *", "bash ./mvnw *",
			"bash gradle *", "bash ./gradlew *", "bash dotnet test *", "bash dotnet build *", "bash rspec *",
			"bash bundle exec rspec *", "bash npm run *", "bash pnpm run *", "bash yarn run *",
			"bash cargo build *", "bash cargo run *", "bash make *", "bash uv run pytest *"}
	})
}

// Per tool: the forms that run a program of the model's choosing, load
// code or config from outside the project, or write ask (a write is
// decided like write_file: with no write rule, it asks); the plain forms
// stay allowed. Every "ask" here was allowed before the tables existed.
func TestRunnerOptions(t *testing.T) {
	g := runnerGate(t)
	tests := []struct {
		tool     string
		ask      []string // each must ask; a "|"-suffix is a substring of the deciding rule
		harmless []string
	}{
		{"env -S", []string{
			"env -S'touch x' ls|default: ask", "env -S 'touch x' ls|default: ask", "env --split-string='touch x' ls|default: ask",
			"env --split-string 'touch x' ls|default: ask", "env --split='touch x' ls|default: ask", "env -iS'touch x' ls|default: ask",
			"env -S'FOO=1 touch x' ls|default: ask", `env -S'sh -c "touch x"' ls|default: ask`,
			"env -S'-i touch x'|default: ask", "env -S'${X}' ls|computed at run time", "env -S\"$X\" ls|computed at run time",
			"env -S'go test -toolexec=t ./...'|go test -toolexec runs a program", `env -S'echo\_hi' ls|unusual characters`,
		}, []string{"env -S'ls -la'", "env -S'go test ./...'", "env -S'ls # touch x'", "env FOO=1 ls", "env -u HOME ls", "env -S'ls\\c touch x'"}},
		{"go test", []string{
			"go test -toolexec 'touch x' ./...|go test -toolexec runs a program", "go test -toolexec='touch x' ./...|-toolexec",
			"go test --toolexec=x ./...|-toolexec", "go test -exec 'touch x' ./...|go test -exec runs a program",
			"go test ./... -exec=x|-exec", "go test -coverprofile=x ./...|no write rule covers x",
			"go test -coverprofile x ./...|no write rule covers x", "go test -cpuprofile=cpu.out|no write rule covers cpu.out",
			"go test -memprofile m.out|no write rule", "go test -blockprofile b|no write rule", "go test -mutexprofile m|no write rule",
			"go test -trace t.out|no write rule", "go test -outputdir sub|no write rule", "go test -test.coverprofile=x|no write rule",
			"go test ./... -args -test.cpuprofile=c|no write rule", "go test -o bin/t.test ./x|no write rule",
			"go test -overlay=/tmp/o.json ./...|replaces source files", "go test -modfile=/tmp/go.mod ./...|go.mod outside",
			"go test -C /tmp/x ./...|outside the project", "go test -ldflags=-extld=/tmp/x ./...|passes flags to the linker",
			"go test -ldflags '-linkmode external -extld x' ./...|linker", "go test -gcflags=-cpuprofile=x ./...|compiler",
			"go test -pkgdir=pkg ./...|no write rule", "go test -toolexec=$T ./...|runs a program", "go test $OPT ./...|computed at run time",
			"cd /tmp/x && go test ./...|private /tmp", "cd $D && go test ./...|computed at run time",
			"GOFLAGS=-toolexec=x go test ./...|sets GOFLAGS", "CC=/tmp/cc go test ./...|sets CC",
			"env GOFLAGS=-exec=x go test ./...|sets GOFLAGS", "export GOFLAGS=-toolexec=x; go test ./...|sets GOFLAGS",
		}, []string{"go test ./...", "go test -run TestX -v -count=1 ./pkg", "go test -race ./...", "go test -cover ./...",
			"go test -coverprofile=/tmp/c.out ./...", "go test -ldflags='-s -w -X main.v=1' ./...", "go test -gcflags='all=-N -l' ./...",
			"go test -json -timeout 30s ./...", "go test -bench . -benchmem ./...", "go test -C sub ./...", "go test -vet=off ./...",
			"go test -tags integration ./...", "go test ./... -args -test.v", "CGO_ENABLED=0 go test ./..."}},
		{"go build/run/vet", []string{
			"go build -toolexec x ./...|go build -toolexec runs a program", "go build -o x ./cmd|no write rule covers x",
			"go run -exec x .|go run -exec runs a program", "go install -toolexec=x ./...|runs a program",
			"go vet -vettool=./x.sh ./...|go vet -vettool runs a program", "go vet -toolexec=./x ./...|go vet -toolexec runs a program",
			"go vet -overlay /tmp/o.json ./...|replaces source files",
		}, []string{"go build ./...", "go build -o /tmp/bin ./cmd", "go run . -o out.txt", "go vet ./...", "go build -v -race ./..."}},
		{"make", []string{
			"make test --eval='$(shell touch x)'|make --eval runs a program", "make test -E 'x:=$(shell touch x)'|make -E runs a program",
			"make test --ev='$(shell touch x)'|make --ev runs a program", "make -f /tmp/M test|runs a makefile outside the project",
			"make --file=/tmp/M test|outside the project", "make -C /tmp/x test|outside the project", "make test -I /tmp|outside the project",
			"make test SHELL=/tmp/sh|changes the shell", "make test .SHELLFLAGS='-c touch x'|changes the shell",
			"make test MAKEFLAGS=--eval=x|changes the shell", "make test 'X=$(shell touch x)'|text its recipes may run",
			"make test CC='sh -c x'|text its recipes may run", "make test 'X!=touch x'|runs a shell command",
			"make test -t|touches the targets", "make test $V|computed at run time", "MAKEFLAGS=-Ex make test|sets MAKEFLAGS",
		}, []string{"make test", "make test V=1", "make -j4 test", "make -j 4 test", "make test -k", "make -C sub test",
			"make check TESTS=foo_test", "make -s test", "make test CFLAGS=-O2"}},
		{"pytest", []string{
			"pytest -p evil|pytest -p runs a program", "pytest -pevil|-p runs a program", "python3 -m pytest -p evil|-p runs a program",
			"pytest --basetemp=src|no write rule covers src", "pytest --basetemp src tests|no write rule", "pytest -c /tmp/p.ini|config outside",
			"pytest --config-file=/tmp/p.ini|config outside", "pytest --rootdir=/tmp/r|outside the project",
			"pytest --confcutdir=/tmp|conftest.py files from outside", "pytest --conf=/tmp|outside",
			"pytest -o addopts='-p evil'|overrides a config setting", "pytest -o pythonpath=/tmp|overrides a config setting",
			"pytest --junitxml=report.xml|no write rule", "pytest --log-file=l.txt|no write rule", "pytest --pdbcls=x:Y|runs a program",
			"pytest --cov-report=html:src|writes a coverage report", "PYTEST_ADDOPTS='-p evil' pytest|sets PYTEST_ADDOPTS",
			"PYTEST_PLUGINS=evil pytest|sets PYTEST_PLUGINS", "PYTHONPATH=/tmp pytest|outside the project",
			"cd /tmp && pytest|private /tmp", "python3 -mpytest -p evil|-p runs a program", "python3 -B -m pytest -p x|-p runs a program",
		}, []string{"pytest", "pytest -x -q tests/", "pytest -p no:cacheprovider", "pytest -k 'a and not b' -vv",
			"python -m pytest -o log_cli=true", "python3 -m pytest --basetemp=/tmp/pt", "pytest --junitxml=/tmp/r.xml",
			"PYTHONPATH=. pytest", "PYTHONPATH=sub:. python3 -m pytest", "pytest --cov=src --cov-report=term-missing",
			"pytest -c sub/pytest.ini", "pytest --lf -n 2", "uv run pytest -x", "pytest --co -q", "pytest --co tests",
			"pytest --pdb -x", "pytest --cache-clear --ff"}},
		{"unittest", []string{
			"python3 -m unittest discover -s /tmp/t|runs tests from outside", "python -m unittest discover -t /tmp|outside the project",
		}, []string{"python3 -m unittest", "python3 -m unittest -v", "python -m unittest discover -s sub -p 'test_*.py'",
			"python3 -m unittest tests.test_x", "python3 -m unittest -k add -f"}},
		{"npm/pnpm/yarn", []string{
			"npm test --node-options=--import=data:text/javascript,x|npm --node-options runs a program",
			"npm test --node-options '--require /tmp/x.js'|--node-options runs a program",
			"npm test --script-shell=/tmp/sh|npm --script-shell runs a program", "npm test --script-sh=/tmp/sh|runs a program",
			"npm run test --script-shell /tmp/sh|runs a program", "npm test --prefix /tmp/p|outside the project",
			"npm test -C /tmp/p|outside the project", "npm test --userconfig=/tmp/rc|config outside",
			"yarn test --cwd /tmp/p|outside the project", "yarn test --use-yarnrc /tmp/rc|config outside",
			"pnpm test --config.script-shell=/tmp/sh|sets a config key", "pnpm test --dir /tmp/p|outside the project",
			"npm test --cache=cache|no write rule", "NODE_OPTIONS=--require=/tmp/x npm test|sets NODE_OPTIONS",
			"npm_config_script_shell=/tmp/sh npm test|sets npm_config_script_shell",
		}, []string{"npm test", "npm test -- --watch=false", "npm run test --silent", "yarn test", "pnpm test --filter pkg",
			"npm test --prefix sub", "npm test -w pkg", "npm test -- --node-options=x"}},
		{"cargo", []string{
			"cargo test --config 'target.x86_64-unknown-linux-gnu.runner=\"touch x\"'|sets cargo config",
			"cargo test --config=build.rustc-wrapper=x|sets cargo config", "cargo test --config /tmp/c.toml|cargo config inline or from outside the project",
			"cargo test -Z unstable-options|unstable cargo features", "cargo test -Zbuild-std|unstable",
			"cargo test --target-dir tgt|no write rule covers tgt", "cargo build --artifact-dir out|no write rule",
			"cargo test --manifest-path /tmp/p/Cargo.toml|outside the project", "cargo test -- --logfile log.txt|no write rule",
			"RUSTC_WRAPPER=/tmp/w cargo test|sets RUSTC_WRAPPER", "RUSTFLAGS='-C linker=/tmp/l' cargo test|sets RUSTFLAGS",
			"CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER=x cargo test|sets CARGO_TARGET",
		}, []string{"cargo test", "cargo test --release -- --nocapture", "cargo test -p foo --features x",
			"cargo test --target-dir /tmp/t", "cargo build --release", "cargo test --config sub/c.toml", "CARGO_TERM_COLOR=always cargo test"}},
		{"mvn/gradle", []string{
			"mvn test -s /tmp/settings.xml|settings outside", "mvn test --settings=/tmp/s.xml|settings outside",
			"mvn test -gs /tmp/s.xml|settings outside", "mvn test -t /tmp/tc.xml|toolchains", "mvn -f /tmp/pom.xml test|POM outside",
			"mvn test -l build.log|no write rule", "mvn test -Dexec.executable=/tmp/x|system property",
			"mvn test -D maven.repo.local=/tmp/r|system property", "./mvnw test -Dmaven.repo.local=/tmp/r|system property",
			"MAVEN_OPTS=-javaagent:/tmp/a.jar mvn test|sets MAVEN_OPTS", "JAVA_TOOL_OPTIONS=-javaagent:x mvn test|sets JAVA_TOOL_OPTIONS",
			"gradle test --init-script /tmp/i.gradle|init script", "./gradlew test -I /tmp/i.gradle|init script",
			"./gradlew test -g /tmp/gh|Gradle home", "./gradlew test -Dorg.gradle.java.home=/tmp/jdk|system property",
			"./gradlew test -p /tmp/p|outside this one", "./gradlew test --project-cache-dir=cache|no write rule",
			"gradle test --include-build /tmp/b|outside the project", "GRADLE_OPTS=-Dx=y ./gradlew test|sets GRADLE_OPTS",
		}, []string{"mvn test", "mvn -q test -Dtest=FooTest", "mvn test -DskipTests -pl core -am", "./mvnw -B verify",
			"gradle test", "./gradlew test --tests 'com.x.*' -Ptag=fast", "./gradlew test --offline", "./gradlew test -Dtest=Foo"}},
		{"dotnet test", []string{
			"dotnet test -s /tmp/x.runsettings|run settings outside", "dotnet test --settings /tmp/x.runsettings|run settings",
			"dotnet test --test-adapter-path /tmp/a|adapters", "dotnet test -o out|no write rule covers out",
			"dotnet test --results-directory res|no write rule", "dotnet test --diag d.txt|no write rule",
			"dotnet test -e LD_PRELOAD=/tmp/x.so|environment variable", "dotnet test -e CORECLR_PROFILER_PATH=/tmp/p.so|environment variable",
			"dotnet test -p:VSTestConsolePath=/tmp/x|MSBuild property", "dotnet test /p:X=1|MSBuild property",
			"dotnet test -bl:/tmp/x.binlog|MSBuild", "dotnet test -logger:/tmp/L.dll|MSBuild", "dotnet test @/tmp/args.rsp|file outside",
			"dotnet test --logger 'trx;LogFileName=x.trx'|writes a log file", "dotnet test -- RunConfiguration.TestAdaptersPaths=/tmp|run settings",
			"DOTNET_STARTUP_HOOKS=/tmp/h.dll dotnet test|sets DOTNET_STARTUP_HOOKS",
		}, []string{"dotnet test", "dotnet test --filter Category=Unit -c Release", "dotnet test --no-build -v q",
			"dotnet test --logger trx", "dotnet test -e FOO=bar", "dotnet test --collect 'XPlat Code Coverage'"}},
		{"rspec", []string{
			"rspec -r /tmp/x.rb|Ruby code from outside", "rspec --require=/tmp/x|Ruby code from outside",
			"bundle exec rspec -r /tmp/x.rb|Ruby code from outside", "rspec -I /tmp|Ruby code from outside",
			"rspec -O /tmp/opts|options from a file", "rspec --options /tmp/o|options from a file",
			"rspec -o out.txt|no write rule covers out.txt", "rspec --out=out.txt|no write rule", "rspec --init|writes .rspec",
			"rspec --drb|DRb", "RUBYOPT=-r/tmp/x bundle exec rspec|sets RUBYOPT", "SPEC_OPTS='-r /tmp/x' rspec|sets SPEC_OPTS",
			"BUNDLE_GEMFILE=/tmp/Gemfile bundle exec rspec|sets BUNDLE_GEMFILE", "RUBYLIB=/tmp rspec|outside the project",
		}, []string{"rspec", "bundle exec rspec spec/a_spec.rb", "rspec -r spec_helper --format documentation", "rspec -e 'adds' --seed 1",
			"rspec -o /tmp/out.txt", "bundle exec rspec --tag ~slow"}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			for _, c := range tt.ask {
				cmd, rule, _ := strings.Cut(c, "|")
				d := g.Decide(Request{Tool: "bash", Command: cmd})
				if d.Verdict != Ask || !slices.ContainsFunc(d.Parts, func(p Part) bool { return p.Verdict == Ask && strings.Contains(p.Rule, rule) }) {
					t.Errorf("%q = %s %q %v, want ask with a part %q", cmd, d.Verdict, d.Rule, d.Parts, rule)
				}
			}
			for _, cmd := range tt.harmless {
				if d := g.Decide(Request{Tool: "bash", Command: cmd}); d.Verdict != Allow {
					t.Errorf("%q = %s %q %v, want allow", cmd, d.Verdict, d.Rule, d.Parts)
				}
			}
		})
	}
}

// The test runners docs/permissions.md names run without asking in their plain
// forms.
func TestDefaultTestRunners(t *testing.T) {
	g := testGate(t, nil)
	for _, cmd := range []string{"go test ./...", "go vet ./...", "pytest", "pytest -q tests", "python -m pytest",
		"python3 -m pytest -x", "python3 -m unittest", "python -m unittest", "python3 -m unittest -v",
		"python3 -m unittest discover", "npm test", "npm run test", "yarn test", "pnpm test", "cargo test", "make test", "make check"} {
		if d := g.Decide(Request{Tool: "bash", Command: cmd}); d.Verdict != Allow {
			t.Errorf("%q = %s %q, want allow", cmd, d.Verdict, d.Rule)
		}
	}
	// Not other modules, nor an interpreter running code.
	for _, cmd := range []string{"python3 -m pip install x", "python3 -m http.server", "python3 x.py", "python3 -c 'import os'"} {
		if d := g.Decide(Request{Tool: "bash", Command: cmd}); d.Verdict == Allow {
			t.Errorf("%q = allow %q, want it to ask", cmd, d.Rule)
		}
	}
}

// "Always" for a module run saves a rule that covers its usual flag
// variants and no other module.
func TestAlwaysCoversFlagVariants(t *testing.T) {
	fp := &fakePrompter{answers: []Answer{{Choice: Always}}}
	dir := t.TempDir()
	g := mustNew(t, Options{Policy: testPolicy(t, dir, home), ProjectFile: dir + "/.agents/permissions", Prompter: fp})
	if ok, msg := g.Check(context.Background(), Request{Tool: "bash", Command: "python3 -m mypy src"}); !ok {
		t.Fatalf("refused: %s", msg)
	}
	if fp.patterns[0] != "python3 -m mypy *" {
		t.Errorf("always pattern = %q, want %q", fp.patterns[0], "python3 -m mypy *")
	}
	for cmd, want := range map[string]Verdict{
		"python3 -m mypy": Allow, "python3 -m mypy -v src": Allow, "python3 -m mypy --strict .": Allow,
		"python3 -m pip install x": Ask, "python3 x.py": Ask, "python -m mypy src": Ask,
	} {
		if d := g.Decide(Request{Tool: "bash", Command: cmd}); d.Verdict != want {
			t.Errorf("after always: %q = %s %q, want %s", cmd, d.Verdict, d.Rule, want)
		}
	}
}

// A headless refusal records what the model was told and the rules that
// would have admitted it, for harness run's permission_denials.
func TestHeadlessRecord(t *testing.T) {
	var recs []Record
	g := testGate(t, func(o *Options) { o.Record = func(r Record) { recs = append(recs, r) } })
	_, msg := g.Check(context.Background(), Request{Tool: "bash", Command: "touch a && echo x > main.go"})
	_, _ = g.Check(context.Background(), Request{Tool: "bash", Command: "$X"})
	_, deny := g.Check(context.Background(), Request{Tool: "bash", Command: "curl x"})
	if len(recs) != 3 {
		t.Fatalf("records = %+v", recs)
	}
	if r := recs[0]; r.Answer != AnswerHeadless || r.Message != msg || !slices.Equal(r.Admit, []string{"bash touch a", "write main.go"}) {
		t.Errorf("record = %+v, want the message %q and the admitting rules", r, msg)
	}
	if r := recs[1]; r.Answer != AnswerHeadless || len(r.Admit) != 0 {
		t.Errorf("computed command: record = %+v, want no admitting rule", r)
	}
	if r := recs[2]; r.Answer != "deny" || r.Message != deny || len(r.Admit) != 0 {
		t.Errorf("denied: record = %+v", r)
	}
}

func TestEnvSplit(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"touch x", []string{"touch", "x"}},
		{"  a   'b c'  \"d\\\"e\" ", []string{"a", "b c", `d"e`}},
		{`a\_b c`, []string{"a b", "c"}},
		{"a #b c", []string{"a"}},
		{"a#b", []string{"a#b"}},
		{`a\c b`, []string{"a"}},
	}
	for _, tt := range tests {
		got, ok := envSplit(tt.in)
		var ss []string
		for _, w := range got {
			ss = append(ss, w.s)
		}
		if !ok || !slices.Equal(ss, tt.want) {
			t.Errorf("envSplit(%q) = %q %v, want %q", tt.in, ss, ok, tt.want)
		}
	}
	if w, ok := envSplit("a ${X}"); !ok || len(w) != 2 || !w[1].dyn {
		t.Errorf("envSplit(${X}) = %+v %v, want a computed word", w, ok)
	}
	if _, ok := envSplit("'a"); ok {
		t.Error("an open quote split")
	}
}
