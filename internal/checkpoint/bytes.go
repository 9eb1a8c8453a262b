package checkpoint

import (
	"encoding/json"
	"unicode/utf8"
)

// Paths as bytes: a file name on Linux is any bytes but / and NUL, and a
// JSON string holds only UTF-8 (encoding/json turns the rest into U+FFFD),
// so a name that is not UTF-8 would come back as another path, and undo
// would look for a file that does not exist. Such a path (and a symlink's
// target) is journaled as bytes too (base64), beside its readable form.

type changeJSON struct {
	Path      string   `json:"path"`
	PathBytes []byte   `json:"path_bytes,omitempty"`
	Before    State    `json:"before"`
	After     State    `json:"after"`
	Shared    []string `json:"shared,omitempty"`
}

// MarshalJSON keeps a path that is not UTF-8 as its bytes.
func (c Change) MarshalJSON() ([]byte, error) {
	j := changeJSON{Path: c.Path, Before: c.Before, After: c.After, Shared: c.Shared}
	if !utf8.ValidString(c.Path) {
		j.PathBytes = []byte(c.Path)
	}
	return json.Marshal(j)
}

// UnmarshalJSON takes the bytes when they were kept.
func (c *Change) UnmarshalJSON(b []byte) error {
	var j changeJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*c = Change{Path: j.Path, Before: j.Before, After: j.After, Shared: j.Shared}
	if j.PathBytes != nil {
		c.Path = string(j.PathBytes)
	}
	return nil
}

// stateJSON is State's wire form (an alias has State's fields without its
// methods, so this does not recurse).
type stateJSON State

type stateWire struct {
	stateJSON
	TargetBytes []byte `json:"target_bytes,omitempty"`
}

// MarshalJSON keeps a symlink target that is not UTF-8 as its bytes.
func (s State) MarshalJSON() ([]byte, error) {
	w := stateWire{stateJSON: stateJSON(s)}
	if !utf8.ValidString(s.Target) {
		w.TargetBytes = []byte(s.Target)
	}
	return json.Marshal(w)
}

// UnmarshalJSON takes the bytes when they were kept.
func (s *State) UnmarshalJSON(b []byte) error {
	var w stateWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*s = State(w.stateJSON)
	if w.TargetBytes != nil {
		s.Target = string(w.TargetBytes)
	}
	return nil
}
