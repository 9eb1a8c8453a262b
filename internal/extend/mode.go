package extend

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/harness-dev/harness/internal/sandbox/walls"
)

// Mode is the permission mode, by Claude Code's names.
type Mode string

// The modes, in the order Shift+Tab cycles them.
const (
	ModeDefault     Mode = "default"     // the rules decide
	ModeAcceptEdits Mode = "acceptEdits" // file edits in the project without asking; commands by the rules
	ModePlan        Mode = "plan"        // the project read-only in the kernel; the turn ends in a plan
)

// ParseMode reads --permission-mode.
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(strings.ReplaceAll(s, "-", "")) {
	case "", "default":
		return ModeDefault, nil
	case "acceptedits":
		return ModeAcceptEdits, nil
	case "plan":
		return ModePlan, nil
	}
	return "", fmt.Errorf("unknown permission mode %q: use default, acceptEdits or plan", s)
}

// Next is the mode Shift+Tab goes to.
func (m Mode) Next() Mode {
	switch m {
	case ModeDefault:
		return ModeAcceptEdits
	case ModeAcceptEdits:
		return ModePlan
	}
	return ModeDefault
}

// PlanNote tells the model it is planning; it goes with every prompt of a
// plan-mode turn.
const PlanNote = "[harness: plan mode] The user wants a plan, not changes. The project is read-only in this mode, " +
	"enforced by the sandbox: write_file and edit_file are refused, and every command runs with the project " +
	"mounted read-only (writes fail with \"Read-only file system\"; /tmp stays writable, so put build and test " +
	"output there). Read, search and run what writes nowhere to learn what you need, then end your turn with the " +
	"plan: the steps, the files each changes, and how to check the result. The user accepts it or asks for changes; " +
	"once accepted, the project becomes writable and you carry it out."

// acceptedNote carries an accepted plan into the next turn.
func acceptedNote(plan string) string {
	return "[harness: the user accepted your plan and left plan mode; the project is writable again. Carry out this plan:]\n" + plan
}

// Modes is a session's permission mode and the plan it carries.
//
// A mode is a state of the whole session: a switch that narrows the walls
// (into plan mode) or widens them (out of it) is passed at once to every
// Follower, the things already running that hold walls of their own (the
// background commands, the MCP servers, a command in flight), and what
// they did is told to the model with the next prompt.
type Modes struct {
	setMu    sync.Mutex // one switch at a time, followers included
	mu       sync.Mutex
	mode     Mode
	accepted string   // an accepted plan, for the next turn
	notes    []string // what followers did at a switch, for the next turn
	follow   []Follower
	pol      *walls.Live
}

// A Follower brings something already running into line with the walls
// after a switch: readOnly is whether the project is now read-only. It
// returns what it did, one sentence each, for the user and the model.
type Follower func(readOnly bool) []string

// NewModes starts in mode m; plan mode makes pol's project read-only
// (pol publishes a snapshot with the flag; nil: modes without walls).
func NewModes(pol *walls.Live, m Mode) *Modes {
	ms := &Modes{pol: pol}
	ms.Set(m)
	return ms
}

// Follow adds f to what every switch of the walls reaches.
func (ms *Modes) Follow(f Follower) {
	ms.setMu.Lock()
	defer ms.setMu.Unlock()
	ms.follow = append(ms.follow, f)
}

// Mode is the mode in force.
func (ms *Modes) Mode() Mode {
	if ms == nil {
		return ModeDefault
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	return ms.mode
}

// Set switches mode. The walls change at once for what starts from now
// on; when they narrow or widen, every Follower is run before Set returns,
// so nothing started under the old walls keeps them (see Follower). It
// returns what the followers did.
func (ms *Modes) Set(m Mode) []string {
	ms.setMu.Lock()
	defer ms.setMu.Unlock()
	ms.mu.Lock()
	was := ms.mode == ModePlan
	ms.mode = m
	ro := m == ModePlan
	if ms.pol != nil {
		ms.pol.SetProjectReadOnly(ro)
	}
	follow := ms.follow
	ms.mu.Unlock()
	if was == ro {
		return nil
	}
	var notes []string
	for _, f := range follow {
		notes = append(notes, f(ro)...)
	}
	if len(notes) > 0 {
		ms.mu.Lock()
		ms.notes = append(ms.notes, notes...)
		ms.mu.Unlock()
	}
	return notes
}

// Accept takes plan as accepted: the session leaves plan mode for next
// (default or acceptEdits) and the next turn carries the plan.
func (ms *Modes) Accept(plan string, next Mode) {
	if next == ModePlan {
		next = ModeDefault
	}
	ms.Set(next)
	ms.mu.Lock()
	ms.accepted = strings.TrimSpace(plan)
	ms.mu.Unlock()
}

// TurnContext is what the next prompt carries for the mode: the planning
// note in plan mode, an accepted plan once.
func (ms *Modes) TurnContext() string {
	if ms == nil {
		return ""
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	var out string
	if len(ms.notes) > 0 {
		out = "[harness: when the mode changed: " + strings.Join(ms.notes, " ") + "]"
		ms.notes = nil
	}
	if ms.accepted != "" {
		out = join(out, acceptedNote(ms.accepted))
		ms.accepted = ""
	}
	if ms.mode == ModePlan {
		out = join(out, PlanNote)
	}
	return out
}

// permKey carries a PreToolUse hook's word on a call to the permission
// gate.
type permKey struct{}

// WithPermission marks ctx with a hook's permission decision on a call.
func WithPermission(ctx context.Context, p string) context.Context {
	if p == "" {
		return ctx
	}
	return context.WithValue(ctx, permKey{}, p)
}

// PermissionOf is the hook's decision ctx carries: "allow", "ask" or "".
func PermissionOf(ctx context.Context) string {
	p, _ := ctx.Value(permKey{}).(string)
	return p
}
