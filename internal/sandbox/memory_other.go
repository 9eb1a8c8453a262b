//go:build !linux

package sandbox

// physicalMemory is unknown here: DefaultMaxMemory stands.
func physicalMemory() int64 { return 0 }
