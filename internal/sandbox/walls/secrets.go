package walls

import (
	"fmt"
	"io/fs"
	"path/filepath"
)

// storePaths are secret stores beyond secretPaths, relative to the home
// directory: macOS's (keychains, browser profiles and cookies), shell and
// REPL histories (commands typed with tokens in them), and other agents'
// credentials. Hidden on every system: a path that does not exist costs
// nothing.
var storePaths = []string{
	// macOS: keychains, cookies, mail and messages, browser profiles
	// (saved passwords, session cookies).
	"Library/Keychains", "Library/Cookies", "Library/HTTPStorages", "Library/Mail", "Library/Messages",
	"Library/Safari", "Library/Containers/com.apple.Safari",
	"Library/Application Support/Google/Chrome", "Library/Application Support/Chromium",
	"Library/Application Support/BraveSoftware", "Library/Application Support/Microsoft Edge",
	"Library/Application Support/Arc", "Library/Application Support/Firefox",
	"Library/Application Support/Vivaldi", "Library/Application Support/com.operasoftware.Opera",
	"Library/Application Support/Claude", // the desktop app's MCP server environment
	// Linux browser profiles.
	".config/google-chrome", ".config/chromium", ".config/BraveSoftware", ".mozilla",
	// Histories.
	".bash_history", ".zsh_history", ".zsh_sessions", ".sh_history", ".history",
	".local/share/fish/fish_history", ".python_history", ".node_repl_history",
	".psql_history", ".mysql_history", ".sqlite_history", ".rediscli_history", ".irb_history", ".lesshst",
	// Other agents and tools.
	".claude/.credentials.json", ".claude.json", ".codex/auth.json", ".config/github-copilot",
	".gemini/oauth_creds.json", ".config/git/credentials", ".cache/huggingface/token", ".huggingface/token",
}

// maxLinkScan bounds the walk of one hidden directory for symlinks.
const maxLinkScan = 2000

// hideLinkTargets adds to DenyRead what the symlinks inside hidden
// directories point to: Seatbelt judges the resolved path, so a link in
// ~/.ssh to ~/dotfiles/ssh/id_ed25519 would otherwise read the key (bwrap
// and the host-side checks see the link's own path too). A target inside a
// writable root is said in Notes instead: the project holds it anyway.
func (p *Policy) hideLinkTargets() {
	for _, d := range append([]string(nil), p.denyRead...) {
		n := 0
		_ = filepath.WalkDir(d, func(path string, e fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if n++; n > maxLinkScan {
				p.notes = append(p.notes, fmt.Sprintf("stopped looking for symlinks in %s after %d entries; links deeper in may lead outside what is hidden", d, maxLinkScan))
				return fs.SkipAll
			}
			if e.Type()&fs.ModeSymlink == 0 {
				return nil
			}
			t, err := filepath.EvalSymlinks(path)
			if err != nil {
				return nil
			}
			for _, h := range p.denyRead {
				if Within(t, h) {
					return nil
				}
			}
			for _, w := range p.writable {
				if Within(t, w) || Within(w, t) {
					p.notes = append(p.notes, fmt.Sprintf("%s links to %s, inside the writable root %s: it stays readable there", path, t, w))
					return nil
				}
			}
			p.denyRead = AppendUnique(p.denyRead, t)
			return nil
		})
	}
}
