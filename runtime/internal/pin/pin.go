// Package pin holds tool definitions to a lock file (toolnode.lock): the definition of
// every tool as it was reviewed, by its canonical name. A node serving with a lock serves a
// tool only while its definition is the one pinned; a changed or new tool is held back
// until it is accepted, so that a bundle cannot change what a tool says it does after the
// fact (the "rug pull").
//
// A tool's definition is what a model and its user read to decide on a call: its title,
// description, input and output schemas, annotations and _meta.ui (the view it shows). Its
// digest is the SHA-256 of that definition as canonical JSON (object keys sorted, numbers
// as written), so that re-encoding the same definition never changes it.
package pin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/toolnode/toolnode/sdk-go/app/provider"
)

// FileName is the lock file's default name.
const FileName = "toolnode.lock"

// Version is the lock file format this package writes and reads.
const Version = 1

// members are the members of a tool object its definition holds; _meta.ui is taken apart.
var members = []string{"title", "description", "inputSchema", "outputSchema", "annotations"}

// Definition returns the definition of a tool object (see the package doc) as canonical
// JSON.
func Definition(tool json.RawMessage) (json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(tool, &obj); err != nil {
		return nil, fmt.Errorf("tool definition: %w", err)
	}
	def := map[string]json.RawMessage{}
	for _, k := range members {
		if v, ok := obj[k]; ok {
			def[k] = v
		}
	}
	if meta, ok := obj["_meta"]; ok {
		var m map[string]json.RawMessage
		if json.Unmarshal(meta, &m) == nil {
			if ui, ok := m["ui"]; ok {
				def["_meta.ui"] = ui
			}
		}
	}
	raw, err := json.Marshal(def)
	if err != nil {
		return nil, fmt.Errorf("tool definition: %w", err)
	}
	return Canonical(raw)
}

// Canonical re-encodes raw with its object keys sorted and its numbers kept as written.
func Canonical(raw json.RawMessage) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("canonical JSON: %w", err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("canonical JSON: %w", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// Digest is the digest of a definition as Definition returns it: "sha256:" and its hex.
func Digest(def json.RawMessage) string {
	sum := sha256.Sum256(def)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Entry is one pinned tool.
type Entry struct {
	// Bundle is the bundle that served the tool when it was pinned: a tool of the same name
	// served by another bundle is not the one reviewed.
	Bundle string `json:"bundle"`
	// Digest is the definition's digest. A hand-edited entry may leave it out; it is then
	// the digest of Definition.
	Digest string `json:"digest"`
	// Definition is the definition pinned, kept so that a change can be shown line by line.
	Definition json.RawMessage `json:"definition,omitempty"`
}

// Lock is a lock file's content: the pinned tools by canonical name.
type Lock struct {
	Version int              `json:"version"`
	Tools   map[string]Entry `json:"tools"`
}

// Tool is a tool as a node serves it: its canonical name, its bundle and its object.
type Tool struct {
	Name, Bundle string
	JSON         json.RawMessage
}

// Pin returns the entry that pins t as it is now.
func Pin(t Tool) (Entry, error) {
	def, err := Definition(t.JSON)
	if err != nil {
		return Entry{}, fmt.Errorf("%s: %w", t.Name, err)
	}
	return Entry{Bundle: t.Bundle, Digest: Digest(def), Definition: def}, nil
}

// New returns the lock pinning every tool of tools as it is now.
func New(tools []Tool) (*Lock, error) {
	l := &Lock{Version: Version, Tools: map[string]Entry{}}
	for _, t := range tools {
		e, err := Pin(t)
		if err != nil {
			return nil, err
		}
		l.Tools[t.Name] = e
	}
	return l, nil
}

// Parse reads a lock file's content. An entry without a digest takes its definition's; one
// whose digest and definition disagree is an error, since it is not clear which was meant.
func Parse(data []byte) (*Lock, error) {
	var l Lock
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("not a lock file: %w", err)
	}
	if l.Version != Version {
		return nil, fmt.Errorf("lock file version %d; this toolnode reads version %d", l.Version, Version)
	}
	if l.Tools == nil {
		l.Tools = map[string]Entry{}
	}
	for name, e := range l.Tools {
		var digest string
		if len(e.Definition) > 0 {
			def, err := Canonical(e.Definition)
			if err != nil {
				return nil, fmt.Errorf("tool %q: definition: %w", name, err)
			}
			e.Definition, digest = def, Digest(def)
		}
		switch {
		case e.Digest == "" && digest == "":
			return nil, fmt.Errorf("tool %q has neither a digest nor a definition", name)
		case e.Digest == "":
			e.Digest = digest
		case digest != "" && e.Digest != digest:
			return nil, fmt.Errorf("tool %q: the digest is not the definition's (%s); remove the digest to pin the definition as written", name, digest)
		}
		l.Tools[name] = e
	}
	return &l, nil
}

// Read reads and parses the lock file at path.
func Read(path string) (*Lock, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read lock file: %w", err)
	}
	l, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

// Encode returns the lock file's content: keys sorted, two-space indents, a final newline,
// so that the same lock always gives the same bytes and diffs well under version control.
func (l *Lock) Encode() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(l); err != nil {
		return nil, fmt.Errorf("encode lock: %w", err)
	}
	return buf.Bytes(), nil
}

// Write writes the lock to path, replacing the file in one step (a new file renamed over
// it), so that a node watching it never reads half of it.
func (l *Lock) Write(path string) error {
	data, err := l.Encode()
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write lock file: %w", err)
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write lock file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write lock file: %w", err)
	}
	return nil
}

