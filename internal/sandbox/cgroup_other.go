//go:build !linux

package sandbox

import (
	"io"
	"os/exec"
)

// cgroupSession is Linux only (cgroup_linux.go); elsewhere there is none.
type cgroupSession struct{}

type cgroupChild struct{}

func (s *cgroupSession) attach(*exec.Cmd, string, bool) *cgroupChild { return nil }
func (c *cgroupChild) start(cmd *exec.Cmd) error                     { return cmd.Start() }
func (c *cgroupChild) started()                                      {}
func (c *cgroupChild) overProcs(<-chan struct{}) <-chan struct{}     { return nil }
func (c *cgroupChild) report(io.Writer, bool)                        {}
func (c *cgroupChild) kill()                                         {}
func (s *cgroupSession) close()                                      {}

func attachCgroup(*instance, *cgroupSession)     {}
func openCgroup(int, int64) *cgroupSession       { return nil }
func (s *cgroupSession) nprocRlimit(max int) int { return max }
func (s *cgroupSession) placesSupervisors() bool { return false }
