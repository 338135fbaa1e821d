// Command standin writes meos-standin-tools.json.gz: one tool per function of libmeos 1.3, as
// the MEOS bundle's generated catalog names them (meos.<C function>), with parameter names
// and C types but no prose. It stands in for that catalog's size and vocabulary in the
// search benchmarks until the generated catalog is in meos-tools.json:
//
//	make bundles   # unpacks the pymeos-cffi wheel into bundles/meos/build/pymeos
//	go run ./runtime/internal/search/testdata/standin
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
)

func main() {
	in := flag.String("functions", "bundles/meos/build/pymeos/pymeos_cffi/functions.py", "pymeos-cffi's functions.py")
	out := flag.String("out", "runtime/internal/search/testdata/meos-standin-tools.json.gz", "file to write (gzipped)")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "standin:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	defRE := regexp.MustCompile(`(?ms)^def (\w+)\((.*?)\)\s*->\s*(.*?):\n`)
	paramRE := regexp.MustCompile(`(\w+): (?:Annotated\[[^\]]*?"([^"]*)"\]|(\w+))`)
	ctypeRE := regexp.MustCompile(`"([^"]*)"`)
	src, err := os.ReadFile(in)
	if err != nil {
		return fmt.Errorf("read %s: %w", in, err)
	}
	var buf bytes.Buffer
	buf.WriteString("[\n")
	n := 0
	for _, m := range defRE.FindAllStringSubmatch(string(src), -1) {
		name, params, ret := m[1], m[2], m[3]
		if strings.HasPrefix(name, "_") {
			continue
		}
		props := map[string]any{}
		var required []string
		for _, p := range paramRE.FindAllStringSubmatch(params, -1) {
			ctype := p[2]
			if ctype == "" {
				ctype = p[3]
			}
			props[p[1]] = map[string]any{"type": "string", "description": ctype}
			required = append(required, p[1])
		}
		retType := "void"
		if c := ctypeRE.FindStringSubmatch(ret); c != nil {
			retType = c[1]
		}
		schema := map[string]any{"type": "object", "properties": props}
		if len(required) > 0 {
			schema["required"] = required
		}
		tool, _ := json.Marshal(map[string]any{
			"name":        "meos." + name,
			"description": fmt.Sprintf("MEOS %s, returning %s.", name, retType),
			"inputSchema": schema,
		})
		line, _ := json.Marshal(map[string]any{"bundle": "meos", "tool": json.RawMessage(tool)})
		if n > 0 {
			buf.WriteString(",\n")
		}
		buf.Write(line)
		n++
	}
	buf.WriteString("\n]\n")
	if n == 0 {
		return fmt.Errorf("no functions found in %s", in)
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if _, err := zw.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("compress: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("compress: %w", err)
	}
	if err := os.WriteFile(out, gz.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	fmt.Printf("%s: %d tools\n", out, n)
	return nil
}
