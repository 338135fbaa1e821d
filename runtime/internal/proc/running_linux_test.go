package proc

// running reports whether pid is a live (not zombie) process.
func running(pid int) bool {
	st, ok := readStat(pid)
	return ok && !st.zombie
}
