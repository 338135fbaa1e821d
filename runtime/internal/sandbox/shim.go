package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// shimVar, in the environment of the node's own binary, makes it the shim of a sandboxed
// process: it applies the spec the variable holds to itself, then execs the command.
const shimVar = "TOOLNODE_SANDBOX_SHIM"

// shimSpec is what the shim does before it execs Path with its own arguments.
type shimSpec struct {
	Path     string   `json:"path"`
	Cgroups  []string `json:"cgroups,omitempty"` // v1 cgroups to join
	Rlimits  []rlimit `json:"rlimits,omitempty"`
	Loopback bool     `json:"loopback,omitempty"` // bring lo up (a network namespace of its own)
	Landlock bool     `json:"landlock,omitempty"` // confine files to Read and Write
	Read     []string `json:"read,omitempty"`
	Write    []string `json:"write,omitempty"`
	NoTCP    bool     `json:"no_tcp,omitempty"` // deny TCP bind and connect (Landlock)
}

// rlimit is one resource limit, soft and hard alike.
type rlimit struct {
	Resource int    `json:"r"`
	Max      uint64 `json:"max"`
}

func (s shimSpec) encode() (string, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("encode the sandbox for its shim: %w", err)
	}
	return shimVar + "=" + string(b), nil
}

// wrap makes cmd start as the shim of s: the node's own binary, with s in its environment,
// and the command's environment (the node's when nil) with the variables set ("K=V") in
// place of any of the same names: getenv(3) takes the first of a name.
func (s shimSpec) wrap(cmd *exec.Cmd, set ...string) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the node's binary to start the sandbox: %w", err)
	}
	spec, err := s.encode()
	if err != nil {
		return err
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		return slices.ContainsFunc(set, func(v string) bool {
			name, _, _ := strings.Cut(v, "=")
			return strings.HasPrefix(kv, name+"=")
		})
	})
	cmd.Path, cmd.Env = exe, append(append(env, set...), spec)
	return nil
}
