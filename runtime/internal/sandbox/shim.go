package sandbox

import (
	"encoding/json"
	"fmt"
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
