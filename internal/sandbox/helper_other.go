//go:build !linux && !darwin

package sandbox

import (
	"errors"
	"fmt"
)

func execInner(helperConfig, []string) error {
	return errors.New("the inner stage exists on Linux only")
}

func serveLauncher(helperConfig) error {
	return errors.New("the sandbox launcher exists on Linux only")
}

func serveSupervisor(helperConfig) error {
	return errors.New("the sandbox launcher exists on Linux only")
}

func runProbe([]string) int {
	fmt.Println("denied: probes run on Linux only")
	return 2
}