// Held is a tool held back: served by a bundle, but not as the lock pins it.
type Held struct {
	Name   string `json:"name"`
	Bundle string `json:"bundle"`
	// Why is "new" (the lock does not name it), "changed" (its definition is not the one
	// pinned) or "moved" (another bundle serves it now).
	Why string `json:"why"`
	// Digest is the digest of its definition now.
	Digest string `json:"digest"`
	// Diff shows what changed, line by line ("-" pinned, "+" now); for a new tool, its
	// whole definition.
	Diff string `json:"diff"`
}

// String says what is held and why, in one line.
func (h Held) String() string {
	switch h.Why {
	case "new":
		return fmt.Sprintf("tool %q of bundle %q is not in the lock file", h.Name, h.Bundle)
	case "moved":
		return fmt.Sprintf("tool %q is served by bundle %q, not the bundle it was pinned from", h.Name, h.Bundle)
	}
	return fmt.Sprintf("tool %q of bundle %q changed since it was pinned", h.Name, h.Bundle)
}

// Report is what comparing the served tools with a lock finds.
type Report struct {
	// Held are the served tools held back, by name.
	Held []Held `json:"held"`
	// Missing are the tools the lock names that no bundle serves, sorted.
	Missing []string `json:"missing"`
}

// Digests remembers the digests of the tools of the last check by name, with the bytes of
// the object each was taken of, so that a catalog rebuilt with most of its tools unchanged
// digests only those that changed, and copies none that did not. It keeps only the tools of
// the last check. Not safe for concurrent use.
type Digests struct {
	m map[string]digested
}

// digested is a tool object's bytes and the digest of its definition.
type digested struct{ json, digest string }

// digest returns the digest of t's definition, from the last check when it had t as it is.
func (d *Digests) digest(t Tool, next map[string]digested) (string, error) {
	if p, ok := d.m[t.Name]; ok && p.json == string(t.JSON) {
		next[t.Name] = p
		return p.digest, nil
	}
	def, err := Definition(t.JSON)
	if err != nil {
		return "", err
	}
	p := digested{json: string(t.JSON), digest: Digest(def)}
	next[t.Name] = p
	return p.digest, nil
}

// Check compares the tools served with the lock.
func (l *Lock) Check(served []Tool) Report { return l.CheckWith(served, nil) }

// CheckWith is Check, taking the digests of tools unchanged since the last check from d
// (nil for none).
func (l *Lock) CheckWith(served []Tool, d *Digests) Report {
	r := Report{Held: []Held{}, Missing: []string{}}
	seen := map[string]bool{}
	next := make(map[string]digested, len(served))
	for _, t := range served {
		seen[t.Name] = true
		if d != nil {
			if dg, err := d.digest(t, next); err == nil {
				if e, ok := l.Tools[t.Name]; ok && e.Bundle == t.Bundle && e.Digest == dg {
					continue // pinned as served: no definition needed
				}
			}
		}
		if h, ok := l.check(t); !ok {
			r.Held = append(r.Held, h)
		}
	}
	if d != nil {
		d.m = next
	}
	sort.Slice(r.Held, func(i, j int) bool { return r.Held[i].Name < r.Held[j].Name })
	for name := range l.Tools {
		if !seen[name] {
			r.Missing = append(r.Missing, name)
		}
	}
	sort.Strings(r.Missing)
	return r
}

