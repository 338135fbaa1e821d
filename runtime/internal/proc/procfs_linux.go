package proc

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

type stat struct {
	ppid, pgrp int
	zombie     bool
	start      uint64 // clock ticks after boot
}

// readStat reads /proc/PID/stat. The command name may hold spaces and parentheses; the
// fields after the last ')' are "state ppid pgrp session tty tpgid flags minflt cminflt
// majflt cmajflt utime stime cutime cstime priority nice threads itrealvalue starttime".
func readStat(pid int) (stat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return stat{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return stat{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	pgrp, _ := strconv.Atoi(f[2])
	start, _ := strconv.ParseUint(f[19], 10, 64)
	return stat{ppid: ppid, pgrp: pgrp, zombie: f[0] == "Z" || f[0] == "X", start: start}, true
}

// environHas reports whether kv ("K=V") is in the environment pid was started with, as
// /proc/PID/environ keeps it.
func environHas(pid int, kv []byte) bool {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for _, e := range bytes.Split(env, []byte{0}) {
		if bytes.Equal(e, kv) {
			return true
		}
	}
	return false
}
