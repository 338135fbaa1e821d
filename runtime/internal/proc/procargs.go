package proc

import "bytes"

// procargsHasEnv reads what follows argc in macOS's kern.procargs2 (see
// sysTable.hasEnv in table_darwin.go). It builds everywhere, so that its test runs here.
func procargsHasEnv(argc int, b, kv []byte) bool {
	next := func() ([]byte, bool) {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			return nil, false
		}
		s := b[:i]
		b = b[i+1:]
		return s, true
	}
	if _, ok := next(); !ok { // the executable's path
		return false
	}
	for len(b) > 0 && b[0] == 0 {
		b = b[1:]
	}
	for range argc {
		if _, ok := next(); !ok {
			return false
		}
	}
	for {
		s, ok := next()
		if !ok || len(s) == 0 {
			return false
		}
		if bytes.Equal(s, kv) {
			return true
		}
	}
}
