// Command regen writes the tool lists the search-quality test reads, from the bundles as
// they are built now:
//
//	go build -o bin/toolnode ./runtime/cmd/toolnode
//	go run ./runtime/internal/search/testdata/regen -toolnode bin/toolnode
//
// It writes examples-tools.json (from ./examples) and meos-tools.json (from ./bundles) into
// runtime/internal/search/testdata, each a JSON array of {"bundle", "tool"}.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/toolnode/toolnode/runtime/internal/manifest"
)

func main() {
	toolnode := flag.String("toolnode", "bin/toolnode", "the toolnode binary")
	out := flag.String("out", "runtime/internal/search/testdata", "folder to write into")
	flag.Parse()
	for name, dir := range map[string]string{"examples-tools.json": "examples", "meos-tools.json": "bundles"} {
		if err := regen(*toolnode, dir, filepath.Join(*out, name)); err != nil {
			fmt.Fprintln(os.Stderr, "regen:", err)
			os.Exit(1)
		}
	}
}

type entry struct {
	Bundle string          `json:"bundle"`
	Tool   json.RawMessage `json:"tool"`
}

func regen(toolnode, dir, path string) error {
	bundleOf, err := bundleRule(dir)
	if err != nil {
		return err
	}
	js, err := exec.Command(toolnode, "tools", "--json", "--bundles", dir).Output()
	if err != nil {
		return fmt.Errorf("list the tools of %s as JSON: %w", dir, err)
	}
	var tools []json.RawMessage
	if err := json.Unmarshal(js, &tools); err != nil {
		return fmt.Errorf("read the tools of %s: %w", dir, err)
	}
	entries := make([]entry, 0, len(tools))
	for _, t := range tools {
		var n struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(t, &n); err != nil {
			return fmt.Errorf("read a tool of %s: %w", dir, err)
		}
		var compact bytes.Buffer
		_ = json.Compact(&compact, t)
		entries = append(entries, entry{Bundle: bundleOf(n.Name), Tool: compact.Bytes()})
	}
	var buf bytes.Buffer
	buf.WriteString("[\n")
	for i, e := range entries {
		line, _ := json.Marshal(e)
		buf.Write(line)
		if i < len(entries)-1 {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
	}
	buf.WriteString("]\n")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	fmt.Printf("%s: %d tools from %s\n", path, len(entries), dir)
	return nil
}

// bundleRule returns how to tell the bundle serving an exposed name from the manifests in
// dir, by the catalog's rules: <bundle>.<tool> is that bundle's; a seat verb belongs to the
// first bundle by name declaring the seat; any other name to a bundle without prefix, or to
// the node itself (toolnode.*).
func bundleRule(dir string) (func(string) string, error) {
	ms, problems := manifest.Discover(dir)
	if len(problems) > 0 {
		return nil, fmt.Errorf("read the bundles of %s: %v", dir, problems[0].Err)
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Name < ms[j].Name })
	return func(name string) string {
		first, _, _ := strings.Cut(name, ".")
		for _, m := range ms {
			if m.Name == first {
				return m.Name
			}
		}
		for _, m := range ms {
			if slices.Contains(m.Seats, first) {
				return m.Name
			}
		}
		if first == "toolnode" {
			return "toolnode"
		}
		for _, m := range ms {
			if m.Prefix != nil && !*m.Prefix {
				return m.Name
			}
		}
		return ""
	}, nil
}
