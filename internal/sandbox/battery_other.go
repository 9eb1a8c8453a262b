//go:build !linux && !darwin

package sandbox

import (
	"context"
	"errors"
	"io"
)

// Battery runs the escape battery; its probes exist on Linux only so far.
func Battery(ctx context.Context, backend string, w io.Writer, opts ...Option) (escaped int, err error) {
	return 0, errors.New("the escape battery runs on Linux only so far")
}
