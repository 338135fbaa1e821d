package access

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// FileError lists every problem found in an access file, each saying where and how to fix
// it.
type FileError struct {
	Problems []string
}

func (e *FileError) Error() string {
	if len(e.Problems) == 1 {
		return e.Problems[0]
	}
	return fmt.Sprintf("%d problems: %s", len(e.Problems), strings.Join(e.Problems, "; "))
}

// The keys the file and a client may hold.
func fileKeys() []string { return []string{"clients", "approvals"} }
func clientKeys() []string {
	return []string{"name", "token_sha256", "allow", "deny", "view", "scopes"}
}

// maxClientName bounds a client's name, which appears in every log and audit line.
const maxClientName = 64

// Parse reads an access file strictly: unknown keys, malformed hashes, duplicate names or
// tokens and bad patterns are errors (a *FileError naming every one), never ignored.
func Parse(data []byte) (*Policy, error) {
	var probs []string
	fail := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }

	var top map[string]json.RawMessage
	if err := decodeOne(data, &top); err != nil {
		return nil, &FileError{Problems: []string{fmt.Sprintf("not a JSON object: %v; the file is {\"clients\": [...]}", err)}}
	}
	if top == nil {
		return nil, &FileError{Problems: []string{"the file is null; it is {\"clients\": [...]}"}}
	}
	for _, k := range unknownKeys(top, fileKeys()) {
		fail("unknown key %q at the top level%s; the file holds \"clients\" and \"approvals\"", k, suggest(k, fileKeys()))
	}
	var raws []json.RawMessage
	if rc, ok := top["clients"]; !ok {
		fail("no \"clients\" list; give at least one client")
	} else if err := json.Unmarshal(rc, &raws); err != nil || raws == nil {
		fail("\"clients\" must be a list of client objects")
	} else if len(raws) == 0 {
		fail("\"clients\" is empty, which would let nobody in; give at least one client")
	}

	p := &Policy{byName: map[string]*Client{}}
	tokens := map[[32]byte]string{}
	for i, raw := range raws {
		c, cprobs := parseClient(raw)
		where := fmt.Sprintf("clients[%d]", i)
		if c != nil && c.Name != "" {
			where += fmt.Sprintf(" (%q)", c.Name)
		}
		for _, pr := range cprobs {
			fail("%s: %s", where, pr)
		}
		if c == nil {
			continue
		}
		if prev, dup := p.byName[c.Name]; dup && c.Name != "" {
			fail("%s: name %q is also clients[%d]'s; names must be unique", where, c.Name, slices.Index(p.clients, prev))
		}
		if c.hasToken {
			if other, dup := tokens[c.tokenHash]; dup {
				fail("%s: same token_sha256 as %q; every client needs its own token", where, other)
			}
			tokens[c.tokenHash] = c.Name
		}
		p.byName[c.Name] = c
		p.clients = append(p.clients, c)
	}
	if raw, ok := top["approvals"]; ok {
		p.approvals = parseApprovals(raw, func(name string) bool { _, ok := p.byName[name]; return ok }, fail)
	}
	if len(probs) > 0 {
		return nil, &FileError{Problems: probs}
	}
	p.version = version(data)
	return p, nil
}

func parseClient(raw json.RawMessage) (*Client, []string) {
	var probs []string
	fail := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, []string{"not an object; a client is {\"name\": ..., \"token_sha256\": ..., \"allow\": [...]}"}
	}
	for _, k := range unknownKeys(m, clientKeys()) {
		fail("unknown key %q%s; a client has %s", k, suggest(k, clientKeys()), strings.Join(clientKeys(), ", "))
	}
	c := &Client{}
	if !field(m, "name", &c.Name) || c.Name == "" {
		fail("\"name\" must be a non-empty string")
	} else if err := checkName(c.Name); err != nil {
		fail("%v", err)
	}
	var hash string
	if _, ok := m["token_sha256"]; ok {
		if !field(m, "token_sha256", &hash) {
			fail("\"token_sha256\" must be a string")
		} else if b, err := hex.DecodeString(hash); err != nil || len(b) != len(c.tokenHash) {
			fail("token_sha256 must be the SHA-256 of the token as 64 hex digits (got %d characters%s); make it with: printf %%s \"$TOKEN\" | sha256sum",
				len(hash), badHexHint(hash))
		} else {
			copy(c.tokenHash[:], b)
			c.hasToken = true
		}
	}
	if _, ok := m["allow"]; !ok {
		fail("no \"allow\" list; write \"allow\": [\"*\"] to allow every tool")
	}
	c.allow, c.Allow = patterns(m, "allow", fail)
	c.deny, c.Deny = patterns(m, "deny", fail)
	var view string
	if _, ok := m["view"]; ok {
		if !field(m, "view", &view) {
			fail("\"view\" must be a string")
		}
		switch View(view) {
		case ViewFull, ViewSearch, ViewAuto:
			c.View = View(view)
		default:
			fail("view %q is not a view; use \"full\" (every allowed tool listed), \"search\" (found with toolnode.search) or \"auto\" (whole when within the node's budget, else by search), or leave it out to follow --view", view)
		}
	}
	if _, ok := m["scopes"]; ok {
		if !field(m, "scopes", &c.Scopes) {
			fail("\"scopes\" must be a list of strings")
		}
		seen := map[string]bool{}
		for _, s := range c.Scopes {
			switch {
			case s == "" || strings.ContainsAny(s, " \t\r\n"):
				fail("scope %q must be a non-empty word without spaces", s)
			case seen[s]:
				fail("scope %q is listed twice", s)
			}
			seen[s] = true
		}
	}
	return c, probs
}

// patterns reads the pattern list under key.
func patterns(m map[string]json.RawMessage, key string, fail func(string, ...any)) ([]Pattern, []string) {
	if _, ok := m[key]; !ok {
		return nil, nil
	}
	var list []string
	if !field(m, key, &list) {
		fail("%q must be a list of patterns (strings)", key)
		return nil, nil
	}
	out := make([]Pattern, 0, len(list))
	for i, s := range list {
		p, err := ParsePattern(s)
		if err != nil {
			fail("%s[%d]: %v", key, i, err)
			continue
		}
		out = append(out, p)
	}
	return out, list
}

// field decodes m[key] into v, reporting whether it had the right type. JSON null counts as
// the wrong type: a key written out must say something.
func field(m map[string]json.RawMessage, key string, v any) bool {
	raw, ok := m[key]
	if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return false
	}
	return json.Unmarshal(raw, v) == nil
}

func checkName(name string) error {
	if len(name) > maxClientName {
		return fmt.Errorf("name %q is longer than %d characters", name, maxClientName)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return fmt.Errorf("name %q holds %q; names use the characters A-Z a-z 0-9 _ - and dot", name, r)
		}
	}
	return nil
}

func badHexHint(s string) string {
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return fmt.Sprintf(", and %q is not a hex digit", r)
		}
	}
	return ""
}

// decodeOne decodes exactly one JSON value from data.
func decodeOne(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value")
	}
	return nil
}

func unknownKeys(m map[string]json.RawMessage, known []string) []string {
	var out []string
	for k := range m {
		if !slices.Contains(known, k) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// suggest returns `, did you mean "x"?` when a known key is a small typo away from k.
func suggest(k string, known []string) string {
	best, dist := "", 3
	for _, kn := range known {
		if d := editDistance(strings.ToLower(k), kn); d < dist {
			best, dist = kn, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
