//go:build !unix

package rawio

import "net"

// Listener returns ln: this system has no non-blocking descriptors to read and write raw.
func Listener(ln net.Listener) net.Listener { return ln }
