//go:build linux && toolnode_darwin_proc

package proc

import (
	"os"
	"strconv"
)

// sysTable reads the process table from /proc, for the macOS supervision built on Linux
// (the toolnode_darwin_proc tag): the same answers as sysctl(3) gives on macOS.
type sysTable struct{}

func (sysTable) list() ([]procEntry, error) {
	dir, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	out := make([]procEntry, 0, len(dir))
	for _, d := range dir {
		if pid, err := strconv.Atoi(d.Name()); err == nil {
			if e, ok := (sysTable{}).entry(pid); ok {
				out = append(out, e)
			}
		}
	}
	return out, nil
}

func (sysTable) entry(pid int) (procEntry, bool) {
	st, ok := readStat(pid)
	if !ok {
		return procEntry{}, false
	}
	return procEntry{pid: pid, ppid: st.ppid, pgid: st.pgrp, start: int64(st.start), zombie: st.zombie}, true
}

func (sysTable) hasEnv(pid int, kv []byte) bool { return environHas(pid, kv) }
