package node

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// StateKeyVar is the variable that gives a bundle process the key its SDK seals the
// requestStates of input_required results with (see Config.StateKey).
const StateKeyVar = "TOOLNODE_STATE_KEY"

// BundleStateKey is the state key of bundle name under the node's key: one per bundle, so
// that a bundle cannot forge another's states, nor the node's own.
func BundleStateKey(key []byte, name string) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("toolnode bundle requestState\x00" + name))
	return hex.EncodeToString(mac.Sum(nil))
}
