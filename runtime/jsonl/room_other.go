//go:build !linux

package jsonl

import "os"

func pipeRoom(*os.File) (int, bool) { return 0, false }
