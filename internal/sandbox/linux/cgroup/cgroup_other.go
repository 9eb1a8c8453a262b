//go:build !linux

package cgroup

import (
	"io"
	"os/exec"
)

// Session is Linux only (cgroup_linux.go); elsewhere there is none.
type Session struct{}

type Child struct{}

func (s *Session) Attach(*exec.Cmd, string, bool) *Child   { return nil }
func (c *Child) Start(cmd *exec.Cmd) error                 { return cmd.Start() }
func (c *Child) Started()                                  {}
func (c *Child) OverProcs(<-chan struct{}) <-chan struct{} { return nil }
func (c *Child) Report(io.Writer, bool)                    {}
func (c *Child) Kill()                                     {}
func (s *Session) Close()                                  {}

func Open(int, int64) *Session             { return nil }
func (s *Session) NprocRlimit(max int) int { return max }
func (s *Session) PlacesSupervisors() bool { return false }
