//go:build !linux

package sandbox

import "os/exec"

// cgroupSession is Linux only (cgroup_linux.go); elsewhere there is none.
type cgroupSession struct{}

type cgroupChild struct{}

func (s *cgroupSession) attach(*exec.Cmd, string) *cgroupChild { return nil }
func (c *cgroupChild) started()                                {}
func (c *cgroupChild) kill()                                   {}
func (s *cgroupSession) close()                                {}
func (s *cgroupSession) text() string                          { return "" }

func attachCgroup(*instance) {}
