package permission

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// exactCommands keep their exact words in an "always" pattern: their
// arguments are the whole point (what is removed, fetched, run).
var exactCommands = []string{"rm", "rmdir", "mv", "cp", "dd", "ln", "chmod", "chown", "chgrp", "truncate", "shred",
	"kill", "pkill", "killall", "sudo", "su", "doas", "curl", "wget", "ssh", "scp", "rsync", "nc",
	"sh", "bash", "zsh", "dash", "fish", "eval", "exec", "env", "xargs", "nohup", "timeout", "nice", "find",
	"python", "python3", "node", "ruby", "perl", "php", "deno", "bun", "lua"}

// moduleRunners run a module named by -m.
var moduleRunners = []string{"python", "python3"}

// moduleRe is a Python module name.
var moduleRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)
})

// wordRe is a word that names what a command does rather than what it
// works on: a subcommand ("test", "run-script"), never a path or a value
// with a dot or a slash in it.
var wordRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_-]*$`) })

// optionRe is an option ("-w", "--fix").
var optionRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^-{1,2}[A-Za-z][A-Za-z0-9-]*$`) })

// groupCommands take a second subcommand, which is part of what they do:
// "go mod tidy", "npm run build", "docker compose up".
var groupCommands = []string{"go mod", "go tool", "go work", "npm run", "pnpm run", "yarn run", "bun run",
	"docker compose", "docker image", "docker container", "docker volume", "docker network", "podman compose",
	"git remote", "git stash", "git worktree", "git submodule", "cargo make", "kubectl config", "gh pr", "gh issue"}

// runners run the program named next: the pattern is the runner and that
// program's own pattern ("npx prettier --write *", "bundle exec rspec *").
var runners = []string{"npx", "bunx", "pnpx", "uv run", "uvx", "poetry run", "pnpm exec", "pnpm dlx", "yarn dlx", "bundle exec", "pipx run"}

// narrowPattern is the pattern "always" offers for a command's words
// (already pattern-quoted): the narrowest one that still holds the next
// time. That is the command and its subcommand, then * for the arguments
// ("go test *", "git commit *", "npm install *"); a group's second
// subcommand is kept ("go mod tidy", "npm run build"); a command without
// a subcommand keeps its leading options ("gofmt -w *", "eslint --fix *").
// A command in exactCommands, or one with nothing left to generalise,
// keeps its exact words.
func narrowPattern(ws []string) string {
	// An interpreter running a module is that module's command:
	// "python3 -m unittest -v" is "python3 -m unittest *", which covers
	// its other flags (their risky options are checked on their own,
	// runners.go) and no other module.
	if len(ws) > 2 && slices.Contains(moduleRunners, ws[0]) && ws[1] == "-m" && moduleRe().MatchString(ws[2]) {
		return strings.Join(ws[:3], " ") + " *"
	}
	if len(ws) <= 1 || slices.Contains(exactCommands, ws[0]) {
		return strings.Join(ws, " ")
	}
	for _, r := range runners {
		rw := strings.Fields(r)
		if len(ws) > len(rw) && slices.Equal(ws[:len(rw)], rw) {
			return r + " " + narrowPattern(ws[len(rw):])
		}
	}
	keep := 1
	if wordRe().MatchString(ws[1]) {
		keep = 2
		if len(ws) > 2 && wordRe().MatchString(ws[2]) && slices.Contains(groupCommands, ws[0]+" "+ws[1]) {
			keep = 3
		}
	} else {
		for keep < len(ws) && keep < 3 && optionRe().MatchString(ws[keep]) {
			keep++
		}
	}
	if keep == len(ws) {
		return strings.Join(ws, " ")
	}
	return strings.Join(ws[:keep], " ") + " *"
}
