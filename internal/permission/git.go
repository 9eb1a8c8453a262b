package permission

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Git is read-only only with a repository whose config the agent cannot
// have written: git status, diff and log run programs the config names
// (core.fsmonitor, diff.external, core.pager, filters, textconv). The
// project's own .git, and any other repository found when the session
// started, has its config mounted read-only (Policy.ReadOnly, less
// the Findings of repositories that appeared later); a repository out of
// every writable root is out of the agent's reach too. Anything
// else — a repository the agent made, one in the private /tmp, one named
// by -C, --git-dir, --work-tree or GIT_DIR — asks.

// specGit is the grammar of the options of git's read-only subcommands
// that write a file or run a program. git's parse-options accepts unique
// prefixes of long options, so --out and --ext count.
var specGit = &spec{abbrev: true, opts: []opt{
	{long: "output", arg: needArg, role: rWrite},
	{long: "ext-diff", role: rAsk, why: "runs the external diff program the config names"},
	{long: "textconv", role: rAsk, why: "runs the text conversion programs the config names"},
	{short: 'O', long: "open-files-in-pager", arg: optArg, role: rRun},
	{long: "text"}, {long: "no-ext-diff"}, {long: "no-textconv"}, {long: "no-output"},
}}

// gitSafeConfig are -c keys that name no program (lower case; a trailing
// dot is a section prefix).
var gitSafeConfig = []string{
	"color.", "column.", "advice.", "i18n.", "core.quotepath", "core.abbrev", "core.safecrlf",
	"diff.noprefix", "diff.mnemonicprefix", "diff.renames", "diff.relative", "diff.context",
	"diff.interhunkcontext", "diff.algorithm", "diff.indentheuristic", "diff.statgraphwidth",
	"log.date", "log.decorate", "log.abbrevcommit", "log.follow", "log.showroot",
	"status.short", "status.branch", "status.showuntrackedfiles", "user.name", "user.email",
	"init.defaultbranch", "safe.directory", "format.pretty",
}

func gitConfigSafe(kv string) bool {
	key, val, _ := strings.Cut(kv, "=")
	key = strings.ToLower(key)
	if strings.HasPrefix(key, "pager.") {
		switch strings.ToLower(val) {
		case "false", "no", "off", "0", "true", "yes", "on", "1":
			return true // on/off only; a value here would be a program
		}
		return false
	}
	for _, s := range gitSafeConfig {
		if key == s || (strings.HasSuffix(s, ".") && strings.HasPrefix(key, s)) {
			return true
		}
	}
	return false
}

// git: global options before the subcommand are removed so that
// "git -C dir push" meets the rules for "git push"; options that make git
// run programs ask, and so does a repository the agent may have written.
func (sc *shellCheck) git(toks []token) {
	args := toks[1:]
	dir, known := sc.cwd, sc.cwd != ""
	gitDir := ""
	for len(args) > 0 {
		t := args[0]
		if t.dyn {
			if strings.HasPrefix(t.s, "-") || t.s == "" {
				sc.ask("ask: git has a global option computed at run time")
			}
			break
		}
		if !strings.HasPrefix(t.s, "-") {
			break
		}
		val := func() (token, bool) {
			if len(args) > 1 {
				args = args[1:]
				return args[0], true
			}
			return token{}, false
		}
		name, v, eq := strings.Cut(t.s, "=")
		switch {
		case t.s == "-C":
			if d, ok := val(); ok {
				if d.dyn || !known {
					known = false
				} else {
					dir = sc.g.abs(d.s, dir)
				}
			}
		case name == "--git-dir":
			d, ok := token{s: v}, eq
			if !eq {
				d, ok = val()
			}
			if ok {
				if d.dyn || !known && !filepath.IsAbs(d.s) {
					known = false
				} else {
					gitDir = sc.g.abs(d.s, dir)
				}
			}
		case name == "--work-tree":
			sc.ask("ask: git --work-tree points git at another tree, whose attributes and repository config can run programs")
			if !eq {
				val()
			}
		case name == "--namespace" || name == "--super-prefix":
			if !eq {
				val()
			}
		case t.s == "-c":
			if kv, ok := val(); ok {
				sc.gitConfig(kv)
			}
		case strings.HasPrefix(t.s, "-c"):
			sc.gitConfig(token{s: t.s[2:]})
		case name == "--config-env" || name == "--exec-path" || name == "--list-cmds":
			sc.ask("ask: git " + name + " can make git run other programs")
			if name == "--config-env" && !eq {
				val()
			}
		case slices.Contains([]string{"--no-pager", "-p", "--paginate", "-P", "--bare",
			"--no-replace-objects", "--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs",
			"--icase-pathspecs", "--no-optional-locks", "--no-advice"}, t.s):
		default:
			sc.match(toks, "git", true) // unknown global option: rules on the full command
			return
		}
		args = args[1:]
	}
	if !known {
		sc.ask("ask: git runs in a directory computed at run time, maybe a repository whose config runs programs")
	} else if repo, ok := sc.gitRepoSafe(dir, gitDir); !ok {
		sc.ask("ask: git uses the repository " + repo + ", which is not protected since the session started; its config can run programs")
	}
	if len(args) > 0 && !args[0].dyn {
		sub := args[0].s
		sc.applySpec("git "+sub, specGit, args[1:])
		if sub == "branch" {
			sc.gitBranch(args[1:])
		}
	}
	sc.match(append([]token{toks[0]}, args...), "git", true)
}

