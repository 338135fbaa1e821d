package manifest

import (
	"context"
	"errors"
	"io"
)

var errNoServe = errors.New("an in-memory bundle needs the function that serves it")

// ParseInMemory returns the checked manifest of an in-memory bundle (see
// Manifest.InMemory): data is its bundle.json, without "command" or "url", and serve
// serves it in the node's process. Tests give the node their bundles this way, and so may
// a program that embeds the node.
func ParseInMemory(data []byte, serve func(ctx context.Context, stdin io.Reader, stdout io.Writer) error) (*Manifest, error) {
	if serve == nil {
		return nil, errNoServe
	}
	return parse(data, "", serve)
}
