//go:build darwin

package proc

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// sysTable reads macOS's process table with sysctl(3): kern.proc.all and kern.proc.pid
// give the struct kinfo_proc that ps(1) reads, kern.procargs2 the arguments and
// environment a process was started with.
type sysTable struct{}

// szomb is p_stat of a zombie (<sys/proc.h>).
const szomb = 5

func entryOf(k *unix.KinfoProc) procEntry {
	return procEntry{
		pid:    int(k.Proc.P_pid),
		ppid:   int(k.Eproc.Ppid),
		pgid:   int(k.Eproc.Pgid),
		start:  k.Proc.P_starttime.Sec*1_000_000 + int64(k.Proc.P_starttime.Usec),
		zombie: k.Proc.P_stat == szomb,
	}
}

func (sysTable) list() ([]procEntry, error) {
	ks, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil, err
	}
	out := make([]procEntry, len(ks))
	for i := range ks {
		out[i] = entryOf(&ks[i])
	}
	return out, nil
}

func (sysTable) entry(pid int) (procEntry, bool) {
	k, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || int(k.Proc.P_pid) != pid {
		return procEntry{}, false
	}
	return entryOf(k), true
}

// hasEnv reads kern.procargs2: argc (a 32-bit int), the executable's path, NUL padding,
// argc arguments, then the environment, each string NUL-terminated, the environment ended
// by an empty string. macOS gives it for the caller's own processes only (all, as root).
func (sysTable) hasEnv(pid int, kv []byte) bool {
	b, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil || len(b) < 4 {
		return false
	}
	return procargsHasEnv(int(binary.LittleEndian.Uint32(b)), b[4:], kv)
}
