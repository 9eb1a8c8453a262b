package cli

import "github.com/spf13/cobra"

// newPermissionsTopic is "harness help permissions": the rule files'
// format, which the project file written by "always" points to.
func newPermissionsTopic(stdio Stdio) *cobra.Command {
	topic := &cobra.Command{
		Use:   "permissions",
		Short: "How permission rules work and where they live",
		Long: `Every tool call is allowed, asked about, or denied. Shell commands are parsed (pipelines,
subshells, $(...), eval, sh -c, xargs, find -exec and wrappers such as env or timeout are looked
through) and the strictest part of a command decides: deny > ask > allow.

Rules live in two files with the same format:
  ~/.agents/permissions             yours, for every project
  <project>/.agents/permissions     the project's; it can tighten but never loosen what is denied,
                                    and the sandbox keeps it read-only for the agent

One rule a line; # starts a comment:
  # VERDICT  TOOL   PATTERN
  allow      bash   go test *
  ask        bash   git commit *
  deny       bash   docker *
  allow      write  src/**
  deny       read   ~/private/**

VERDICT is allow, ask or deny. TOOL is bash, read (any tool reading a file), write (any tool
writing one) or a tool name. A bash PATTERN is command words; * in a word matches any characters,
a word that is * alone matches any number of words ("go test *" matches "go test" and
"go test ./..."). A file PATTERN is a path relative to the project, ~/..., or absolute; ** matches
any number of directories. The most specific matching rule wins.

Built in: read-only commands (ls, cat, grep, rg, find, sed, sort, git status/diff/log/show/branch,
test runners...) are allowed; sudo, curl, wget, git push, git reset --hard, git clean -f, and rm -rf, chmod or chown
outside the project are denied; everything else asks. Reading secrets (~/.ssh, ~/.aws,
~/.agents/env, ...) and writing outside the project are refused whatever any rule says; only
--add-dir DIR widens where harness may write.

A write is a write whatever spells it: a redirection (echo x > main.go), tee, or an output option
(sort -o, tree -o, find -fprint, git diff --output, dd of=, sed -i...) is decided like write_file
on that path, so "allow write src/**" covers "echo x > src/x" and a write no rule covers asks;
/dev/null and the sandbox's private /tmp are free. Options that run programs (rg --pre, go vet
-vettool, sed's e command), text the shell evaluates as arithmetic or as a variable name
([[ 'a[$(cmd)]' -eq 0 ]], printf -v), and git in a repository the agent could have written (-C,
--git-dir, a repository made during the session) ask.

At a prompt, "always" records the narrowest pattern covering the command in the project file.
In "harness run" nothing asks: what would ask is refused and the model is told why; --allow
PATTERN and --deny PATTERN add rules for one run ("bash make *", or a bare command pattern), and
--yolo allows everything no rule denies. The sandbox stays on in every case.

"harness permissions check 'COMMAND'" shows how a command would be decided: the verdict, the rule
and each part of the command (each command it runs, each file it writes) that decided it.`,
	}
	topic.AddCommand(newPermissionsCheck(stdio))
	return topic
}
