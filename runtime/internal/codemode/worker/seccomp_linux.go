package worker

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// denySockets makes socket(2) and socketpair(2) fail with EACCES in every thread of the
// worker, for good (a seccomp filter): Landlock and the network namespace keep TCP and the
// network away, but not a unix socket a path names (a container engine's, a desktop
// session's), which needs a socket the worker can then no longer make. A Go program that
// has started makes none. Other architectures than amd64 and arm64 go without.
func denySockets() error {
	var arch uint32
	switch runtime.GOARCH {
	case "amd64":
		arch = unix.AUDIT_ARCH_X86_64
	case "arm64":
		arch = unix.AUDIT_ARCH_AARCH64
	default:
		return nil
	}
	const (
		ld    = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge   = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ret   = unix.BPF_RET | unix.BPF_K
		nr    = 0 // offsetof(struct seccomp_data, nr)
		archO = 4 // offsetof(struct seccomp_data, arch)
	)
	filter := []unix.SockFilter{
		{Code: ld, K: archO},
		{Code: jeq, K: arch, Jt: 0, Jf: 5}, // another architecture's calls: denied
		{Code: ld, K: nr},
		{Code: jge, K: 0x40000000, Jt: 3}, // x32's calls: denied
		{Code: jeq, K: unix.SYS_SOCKET, Jt: 2},
		{Code: jeq, K: unix.SYS_SOCKETPAIR, Jt: 1},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
		{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)},
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	// no_new_privs is set already (sandbox.RestrictSelf), as an unprivileged filter needs.
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(filter)
	if errno != 0 {
		return fmt.Errorf("deny sockets (seccomp): %w", errno)
	}
	return nil
}
