package proc

// running reports whether pid is a live (not zombie) process.
func running(pid int) bool {
	e, ok := sysTable{}.entry(pid)
	return ok && !e.zombie
}
