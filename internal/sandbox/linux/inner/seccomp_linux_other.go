//go:build linux && !amd64 && !arm64

package inner

// AuditArch 0 makes applySeccomp refuse: the inner stage fails closed on
// architectures whose filter nobody has checked.
const AuditArch = 0

func archPrologue() []Bpf { return nil }

var metaSyscalls []uint32

var writeCalls map[uint32]writeCall
