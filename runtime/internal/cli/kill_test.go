package cli_test

import "os"

// killProcess ends pid at once (SIGKILL on Unix).
func killProcess(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
