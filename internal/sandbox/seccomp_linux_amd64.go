package sandbox

import "golang.org/x/sys/unix"

const auditArch = unix.AUDIT_ARCH_X86_64

// archPrologue kills x32 system calls (nr with bit 30 set), which would
// otherwise reach the kernel under numbers this filter does not check.
// i386 calls (int 0x80) carry AUDIT_ARCH_I386 and die on the arch check.
func archPrologue() []bpf {
	return []bpf{
		{Code: unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, Jt: 0, Jf: 1, K: 0x40000000},
		ret(retKill),
	}
}
