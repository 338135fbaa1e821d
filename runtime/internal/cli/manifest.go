package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/card"
	"github.com/toolnode/toolnode/runtime/internal/catalog"
	"github.com/toolnode/toolnode/runtime/internal/front"
	"github.com/toolnode/toolnode/runtime/internal/node"
	"github.com/toolnode/toolnode/runtime/internal/pin"
	serveapi "github.com/toolnode/toolnode/runtime/internal/serve"
	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// Surface is the merged surface of a set of bundles as `toolnode manifest` prints it: the
// lists a client gets, each sorted as the node serves it, and which bundle serves what.
type Surface struct {
	Tools             []json.RawMessage `json:"tools"`
	Prompts           []json.RawMessage `json:"prompts"`
	Resources         []json.RawMessage `json:"resources"`
	ResourceTemplates []json.RawMessage `json:"resourceTemplates"`
	// ServedBy names the bundle serving each tool and prompt (by name), resource (by URI)
	// and template (by URI template); "(toolnode)" is the node itself.
	ServedBy ServedBy `json:"servedBy"`
}

// ServedBy maps what a surface lists to the bundle serving it.
type ServedBy struct {
	Tools             map[string]string `json:"tools"`
	Prompts           map[string]string `json:"prompts"`
	Resources         map[string]string `json:"resources"`
	ResourceTemplates map[string]string `json:"resourceTemplates"`
}

// surfaceOf reads the merged surface of a node whose bundles are ready, with tool names as
// a client of the names mode sees them.
func surfaceOf(n *node.Node, names string) Surface {
	s := Surface{Tools: []json.RawMessage{}, Prompts: []json.RawMessage{}, ServedBy: ServedBy{Tools: map[string]string{}, Prompts: map[string]string{},
		Resources: map[string]string{}, ResourceTemplates: map[string]string{}}}
	cat := n.Catalog()
	var strict *catalog.NameMap
	if names == front.NamesStrict {
		strict = cat.Strict()
	}
	for _, e := range cat.Entries() {
		raw, name := e.JSON, e.Name
		if strict != nil {
			name = strict.Render(e.Name)
			quoted, _ := json.Marshal(name)
			raw, _ = rawjson.SetMember(raw, "name", quoted)
		}
		s.Tools = append(s.Tools, raw)
		s.ServedBy.Tools[name] = e.Bundle
	}
	for _, e := range n.Prompts().Entries() {
		s.Prompts = append(s.Prompts, e.JSON)
		s.ServedBy.Prompts[e.Name] = e.Bundle
	}
	res := n.Resources()
	s.Resources, _, _ = res.Resources("", 0, nil)
	s.ResourceTemplates, _, _ = res.Templates("", 0, nil)
	route(s.Resources, "uri", res.Route, s.ServedBy.Resources)
	route(s.ResourceTemplates, "uriTemplate", res.RouteTemplate, s.ServedBy.ResourceTemplates)
	return s
}

// route records in by the bundle serving each item, found by its string member key.
func route(items []json.RawMessage, key string, serving func(string) (string, bool), by map[string]string) {
	for _, raw := range items {
		var id string
		if v, ok := rawjson.Member(raw, key); ok {
			_ = json.Unmarshal(v, &id)
		}
		by[id], _ = serving(id)
	}
}

