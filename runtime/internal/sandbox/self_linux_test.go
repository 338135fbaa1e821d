package sandbox_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/sandbox"
)

// restrictedVar makes the test binary a process that restricts itself, then tries to open a
// file and to connect to the port the variable names, and says how each went.
const restrictedVar = "SANDBOX_TEST_RESTRICTED"

func TestMain(m *testing.M) {
	if port, ok := os.LookupEnv(restrictedVar); ok {
		e, err := sandbox.RestrictSelf(sandbox.Policy{Network: "none", Files: 64})
		if err != nil {
			fmt.Println("restrict:", err)
			os.Exit(1)
		}
		fmt.Printf("enforced %+v\n", e)
		if _, err := os.ReadFile("/etc/hostname"); err != nil {
			fmt.Println("open refused:", err)
		}
		if c, err := net.DialTimeout("tcp4", "127.0.0.1:"+port, 5*time.Second); err != nil {
			fmt.Println("connect refused:", err)
		} else {
			c.Close()
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestRestrictSelfLeavesAProcessNoFileAndNoTCP(t *testing.T) {
	if sandbox.Probe().Paths == "" {
		t.Skip("this machine has no Landlock: RestrictSelf leaves files and TCP open")
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", restrictedVar, l.Addr().(*net.TCPAddr).Port))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, want := range []string{"open refused", "connect refused", "Paths:landlock ABI", "Files:rlimit"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("%q missing from %s", want, out)
		}
	}
}
