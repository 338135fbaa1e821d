package worker

import "github.com/toolnode/toolnode/runtime/internal/sandbox"

// supported says workers run on this platform: not on Windows, where every program runs in
// the node, as with --run-worker=off.
const supported = false

func policy(Config) sandbox.Policy { return sandbox.Policy{} }
func enforced(Config) string       { return "not on Windows: programs run in the node" }
func restrict() error              { return nil }
