package sandbox

import "github.com/harness-dev/harness/internal/sandbox/backend"

func firstLine(b []byte) string { return backend.FirstLine(b) }
