//go:build !linux

package gitshadow

// objectWatch: only Linux watches the shadow; elsewhere After's import
// after each command is all there is.
type objectWatch struct{ stop func() }

func (sh *gitShadow) startWatch() {}
