package proc

import (
	"strings"
	"testing"
)

func TestProcargsHasEnv(t *testing.T) {
	const kv = TagVar + "=0123abcd"
	// What follows argc in kern.procargs2: path, padding, arguments, environment, apple strings.
	layout := func(path string, pad int, args, env []string) []byte {
		s := path + "\x00" + strings.Repeat("\x00", pad)
		for _, a := range args {
			s += a + "\x00"
		}
		for _, e := range env {
			s += e + "\x00"
		}
		return []byte(s + "\x00executable_path=" + path + "\x00")
	}
	tests := []struct {
		name string
		argc int
		b    []byte
		want bool
	}{
		{"in the environment", 2, layout("/bin/sleep", 3, []string{"sleep", "300"}, []string{"PATH=/bin", kv}), true},
		{"no padding", 1, layout("/bin/sh", 0, []string{"sh"}, []string{kv}), true},
		{"absent", 1, layout("/bin/sh", 2, []string{"sh"}, []string{"PATH=/bin", kv + "x"}), false},
		{"as an argument only", 2, layout("/bin/echo", 1, []string{"echo", kv}, []string{"PATH=/bin"}), false},
		{"among the apple strings only", 1, append(layout("/bin/sh", 1, []string{"sh"}, nil), kv+"\x00"...), false},
		{"argc past the end", 9, layout("/bin/sh", 1, []string{"sh"}, []string{kv}), false},
		{"cut short", 1, []byte("/bin/sh\x00\x00sh\x00" + kv), false},
		{"empty", 0, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := procargsHasEnv(tt.argc, tt.b, []byte(kv)); got != tt.want {
				t.Errorf("procargsHasEnv = %v, want %v", got, tt.want)
			}
		})
	}
}
