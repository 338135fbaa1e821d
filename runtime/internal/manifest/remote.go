package manifest

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strings"
)

// checkTarget checks what the bundle runs: a command, or a URL with its headers; exactly
// one of the two.
func (m *Manifest) checkTarget() error {
	hasCommand := len(m.Command) > 0
	if m.InMemory != nil {
		if hasCommand || m.URL != "" || len(m.Headers) > 0 || m.Sandbox != nil {
			return errors.New(`an in-memory bundle runs in the node's process: it has no "command", "url", "headers" or "sandbox"`)
		}
		return nil
	}
	switch {
	case hasCommand && m.URL != "":
		return errors.New(`both "command" and "url": a bundle is a program the node starts or a server it reaches, give one of the two`)
	case !hasCommand && m.URL == "":
		return errors.New(`missing "command": give the program and its arguments, e.g. ["./server"], or the "url" of a remote MCP server`)
	case hasCommand:
		if m.Command[0] == "" {
			return errors.New(`missing "command": give the program and its arguments, e.g. ["./server"]`)
		}
		if len(m.Headers) > 0 {
			return errors.New(`"headers" are sent to a "url"; a bundle with a "command" has none`)
		}
		_, err := m.Program()
		return err
	}
	u, err := url.Parse(m.URL)
	if err != nil {
		return fmt.Errorf("url %q: %w", m.URL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("url %q: give an http:// or https:// address of an MCP endpoint, e.g. https://host/mcp", m.URL)
	}
	if u.User != nil {
		return fmt.Errorf("url %q: put credentials in \"headers\" (e.g. \"Authorization\": \"Bearer ${TOKEN}\"), not in the address", u.Redacted())
	}
	if len(m.Env) > 0 || len(m.InheritEnv) > 0 || m.Instances > 1 || m.Isolation == IsolationClient {
		return errors.New(`"env", "inherit_env", "instances" and "isolation": "client" are for processes the node starts; a "url" bundle has none`)
	}
	for k, v := range m.Headers {
		if !headerName.MatchString(k) {
			return fmt.Errorf("header name %q: use letters, digits and -", k)
		}
		if _, err := expand(v, func(string) (string, bool) { return "", true }); err != nil {
			return fmt.Errorf("header %q: %w", k, err)
		}
	}
	return nil
}

// headerName keeps header names to the HTTP token characters that names are written with.
var headerName = regexp.MustCompile(`^[A-Za-z0-9!#$%&'*+.^_|~-]+$`)

// varName is what ${...} may hold.
var varName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// RequestHeaders returns the headers sent to a remote bundle, each ${NAME} replaced by the
// variable's value in the node's environment (lookup, os.LookupEnv when nil). A variable that is not set is an
// error naming it, and the header; values are never part of an error.
func (m *Manifest) RequestHeaders(lookup func(string) (string, bool)) (http.Header, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	h := http.Header{}
	names := make([]string, 0, len(m.Headers))
	for k := range m.Headers {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v, err := expand(m.Headers[k], lookup)
		if err != nil {
			return nil, fmt.Errorf("bundle %q, header %q: %w", m.Name, k, err)
		}
		if strings.ContainsAny(v, "\r\n\x00") {
			return nil, fmt.Errorf("bundle %q, header %q: the value holds a line break or NUL", m.Name, k)
		}
		h.Set(k, v)
	}
	return h, nil
}

// expand replaces each ${NAME} of s by its value.
func expand(s string, lookup func(string) (string, bool)) (string, error) {
	var sb strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			sb.WriteString(s)
			return sb.String(), nil
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return "", errors.New(`"${" without its closing "}"`)
		}
		name := s[i+2 : i+j]
		if !varName.MatchString(name) {
			return "", fmt.Errorf("${%s}: a variable name is letters, digits and _", name)
		}
		v, ok := lookup(name)
		if !ok {
			return "", fmt.Errorf("environment variable %s is not set", name)
		}
		sb.WriteString(s[:i])
		sb.WriteString(v)
		s = s[i+j+1:]
	}
}
