package permission

import (
	"regexp"
	"slices"
	"strings"
)

// exactCommands keep their exact words in an "always" pattern: their
// arguments are the whole point (what is removed, fetched, run).
var exactCommands = []string{"rm", "rmdir", "mv", "cp", "dd", "ln", "chmod", "chown", "chgrp", "truncate", "shred",
	"kill", "pkill", "killall", "sudo", "su", "doas", "curl", "wget", "ssh", "scp", "rsync", "nc",
	"sh", "bash", "zsh", "dash", "fish", "eval", "exec", "env", "xargs", "nohup", "timeout", "nice", "find",
	"python", "python3", "node", "ruby", "perl", "php", "deno", "bun", "lua"}

// subcommandRe is a word that names what a command does rather than what it
// works on: a subcommand ("test", "run-script") or an option ("-w",
// "--fix"), never a path or a value.
var subcommandRe = regexp.MustCompile(`^(-{1,2}[A-Za-z][A-Za-z0-9-]*|[a-z][a-z0-9_-]*)$`)

// narrowPattern is the pattern "always" offers for a command's words
// (already pattern-quoted): the command with its subcommand and options
// up to two words, then * for the arguments, so the grant holds the next
// time ("go test *", "gofmt -w *", "npm run build"); a command in
// exactCommands, or one whose every word is a subcommand, keeps its exact
// words.
func narrowPattern(ws []string) string {
	if len(ws) <= 1 || slices.Contains(exactCommands, ws[0]) {
		return strings.Join(ws, " ")
	}
	keep := 1
	for keep < len(ws) && keep < 3 && subcommandRe.MatchString(ws[keep]) {
		keep++
	}
	if keep == len(ws) {
		return strings.Join(ws, " ")
	}
	return strings.Join(ws[:keep], " ") + " *"
}
