package telemetry

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// The profile goes where ProfileEnv says, under the process's id; nothing is written
// without the variable, and a place that cannot be written is an error.
func TestStartCPUProfile(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, env string
		wantErr   bool
		wantFile  string
	}{
		{name: "unset"},
		{name: "a file", env: filepath.Join(dir, "cpu"), wantFile: filepath.Join(dir, fmt.Sprintf("cpu.%d", os.Getpid()))},
		{name: "no such folder", env: filepath.Join(dir, "missing", "cpu"), wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(ProfileEnv, tc.env)
			stop, err := StartCPUProfile()
			if tc.wantErr {
				if err == nil {
					stop()
					t.Fatal("no error for a profile that cannot be written")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			stop()
			entries, _ := os.ReadDir(dir)
			if tc.wantFile == "" {
				if len(entries) != 0 {
					t.Fatalf("wrote %v without %s", entries, ProfileEnv)
				}
				return
			}
			if fi, err := os.Stat(tc.wantFile); err != nil || fi.Size() == 0 {
				t.Fatalf("profile %s: %v", tc.wantFile, err)
			}
		})
	}
}
