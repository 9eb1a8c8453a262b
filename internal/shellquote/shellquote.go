// Package shellquote is the one way harness quotes a word for a POSIX
// shell: in single quotes, each single quote written as '\”. Every
// command line harness builds (a sandboxed command's script, a hook, a
// git call shown to the user, a fetch inside the walls) quotes through it,
// so there is one rule to get right. It imports nothing, so the code that
// runs inside the walls may use it.
package shellquote

import "strings"

// Quote returns s quoted for a POSIX shell: one word whatever it holds.
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
