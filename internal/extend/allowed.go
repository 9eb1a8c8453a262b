package extend

import (
	"strings"
)

// noApproval are Claude Code tools whose harness counterparts never ask:
// allowing them changes nothing.
var noApproval = map[string]bool{
	"Task": true, "TodoWrite": true, "Skill": true, "WebSearch": true, "ExitPlanMode": true,
	"BashOutput": true, "KillShell": true, "KillBash": true, "SlashCommand": true,
}

// ClaudeRules turns Claude Code permission patterns (a command's
// allowed-tools) into harness's rules, rule-file lines without the
// verdict (package permission):
//
//	Bash                      bash *
//	Bash(git add:*)           bash git add *     (Claude Code's prefix form)
//	Bash(npm run test)        bash npm run test
//	Read, Grep, Glob, LS      read **            (the project)
//	Read(src/**)              read src/**
//	Edit, Write, MultiEdit    write **           (the project)
//	Edit(/docs/**)            write docs/**      (Claude Code: / is the project's root)
//	Edit(//tmp/x)             write /tmp/x       (// is the file system's)
//	WebFetch(domain:x.com)    net x.com
//	mcp__server[__tool]       mcp__server[__tool]
//
// Tools that never ask in harness (Task, TodoWrite…) need no rule; what
// has no counterpart (a bare WebFetch, an unknown tool) is returned in
// skipped, to be said.
func ClaudeRules(patterns []string) (rules, skipped []string) {
	for _, p := range patterns {
		p = strings.TrimSpace(p)
		name, arg, hasArg := strings.Cut(p, "(")
		if hasArg {
			if !strings.HasSuffix(arg, ")") {
				skipped = append(skipped, p)
				continue
			}
			arg = strings.TrimSpace(strings.TrimSuffix(arg, ")"))
		}
		name = strings.TrimSpace(name)
		switch {
		case p == "":
		case strings.HasPrefix(name, "mcp__") && !hasArg:
			rules = append(rules, name)
		case name == "Bash":
			if arg == "" || arg == "*" {
				rules = append(rules, "bash *")
				continue
			}
			if pre, ok := strings.CutSuffix(arg, ":*"); ok {
				arg = pre + " *"
			}
			rules = append(rules, "bash "+arg)
		case name == "Read" || name == "Grep" || name == "Glob" || name == "LS":
			rules = append(rules, "read "+claudePath(arg))
		case name == "Edit" || name == "Write" || name == "MultiEdit" || name == "NotebookEdit":
			rules = append(rules, "write "+claudePath(arg))
		case name == "WebFetch" && strings.HasPrefix(arg, "domain:"):
			rules = append(rules, "net "+strings.TrimPrefix(arg, "domain:"))
		case noApproval[name] && !hasArg:
		default:
			skipped = append(skipped, p)
		}
	}
	return rules, skipped
}

// claudePath reads a Claude Code path pattern as harness's: empty is the
// whole project, "//x" absolute, "/x" and "./x" under the project, "~/x"
// under home.
func claudePath(p string) string {
	switch {
	case p == "" || p == "*" || p == "**":
		return "**"
	case strings.HasPrefix(p, "//"):
		return p[1:]
	case strings.HasPrefix(p, "~/"):
		return p
	case strings.HasPrefix(p, "/"):
		return strings.TrimPrefix(p, "/")
	}
	return strings.TrimPrefix(p, "./")
}
