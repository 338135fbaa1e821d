//go:build !linux && !darwin

package sandbox

import "errors"

const (
	haveRlimits  = false
	rlimitAS     = -1
	rlimitNofile = -1
	rlimitNproc  = -1
)

func setRlimit(int, uint64) error { return errors.New("no rlimits on this system") }
