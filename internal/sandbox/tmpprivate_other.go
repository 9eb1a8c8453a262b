//go:build !linux

package sandbox

// tmpIsPrivate: seatbelt's commands see the host's /tmp (s.tmp is only
// their TMPDIR), so the gate has no private /tmp to look through.
func (s *instance) tmpIsPrivate() bool { return false }
