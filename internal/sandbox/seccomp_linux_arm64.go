package sandbox

import "golang.org/x/sys/unix"

const auditArch = unix.AUDIT_ARCH_AARCH64

// archPrologue: arm64 has a single system-call ABI (32-bit compat calls
// carry AUDIT_ARCH_ARM and die on the arch check).
func archPrologue() []bpf { return nil }
