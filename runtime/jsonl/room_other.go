//go:build !linux

package jsonl

import "os"

func pipeRoom(*os.File, *int) (int, bool) { return 0, false }
