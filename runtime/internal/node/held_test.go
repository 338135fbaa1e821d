package node

import (
	"fmt"
	"testing"
)

// What the node remembers of names and URIs is bounded: past the bound a new key is not
// remembered, while a key remembered still takes a new holder.
func TestHeldNamesAreBounded(t *testing.T) {
	m := map[string][]string{}
	for i := range 5 {
		holdIn(m, fmt.Sprint("name", i), "a", 3)
	}
	holdIn(m, "name0", "b", 3)
	holdIn(m, "name0", "b", 3)
	if len(m) != 3 || fmt.Sprint(m["name0"]) != "[a b]" {
		t.Errorf("held %v, want 3 names, name0 held by a and b once each", m)
	}
}