// Encode writes s in its stable form: every object's keys sorted, two-space indents, no
// HTML escapes, a final newline; the same surface always gives the same bytes.
func (s Surface) Encode() ([]byte, error) {
	canon := func(items []json.RawMessage) ([]json.RawMessage, error) {
		out := make([]json.RawMessage, 0, len(items))
		for _, raw := range items {
			c, err := pin.Canonical(raw)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		return out, nil
	}
	var err error
	c := s
	for _, l := range []*[]json.RawMessage{&c.Tools, &c.Prompts, &c.Resources, &c.ResourceTemplates} {
		if *l, err = canon(*l); err != nil {
			return nil, err
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c); err != nil {
		return nil, fmt.Errorf("encode surface: %w", err)
	}
	return buf.Bytes(), nil
}

const manifestUsage = `Usage: toolnode manifest [--bundles DIR]... [--config FILE] [--names MODE] [--check FILE]
       toolnode manifest --format server-card [--url URL] [--bundles DIR]... [--config FILE]

Starts the bundles in-process, as toolnode tools does, and prints their merged surface as
JSON: the tools, prompts, resources and resource templates exactly as clients list them
(every schema and annotation), and which bundle serves each. The output is deterministic:
the same bundles give the same bytes whatever order they start in, so the file can be
committed and diffed in CI.

With --check FILE nothing is printed when the surface matches FILE; otherwise what was
added, removed or changed is printed and the exit status is 1.

With --format server-card it prints the node's MCP server card instead, as toolnode serve
--http publishes it at /mcp/server-card: the endpoint --url names (none without it), the
protocol revisions the node speaks, and the bundles it fronts.

Flags:
`

// What toolnode manifest prints (--format).
const (
	formatSurface    = "surface"
	formatServerCard = "server-card"
)

func manifestCommand(args []string, stdout, stderr io.Writer) int {
	var t targetFlags
	fs := flag.NewFlagSet("manifest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	t.registerLocal(fs)
	names := fs.String("names", front.NamesCanonical, "tool names as a client of `MODE` sees them: canonical (seat.verb) or underscore (seat_verb)")
	check := fs.String("check", "", "compare the surface with `FILE` (a committed manifest) instead of printing it")
	format := fs.String("format", formatSurface, "what to print: surface (the merged tools, prompts and resources) or server-card (the node's MCP server card)")
	url := fs.String("url", "", "with --format server-card, the Streamable HTTP endpoint `URL` the card names (e.g. https://host/mcp)")
	fs.Usage = func() {
		fmt.Fprint(stderr, manifestUsage)
		fs.PrintDefaults()
	}
	if code, done := parse(fs, args, stderr); done {
		return code
	}
	switch *names {
	case front.NamesCanonical, front.NamesStrict:
	default:
		fmt.Fprintf(stderr, "toolnode manifest: --names %q: use canonical or underscore\n", *names)
		return ExitUsage
	}
	if len(t.bundles) == 0 && t.config == "" {
		fmt.Fprintln(stderr, "toolnode manifest: say where the bundles are: --bundles DIR or --config FILE")
		return ExitUsage
	}
	switch {
	case *format != formatSurface && *format != formatServerCard:
		fmt.Fprintf(stderr, "toolnode manifest: --format %q: use surface or server-card\n", *format)
		return ExitUsage
	case *format == formatServerCard && *check != "":
		fmt.Fprintln(stderr, "toolnode manifest: --check compares a surface; it does not take --format server-card")
		return ExitUsage
	case *url != "" && *format != formatServerCard:
		fmt.Fprintln(stderr, "toolnode manifest: --url names the endpoint on a server card: add --format server-card")
		return ExitUsage
	}
	return t.with("manifest", 2*time.Minute, stderr, func(ctx context.Context, tgt target) int {
		n := tgt.(localTarget).n
		// A bundle that did not start would be missing from the surface: no file to trust.
		if !allStarted(n, "manifest", stderr) {
			return ExitError
		}
		if *format == formatServerCard {
			info := card.Info{Version: Version, URL: *url, Bundles: serveapi.BundleNames(n)}
			_, _ = stdout.Write(card.Build(info, mcp.AllVersions()).Encode())
			return ExitOK
		}
		got, err := surfaceOf(n, *names).Encode()
		if err != nil {
			fmt.Fprintf(stderr, "toolnode manifest: %v\n", err)
			return ExitError
		}
		if *check == "" {
			_, _ = stdout.Write(got)
			return ExitOK
		}
		want, err := os.ReadFile(*check)
		if err != nil {
			fmt.Fprintf(stderr, "toolnode manifest: --check: %v\n", err)
			return ExitError
		}
		if bytes.Equal(want, got) {
			return ExitOK
		}
		diff, err := surfaceDiff(want, got)
		if err != nil {
			fmt.Fprintf(stderr, "toolnode manifest: --check %s: %v\n", *check, err)
			return ExitError
		}
		fmt.Fprintf(stdout, "the surface differs from %s (- in the file, + now):\n%s", *check, diff)
		return ExitError
	})
}

// surfaceDiff says what differs between two encoded surfaces, item by item: each list's
// items added, removed, and changed with the lines that changed.
func surfaceDiff(want, got []byte) (string, error) {
	var a, b Surface
	if err := json.Unmarshal(want, &a); err != nil {
		return "", fmt.Errorf("not a manifest: %w", err)
	}
	if err := json.Unmarshal(got, &b); err != nil {
		return "", err
	}
	var sb strings.Builder
	kinds := []struct {
		kind, key string
		a, b      []json.RawMessage
		byA, byB  map[string]string
	}{
		{"tool", "name", a.Tools, b.Tools, a.ServedBy.Tools, b.ServedBy.Tools},
		{"prompt", "name", a.Prompts, b.Prompts, a.ServedBy.Prompts, b.ServedBy.Prompts},
		{"resource", "uri", a.Resources, b.Resources, a.ServedBy.Resources, b.ServedBy.Resources},
		{"resource template", "uriTemplate", a.ResourceTemplates, b.ResourceTemplates, a.ServedBy.ResourceTemplates, b.ServedBy.ResourceTemplates},
	}
	for _, k := range kinds {
		ia, ib := indexBy(k.a, k.key), indexBy(k.b, k.key)
		keys := map[string]bool{}
		for id := range ia {
			keys[id] = true
		}
		for id := range ib {
			keys[id] = true
		}
		sorted := make([]string, 0, len(keys))
		for id := range keys {
			sorted = append(sorted, id)
		}
		sort.Strings(sorted)
		for _, id := range sorted {
			x, inA := ia[id]
			y, inB := ib[id]
			switch {
			case !inA:
				fmt.Fprintf(&sb, "+ %s %q (bundle %s)\n", k.kind, id, k.byB[id])
			case !inB:
				fmt.Fprintf(&sb, "- %s %q (bundle %s)\n", k.kind, id, k.byA[id])
			default:
				if k.byA[id] != k.byB[id] {
					fmt.Fprintf(&sb, "~ %s %q: served by %s, was %s\n", k.kind, id, k.byB[id], k.byA[id])
				}
				if lines := changedLines(x, y); lines != "" {
					fmt.Fprintf(&sb, "~ %s %q changed:\n%s", k.kind, id, lines)
				}
			}
		}
	}
	if sb.Len() == 0 {
		sb.WriteString("~ the same items, differently encoded or ordered: regenerate the file with toolnode manifest\n")
	}
	return sb.String(), nil
}

// indexBy maps items by the string member key, as indented canonical JSON.
func indexBy(items []json.RawMessage, key string) map[string]string {
	out := map[string]string{}
	for _, raw := range items {
		id := ""
		if v, ok := rawjson.Member(raw, key); ok {
			_ = json.Unmarshal(v, &id)
		}
		var buf bytes.Buffer
		if json.Indent(&buf, raw, "    ", "  ") != nil {
			buf.Reset()
			buf.Write(raw)
		}
		out[id] = buf.String()
	}
	return out
}

// changedLines lists the lines of a missing from b (-) and of b missing from a (+).
func changedLines(a, b string) string {
	if a == b {
		return ""
	}
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	count := func(ls []string) map[string]int {
		m := map[string]int{}
		for _, l := range ls {
			m[l]++
		}
		return m
	}
	ca, cb := count(la), count(lb)
	var sb strings.Builder
	for _, l := range la {
		if cb[l] > 0 {
			cb[l]--
			continue
		}
		fmt.Fprintf(&sb, "  - %s\n", strings.TrimSpace(l))
	}
	for _, l := range lb {
		if ca[l] > 0 {
			ca[l]--
			continue
		}
		fmt.Fprintf(&sb, "  + %s\n", strings.TrimSpace(l))
	}
	return sb.String()
}

// allStarted reports whether every bundle of n has started; otherwise it says which did
// not, for the command cmd, whose output would miss its tools.
func allStarted(n *node.Node, cmd string, stderr io.Writer) bool {
	for _, st := range n.Status() {
		if st.State != node.StateReady && st.State != node.StateAsleep {
			fmt.Fprintf(stderr, "toolnode %s: bundle %q is %s (last error: %s); its tools cannot be listed\n", cmd, st.Name, st.State, st.LastError)
			return false
		}
	}
	return true
}
