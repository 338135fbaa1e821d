package httpfront

import (
	"net/http"
	"sync/atomic"
	"time"
)

// dateCache is the Date header of the responses of one second, formatted once: net/http
// formats it for every response otherwise, about half a microsecond of the node's CPU per
// HTTP call. A response carries the second it is answered in, as net/http's own Date does
// (the header's resolution is a second).
type dateCache struct {
	now atomic.Pointer[httpDate]
}

// httpDate is one second's Date header value, shared by that second's responses: net/http
// only reads a header's values.
type httpDate struct {
	unix  int64
	value []string
}

// header is the Date header's value at now.
func (d *dateCache) header(now time.Time) []string {
	sec := now.Unix()
	if cur := d.now.Load(); cur != nil && cur.unix == sec {
		return cur.value
	}
	next := &httpDate{unix: sec, value: []string{now.UTC().Format(http.TimeFormat)}}
	d.now.Store(next)
	return next.value
}
