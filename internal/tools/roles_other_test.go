//go:build !linux

package tools

func runTestRoles() {}
