package walls

import (
	"os"
	"path/filepath"
	"strings"
)

// The git directories whose data commands may write (see gitwrite.go for
// how their shadows are kept).

// GitDir is one git directory whose data commands may write.
type GitDir struct {
	Dir   string   // host path, canonical
	Dirs  []string // ref subdirectories (refs, logs): the shadow's own copies, synced and checked
	Files []string // files copied in and, checked, back out
	// Refs marks the directory holding the branch heads (the common
	// directory of a worktree), whose moves are reported.
	Refs bool
	// Objects marks the directory holding the object store, which
	// commands may only add to.
	Objects bool
}

// Data files of a git directory. perWorktree belong to one working tree;
// shared to the repository (a worktree's common directory).
var (
	gitPerWorktreeFiles = []string{"HEAD", "index", "ORIG_HEAD", "FETCH_HEAD", "COMMIT_EDITMSG",
		"MERGE_HEAD", "MERGE_MSG", "MERGE_MODE", "SQUASH_MSG", "AUTO_MERGE", "CHERRY_PICK_HEAD",
		"REVERT_HEAD", "REBASE_HEAD"}
	gitSharedFiles = []string{"packed-refs"}
)

// gitWrites computes the git directories of the project's own repository
// that commands may write: <project>/.git when it is a directory; for a
// worktree (.git a pointer file), its gitdir and the common directory. A
// repository whose layout harness does not recognise stays read-only.
func (p *Policy) gitWrites() []GitDir {
	dotgit := filepath.Join(p.project, ".git")
	st, err := os.Lstat(dotgit)
	if err != nil {
		return nil
	}
	if st.IsDir() {
		if !isGitDir(dotgit) {
			return nil
		}
		return []GitDir{{Dir: dotgit, Dirs: []string{"refs", "logs"},
			Files: append(append([]string(nil), gitPerWorktreeFiles...), gitSharedFiles...), Refs: true, Objects: true}}
	}
	if !st.Mode().IsRegular() {
		return nil
	}
	b, err := os.ReadFile(dotgit)
	if err != nil {
		return nil
	}
	line, _, _ := strings.Cut(string(b), "\n")
	target, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return nil
	}
	target = strings.TrimSpace(target)
	if !filepath.IsAbs(target) {
		target = filepath.Join(p.project, target)
	}
	gitdir, err := canonical(target)
	if err != nil {
		return nil
	}
	cb, err := os.ReadFile(filepath.Join(gitdir, "commondir"))
	if err != nil {
		return nil // a gitdir of its own (a submodule's): not handled, stays read-only
	}
	common := strings.TrimSpace(string(cb))
	if !filepath.IsAbs(common) {
		common = filepath.Join(gitdir, common)
	}
	common, err = canonical(common)
	if err != nil || !isGitDir(common) || !Within(gitdir, common) {
		return nil
	}
	return []GitDir{
		{Dir: common, Dirs: []string{"refs", "logs"}, Files: gitSharedFiles, Refs: true, Objects: true},
		{Dir: gitdir, Dirs: []string{"logs", "refs"}, Files: gitPerWorktreeFiles},
	}
}

// isGitWrite reports whether dir is one of the policy's shadowed git
// directories (mounted as a shadow rather than read-only).
func (p *Policy) isGitWrite(dir string) bool {
	for _, g := range p.gitWrite {
		if g.Dir == dir {
			return true
		}
	}
	return false
}

// RoBinds are the carve-outs mounted read-only: ReadOnly without the git
// directories that are shadowed instead.
func (p *Policy) RoBinds() []string {
	var out []string
	for _, r := range p.readOnly {
		if !p.isGitWrite(r) {
			out = append(out, r)
		}
	}
	return out
}

// gitPushRefusal makes git inside refuse every push with a message: an
// empty pushInsteadOf prefix matches every remote URL. (The permission
// gate denies git push too, and there is no network to push over.)
var gitPushRefusal = []string{
	"GIT_CONFIG_COUNT=1",
	"GIT_CONFIG_KEY_0=url./harness refuses git push inside the sandbox: push from your own terminal/.pushInsteadOf",
	"GIT_CONFIG_VALUE_0=",
}