func (sc *shellCheck) gitConfig(kv token) {
	if kv.dyn || !gitConfigSafe(kv.s) {
		sc.ask("ask: git -c " + render([]token{kv}) + " may name a program for git to run")
	}
}

// gitBranch: listing is read-only; a name without --list, and the options
// that create, rename, delete or retarget, change branches.
func (sc *shellCheck) gitBranch(args []token) {
	list := false
	takesCommit := false
	for _, t := range args {
		if t.dyn {
			sc.ask("ask: git branch with an argument computed at run time")
			return
		}
		name, _, _ := strings.Cut(t.s, "=")
		switch {
		case t.s == "--list" || t.s == "-l":
			list = true
		case slices.Contains([]string{"--show-current", "-a", "--all", "-r", "--remotes", "-v", "-vv",
			"--verbose", "-i", "--ignore-case", "--no-color", "--no-column", "--no-abbrev", "-q", "--quiet",
			"--omit-empty"}, t.s),
			slices.Contains([]string{"--format", "--sort", "--color", "--column", "--abbrev"}, name):
		case slices.Contains([]string{"--contains", "--no-contains", "--merged", "--no-merged", "--points-at"}, name):
			takesCommit = !strings.Contains(t.s, "=")
			continue
		case !strings.HasPrefix(t.s, "-") && (list || takesCommit):
		default:
			sc.ask("ask: git branch " + t.s + " creates, renames, deletes or retargets branches")
			return
		}
		takesCommit = false
	}
}

// gitRepoSafe finds the repository git would use from dir (or gitDir) and
// reports whether its config is out of the agent's reach. It is memoised
// for one decision only: repositories appear between commands.
func (sc *shellCheck) gitRepoSafe(dir, gitDir string) (string, bool) {
	key := dir + "\x00" + gitDir
	if r, ok := sc.repos[key]; ok {
		return r.repo, r.safe
	}
	repo := gitDir
	if repo == "" {
		if free, _ := sc.g.privateTmp(dir); free {
			// The private /tmp has no host view to look in: the agent owns it.
			sc.repos[key] = repoResult{dir, false}
			return dir, false
		}
		repo = discoverGit(dir)
	}
	safe := repo == "" || sc.g.repoProtected(repo)
	sc.repos[key] = repoResult{repo, safe}
	return repo, safe
}

type repoResult struct {
	repo string
	safe bool
}

// discoverGit walks up from dir as git does: dir/.git (a directory or a
// gitdir pointer file), or dir itself being a repository (bare).
func discoverGit(dir string) string {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return filepath.Join(d, ".git")
		}
		if isGitDir(d) {
			return d
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}

func isGitDir(d string) bool {
	st, err := os.Stat(filepath.Join(d, "HEAD"))
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	for _, sub := range []string{"objects", "refs"} {
		if st, err := os.Stat(filepath.Join(d, sub)); err != nil || !st.IsDir() {
			return false
		}
	}
	return true
}

// repoProtected: mounted read-only since the session started, or outside
// every place a command can write. The sandbox also protects repositories
// that appear during the session (Live.Refresh), but their config was
// written before that, maybe by the agent: those are its Findings, and
// they do not count.
func (g *Gate) repoProtected(repo string) bool {
	c := canon(repo)
	pol := g.pol.Policy()
	if ro := pol.ReadOnly(); slices.Contains(ro, c) || slices.Contains(ro, repo) {
		for _, f := range pol.Findings() {
			if f.Path == c || f.Path == repo {
				return false
			}
		}
		return true
	}
	for _, w := range pol.Writable() {
		if within(c, w) || within(repo, w) {
			return false
		}
	}
	return !within(c, "/tmp") && !within(repo, "/tmp") && (pol.TempDir() == "" || !within(c, pol.TempDir()))
}