// check reports whether t is served as pinned, and when not, why it is held.
func (l *Lock) check(t Tool) (Held, bool) {
	def, err := Definition(t.JSON)
	if err != nil {
		return Held{Name: t.Name, Bundle: t.Bundle, Why: "changed", Diff: err.Error()}, false
	}
	h := Held{Name: t.Name, Bundle: t.Bundle, Digest: Digest(def)}
	e, ok := l.Tools[t.Name]
	switch {
	case !ok:
		h.Why, h.Diff = "new", Diff(nil, def)
	case e.Bundle != t.Bundle:
		h.Why, h.Diff = "moved", fmt.Sprintf("- bundle %q\n+ bundle %q\n", e.Bundle, t.Bundle)
		if e.Digest != h.Digest {
			h.Diff += Diff(e.Definition, def)
		}
	case e.Digest != h.Digest:
		h.Why, h.Diff = "changed", Diff(e.Definition, def)
	default:
		return Held{}, true
	}
	return h, false
}

// Accept pins the served tools whose names match one of patterns as they are now, and
// forgets the pinned tools matching one that no bundle serves. It returns the names it
// pinned and those it forgot, sorted. A pattern is a tool name or a glob (* any run of
// characters, ? one), as in access files.
func (l *Lock) Accept(served []Tool, patterns []string) (pinned, forgot []string, err error) {
	match := func(name string) bool {
		for _, p := range patterns {
			if provider.Match(p, name) {
				return true
			}
		}
		return false
	}
	seen := map[string]bool{}
	for _, t := range served {
		seen[t.Name] = true
		if !match(t.Name) {
			continue
		}
		if _, ok := l.check(t); ok {
			continue
		}
		e, err := Pin(t)
		if err != nil {
			return nil, nil, err
		}
		l.Tools[t.Name] = e
		pinned = append(pinned, t.Name)
	}
	for name := range l.Tools {
		if !seen[name] && match(name) {
			delete(l.Tools, name)
			forgot = append(forgot, name)
		}
	}
	sort.Strings(pinned)
	sort.Strings(forgot)
	return pinned, forgot, nil
}

// Diff shows how definition b differs from a, line by line of their indented JSON: lines
// only in a start "- ", lines only in b "+ ", and a line either side of a change is kept
// for context. A nil a shows all of b.
func Diff(a, b json.RawMessage) string {
	la, lb := lines(a), lines(b)
	// The longest common subsequence of lines, by dynamic programming: definitions are
	// small (tens of lines), so its quadratic cost is nothing.
	lcs := make([][]int, len(la)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(lb)+1)
	}
	for i := len(la) - 1; i >= 0; i-- {
		for j := len(lb) - 1; j >= 0; j-- {
			if la[i] == lb[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type line struct {
		op   byte
		text string
	}
	var ops []line
	i, j := 0, 0
	for i < len(la) || j < len(lb) {
		switch {
		case i < len(la) && j < len(lb) && la[i] == lb[j]:
			ops = append(ops, line{' ', la[i]})
			i, j = i+1, j+1
		case i < len(la) && (j == len(lb) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, line{'-', la[i]})
			i++
		default:
			ops = append(ops, line{'+', lb[j]})
			j++
		}
	}
	var sb strings.Builder
	for k, o := range ops {
		near := o.op != ' ' || k > 0 && ops[k-1].op != ' ' || k+1 < len(ops) && ops[k+1].op != ' '
		if near {
			fmt.Fprintf(&sb, "%c %s\n", o.op, o.text)
		}
	}
	return sb.String()
}

// lines splits a definition into the lines of its indented form.
func lines(def json.RawMessage) []string {
	if len(def) == 0 {
		return nil
	}
	var buf bytes.Buffer
	if json.Indent(&buf, def, "", "  ") != nil {
		return strings.Split(string(def), "\n")
	}
	return strings.Split(buf.String(), "\n")
}
