package sandbox

// tmpIsPrivate reports whether commands see s.tmp as /tmp: bwrap, the
// containers, and landlock in its own mount namespace. Without one,
// landlock's /tmp is the host's and s.tmp only its TMPDIR.
func (s *instance) tmpIsPrivate() bool {
	switch {
	case s.tmp == "":
		return false
	case s.name == BackendBwrap, IsContainer(s.name):
		return true
	case s.name == BackendLandlock:
		return s.tree == treeUserPID
	}
	return false
}
