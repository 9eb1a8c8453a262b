//go:build !linux && !darwin

package inner

import (
	"errors"
	"fmt"
)

func execInner(HelperConfig, []string) error {
	return errors.New("the inner stage exists on Linux only")
}

func serveLauncher(HelperConfig) error {
	return errors.New("the sandbox launcher exists on Linux only")
}

func serveSupervisor(HelperConfig) error {
	return errors.New("the sandbox launcher exists on Linux only")
}

func runProbe([]string) int {
	fmt.Println("denied: probes run on Linux only")
	return 2
}
