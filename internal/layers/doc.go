// Package layers holds no code: its test checks the import rules that
// ARCHITECTURE.md states, on the source as it is, so a new import that
// breaks one fails the suite instead of drifting the map. The sandbox's
// own rules (no mechanism imports the orchestration) are checked by
// sandbox/rooms_test.go.
package layers
