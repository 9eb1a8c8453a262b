//go:build !race

package inner

import "os"

// exitStage ends a sandbox stage with code (see exit_race.go).
func exitStage(code int) { os.Exit(code) }
