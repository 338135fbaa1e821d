package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/access"
	"github.com/toolnode/toolnode/runtime/internal/manifest"
	"github.com/toolnode/toolnode/runtime/internal/testkit"
	"github.com/toolnode/toolnode/runtime/internal/testkit/nodekit"
)

// The documentation harness: every code block of README.md, docs/ and the READMEs of the
// SDKs, the examples and MEOS is run or checked here against the checkout as make test
// leaves it, or is marked in its document, on the line before it, with one of
//
//	<!-- not run here: REASON -->   (a Mac, systemd, a real model API, ...)
//	<!-- run by PATH -->            (a test of its own, PATH, reads the document)
//	<!-- lines of PATH -->          (each line begins a line of the file PATH)
//
// What runs, by what the block holds:
//   - a docs/snippets file quoted word for word: the snippet tests run it;
//   - JSON: a bundle.json through the manifest reader, an mcpServers file through the config
//     reader, an access file through the access reader, anything else must parse;
//   - Go: it must parse (a file, or statements); C: it must compile against tn.h;
//   - the node's log lines ([WARN] logger: message): the message must be logged at that
//     level by the runtime's code;
//   - shell: each command: toolnode's own run for real (serve until it is ready), make's
//     targets dry-run (make -n), go's package patterns listed (go list).
// A block none of these takes, and no marker covers, fails TestDocBlocksRunOrMarked.

// docBlock is one code block of a document.
type docBlock struct {
	file   string // relative to the checkout
	line   int    // of its first line of code
	lang   string // a fenced block's language, "" for an indented block
	text   string
	marker string // the HTML comment on the line before it, without <!-- -->
}

func (b docBlock) String() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

// docFiles are the documents the harness reads, relative to the checkout.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	files := []string{"README.md"}
	for _, pattern := range []string{"docs/*.md", "sdk-*/README.md", "examples/README.md", "examples/*/README.md", "bundles/meos/README.md"} {
		m, _ := filepath.Glob(filepath.Join(root, pattern))
		for _, f := range m {
			rel, _ := filepath.Rel(root, f)
			if rel != "docs/PERFORMANCE.md" { // written by make bench: figures, no commands
				files = append(files, rel)
			}
		}
	}
	return files
}

var markerLine = regexp.MustCompile(`^<!--\s*(.*?)\s*-->$`)

// numberedItem begins an item of a numbered list.
var numberedItem = regexp.MustCompile(`^\d+\. `)

// parseBlocks finds the fenced and indented code blocks of a Markdown document.
func parseBlocks(file, doc string) []docBlock {
	lines := strings.Split(doc, "\n")
	markerBefore := func(i int) string {
		for j := i - 1; j >= 0; j-- {
			if strings.TrimSpace(lines[j]) == "" {
				continue
			}
			if m := markerLine.FindStringSubmatch(strings.TrimSpace(lines[j])); m != nil {
				return m[1]
			}
			return ""
		}
		return ""
	}
	var out []docBlock
	prevBlank, inList := true, false
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if fence, ok := strings.CutPrefix(strings.TrimLeft(line, " "), "```"); ok {
			j := i + 1
			for j < len(lines) && !strings.HasPrefix(strings.TrimLeft(lines[j], " "), "```") {
				j++
			}
			indent := len(line) - len(strings.TrimLeft(line, " "))
			var body []string
			for _, l := range lines[i+1 : min(j, len(lines))] {
				body = append(body, strings.TrimPrefix(l, strings.Repeat(" ", indent)))
			}
			out = append(out, docBlock{file: file, line: i + 2, lang: strings.TrimSpace(fence), text: strings.Join(body, "\n"), marker: markerBefore(i)})
			i, prevBlank = j, false
			continue
		}
		trimmed := strings.TrimSpace(line)
		// A list item's continuation is indented too; it is not code.
		if trimmed != "" && !strings.HasPrefix(line, " ") {
			inList = strings.HasPrefix(trimmed, "- ") || strings.HasPrefix(trimmed, "* ") || numberedItem.MatchString(trimmed)
		}
		if strings.HasPrefix(line, "    ") && trimmed != "" && prevBlank && !inList {
			j := i
			for j < len(lines) && (strings.HasPrefix(lines[j], "    ") || strings.TrimSpace(lines[j]) == "" && j+1 < len(lines) && strings.HasPrefix(lines[j+1], "    ")) {
				j++
			}
			var body []string
			for _, l := range lines[i:j] {
				body = append(body, strings.TrimPrefix(l, "    "))
			}
			out = append(out, docBlock{file: file, line: i + 1, text: strings.Join(body, "\n"), marker: markerBefore(i)})
			i, prevBlank = j-1, false
			continue
		}
		prevBlank = trimmed == ""
	}
	return out
}

// docEnv is what the checks of blocks share: the checkout and the node built from it.
type docEnv struct {
	root     string
	toolnode string
	snippets []string // the bodies of docs/snippets
	source   string   // the runtime's Go source, for log messages
	examples string   // a folder of the example bundles, built

	homes map[string]string // the home of each document's shell blocks, shared by them
}

func newDocEnv(t *testing.T) *docEnv {
	t.Helper()
	root := nodekit.Root(t)
	// Built from this tree, not bin/toolnode, which may be older than the docs, into the
	// bin/ of a copy of the checkout made of links, where toolnode new finds the SDKs.
	tree := t.TempDir()
	entries, _ := os.ReadDir(root)
	for _, entry := range entries {
		if entry.Name() != "bin" && !strings.HasPrefix(entry.Name(), ".") {
			os.Symlink(filepath.Join(root, entry.Name()), filepath.Join(tree, entry.Name()))
		}
	}
	bin := filepath.Join(tree, "bin", "toolnode")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/toolnode").CombinedOutput(); err != nil {
		t.Fatalf("build toolnode: %v\n%s", err, out)
	}
	e := &docEnv{root: root, toolnode: bin, homes: map[string]string{}}
	files, _ := filepath.Glob(filepath.Join(root, "docs", "snippets", "*"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if s := strings.TrimSpace(string(b)); s != "" && filepath.Base(f) != "README.md" {
			e.snippets = append(e.snippets, s)
		}
	}
	var src strings.Builder
	for _, dir := range []string{"runtime", "sdk-c/src", "bundles/meos/src"} {
		filepath.WalkDir(filepath.Join(root, dir), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") || strings.HasSuffix(p, ".c")) {
				b, _ := os.ReadFile(p)
				src.Write(b)
			}
			return nil
		})
	}
	e.source = src.String()
	e.examples = filepath.Join(root, "examples")
	return e
}

// check runs or checks one block; it returns what went wrong, or nil.
func (e *docEnv) check(t *testing.T, b docBlock) error {
	if b.marker != "" {
		return e.checkMarker(b)
	}
	text := strings.TrimSpace(b.text)
	for _, s := range e.snippets {
		if text == s || strings.Contains(s, text) && len(text) > 40 {
			return nil // the snippet tests run it
		}
	}
	switch {
	case b.lang == "json" || b.lang == "" && strings.HasPrefix(text, "{") && !strings.Contains(text, "→"):
		return checkJSON(text)
	case b.lang == "" && strings.HasPrefix(text, "{") || strings.HasPrefix(text, "{\"name\": \"meos."):
		return e.checkCalls(t, text)
	case b.lang == "python" && (strings.Contains(text, "meos.") || strings.Contains(text, "search(")) && !strings.Contains(text, "import "):
		return e.checkRun(t, text)
	case b.lang == "python":
		return checkPython(text)
	case b.lang == "http":
		return checkHTTP(text)
	case b.lang == "go":
		return checkGo(text)
	case b.lang == "c":
		return e.checkC(text)
	case logLine.MatchString(text):
		return e.checkLog(text)
	case b.lang == "text" || b.lang == "" && isOutput(text):
		return e.checkOutput(text)
	case b.lang == "" || b.lang == "sh" || b.lang == "shell" || b.lang == "bash":
		return e.checkShell(t, b.file, text)
	}
	return fmt.Errorf("a %q block neither run here nor marked <!-- not run here: REASON --> or <!-- run by PATH -->", b.lang)
}

func (e *docEnv) checkMarker(b docBlock) error {
	if reason, ok := strings.CutPrefix(b.marker, "not run here:"); ok {
		if strings.TrimSpace(reason) == "" {
			return fmt.Errorf("marked not run here without a reason")
		}
		return nil
	}
	if path, ok := strings.CutPrefix(b.marker, "run by "); ok {
		body, err := os.ReadFile(filepath.Join(e.root, strings.TrimSpace(path)))
		if err != nil {
			return fmt.Errorf("marked run by %s: %v", path, err)
		}
		if !bytes.Contains(body, []byte(filepath.Base(b.file))) && !bytes.Contains(body, []byte(strings.TrimSuffix(filepath.Base(b.file), ".md"))) {
			return fmt.Errorf("marked run by %s, which does not read %s", path, b.file)
		}
		return nil
	}
	if path, ok := strings.CutPrefix(b.marker, "lines of "); ok {
		body, err := os.ReadFile(filepath.Join(e.root, strings.TrimSpace(path)))
		if err != nil {
			return fmt.Errorf("marked lines of %s: %v", path, err)
		}
		for _, line := range strings.Split(strings.TrimSpace(b.text), "\n") {
			if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(strings.TrimSpace(line))).Match(body) {
				return fmt.Errorf("%q begins no line of %s", line, path)
			}
		}
		return nil
	}
	return fmt.Errorf("unknown marker %q before a block (want \"not run here: REASON\", \"run by PATH\" or \"lines of PATH\")", b.marker)
}

// elided are the docs' ways of leaving part of a JSON value out: {...}, "…", ", ...".
var elided = strings.NewReplacer("{...}", "{}", "[...]", "[]", ", ...]", "]", ", ...}", "}", ", ...", "", "…", "")

// checkJSON reads a JSON block as the node would read it: one value, a member of an
// object ("key": value), or one value a line (messages on stdio, audit records); parts
// left out as {...} or ", ..." are read as absent.
func checkJSON(text string) error {
	text = elided.Replace(text)
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &obj); err != nil {
		var v any
		if json.Unmarshal([]byte(text), &v) == nil || json.Unmarshal([]byte("{"+text+"}"), &v) == nil {
			return nil
		}
		for _, line := range strings.Split(text, "\n") {
			if err := json.Unmarshal([]byte(line), &v); err != nil {
				return fmt.Errorf("not JSON: %v", err)
			}
		}
		return nil
	}
	switch {
	case obj["mcpServers"] != nil || obj["servers"] != nil:
		_, _, err := manifest.ParseConfig([]byte(text), "/docs/mcp.json")
		return err
	case obj["clients"] != nil:
		// A digest left for the reader to fill in stands for one.
		for i := 0; strings.Contains(text, `"token_sha256": ""`); i++ {
			text = strings.Replace(text, `"token_sha256": ""`, fmt.Sprintf(`"token_sha256": "%064x"`, i), 1)
		}
		_, err := access.Parse([]byte(text))
		return err
	case obj["name"] != nil && (obj["command"] != nil || obj["url"] != nil):
		_, err := manifest.Parse([]byte(text), "/docs/bundle")
		return err
	}
	return nil
}

// checkGo parses a Go block: a file, else a function body.
func checkGo(text string) error {
	fset := token.NewFileSet()
	if _, err := parser.ParseFile(fset, "doc.go", text, parser.AllErrors); err == nil {
		return nil
	}
	_, err := parser.ParseFile(fset, "doc.go", "package p\nfunc _() {\n"+text+"\n}", parser.AllErrors)
	return err
}

// checkC compiles a C block against the SDK's header.
func (e *docEnv) checkC(text string) error {
	dir, err := os.MkdirTemp("", "doc-c")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "doc.c")
	if !strings.Contains(text, "#include") {
		// A part of a program: its functions, then statements that run with a server.
		if i := strings.LastIndex(text, "\n}\n"); i >= 0 && strings.TrimSpace(text[i+3:]) != "" {
			text = text[:i+3] + "\nvoid doc_statements(tn_server_t *server);\nvoid doc_statements(tn_server_t *server)\n{\n    tn_error_t error;\n" + text[i+3:] + "\n}\n"
		}
		text = "#include <stdio.h>\n#include <tn.h>\n" + text
	}
	os.WriteFile(src, []byte(text), 0o644)
	cflags, _ := exec.Command("pkg-config", "--cflags", "jansson").Output()
	args := append([]string{"-std=c11", "-Wall", "-Wextra", "-fsyntax-only", "-I" + filepath.Join(e.root, "sdk-c", "include")}, strings.Fields(string(cflags))...)
	out, err := exec.Command("cc", append(args, src)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("cc: %v\n%s", err, out)
	}
	return nil
}

// logLine is a line of the node's log as the docs quote it.
var logLine = regexp.MustCompile(`^\[(ERROR|WARN|INFO|DEBUG)\]\s+toolnode[a-z0-9.\-]*: ([^:=]+?)(: [a-z_]+=|$|: )`)

// checkLog checks each quoted log line's message is logged at its level by the runtime.
func (e *docEnv) checkLog(text string) error {
	for _, line := range strings.Split(text, "\n") {
		m := logLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		level := map[string]string{"ERROR": "Error", "WARN": "Warn", "INFO": "Info", "DEBUG": "Debug"}[m[1]]
		msg := m[2]
		if !strings.Contains(e.source, "."+level+"(\""+msg+"\"") && !strings.Contains(e.source, "."+level+"(`"+msg+"`") {
			if strings.Contains(e.source, "(\""+msg+"\"") {
				return fmt.Errorf("%q is logged, but not at [%s]", msg, m[1])
			}
			// A message formatted before it is logged (a catalog notice): its fixed parts.
			if err := e.checkOutput(msg); err != nil {
				return err
			}
		}
	}
	return nil
}

// trailingComment is a comment after a command, set off by two spaces or more.
var trailingComment = regexp.MustCompile(`\s{2,}#.*$|^\s*#.*$`)

// shellCommands splits a shell block into its commands: continuation lines joined, prompts
// and comments dropped, output lines (after a command's "$ " prompt) skipped.
func shellCommands(text string) []string {
	var out []string
	prompted := strings.Contains(text, "\n$ ") || strings.HasPrefix(text, "$ ")
	var cur string
	for _, line := range strings.Split(text, "\n") {
		if prompted {
			rest, ok := strings.CutPrefix(line, "$ ")
			if !ok && cur == "" {
				continue // output, or a listing
			}
			if ok {
				line = rest
			}
		}
		if loc := trailingComment.FindStringIndex(line); loc != nil {
			line = line[:loc[0]]
		}
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") {
			continue
		}
		if c, ok := strings.CutSuffix(line, "\\"); ok {
			cur += c + " "
			continue
		}
		cur += line
		if strings.TrimSpace(cur) != "" {
			out = append(out, strings.TrimSpace(cur))
		}
		cur = ""
	}
	return out
}

// placeholders are the docs' stand-ins, made real for a run here.
func (e *docEnv) placeholders(home string) *strings.Replacer {
	bin := filepath.Dir(e.toolnode)
	return strings.NewReplacer(
		"/opt/toolnode/bin/toolnode", e.toolnode,
		"/opt/toolnode/examples", e.examples,
		"/path/to/toolnode", e.root,
		"./my-bundles", e.examples,
		"~/bundles", filepath.Join(home, "bundles"),
		"~/", home+"/",
		"$HOME", home,
		"bin/toolnode", e.toolnode,
		" BUNDLE_DIR", " "+filepath.Join(e.examples, "go"),
		" DIR", " "+e.examples,
		"TOOL key=value ...", "go.greet name=Ada",
		"$PWD/bin", bin,
	)
}

// envPrefix is a variable set for the command that follows it.
var envPrefix = regexp.MustCompile(`^[A-Z_]+=\S+ `)

var synopsis = regexp.MustCompile(`\[|\]|\||NAME|PORT|SEAT|FILE|URL|HOST`)

// safeCommands are the shell commands a block may run as they are, in a home of its own.
var safeCommands = map[string]bool{"umask": true, "mkdir": true, "head": true, "printf": true, "ln": true, "echo": true, "chmod": true, "cat": true}

// checkShell runs or checks each command of a shell block, in a home of its own, from the
// checkout (or where the block's cd goes).
func (e *docEnv) checkShell(t *testing.T, file, text string) error {
	// A document's blocks share a home, as a reader following it does: what one writes (a
	// lock file, a token) the next reads.
	home, ok := e.homes[file]
	if !ok {
		home = t.TempDir()
		e.homes[file] = home
		os.MkdirAll(filepath.Join(home, "bundles"), 0o755)
		// The commands run in a copy of the checkout made of links to its entries, so that
		// what they write stays out of it.
		os.MkdirAll(filepath.Join(home, "checkout"), 0o755)
		entries, _ := os.ReadDir(e.root)
		for _, entry := range entries {
			if !strings.HasPrefix(entry.Name(), ".") {
				os.Symlink(filepath.Join(e.root, entry.Name()), filepath.Join(home, "checkout", entry.Name()))
			}
		}
	}
	cwd := filepath.Join(home, "checkout")
	checkout := cwd
	var cmds []string
	for _, c := range shellCommands(text) {
		cmds = append(cmds, strings.Split(c, " && ")...)
	}
	for _, cmd := range cmds {
		for envPrefix.MatchString(cmd) {
			_, cmd, _ = strings.Cut(cmd, " ") // a variable set for the command
		}
		fields := strings.Fields(cmd)
		prog := fields[0]
		real := e.placeholders(home).Replace(cmd)
		switch {
		case strings.HasSuffix(prog, "toolnode") && synopsis.MatchString(cmd):
			if err := e.checkSynopsis(cmd); err != nil {
				return err
			}
		case strings.HasSuffix(prog, "toolnode"):
			if err := e.runToolnode(t, real, cwd, home); err != nil {
				return err
			}
		case prog == "make" && cwd == checkout:
			dir := e.root
			if !strings.Contains(cmd, "-C ") && filepath.Base(file) == "README.md" {
				dir = filepath.Join(e.root, filepath.Dir(file)) // a README's make is its folder's
			}
			if err := e.dryMake(fields[1:], dir, home); err != nil {
				return err
			}
		case prog == "go" && len(fields) > 2 && (fields[1] == "test" || fields[1] == "build" || fields[1] == "vet" || fields[1] == "run"):
			if err := e.goList(fields[2:]); err != nil {
				return err
			}
		case prog == "curl":
			// Against a node serving the examples; an HTTP error status fails the command.
			url, err := e.serve(t, e.toolnode+" serve --bundles "+e.examples+" --http 127.0.0.1:0", cwd, home)
			if err != nil {
				return err
			}
			real = "curl --fail-with-body" + strings.TrimPrefix(strings.ReplaceAll(real, "http://127.0.0.1:7777/mcp", url), "curl")
			if out, err := e.shell(real, cwd, home).CombinedOutput(); err != nil {
				return fmt.Errorf("%s: %v\n%s", cmd, err, out)
			}
		case prog == "cd":
			if to := strings.Fields(real)[1]; filepath.IsAbs(to) {
				cwd = to
			} else {
				cwd = filepath.Join(cwd, to)
			}
		case prog == "export":
		case safeCommands[prog] || prog == "make":
			if out, err := e.shell(real, cwd, home).CombinedOutput(); err != nil {
				return fmt.Errorf("%s: %v\n%s", cmd, err, out)
			}
		default:
			return fmt.Errorf("no runner for %q: run it in a test of its own (<!-- run by PATH -->) or mark the block <!-- not run here: REASON -->", cmd)
		}
	}
	return nil
}

// shell returns cmd run by sh in dir, with HOME home and the node's bin/ first on PATH.
func (e *docEnv) shell(cmd, dir, home string) *exec.Cmd {
	c := exec.Command("sh", "-c", cmd)
	c.Dir = dir
	c.Env = append(os.Environ(), "HOME="+home, "PATH="+filepath.Dir(e.toolnode)+":"+os.Getenv("PATH"))
	return c
}

// checkSynopsis checks a usage line's flags against the command's own -h.
func (e *docEnv) checkSynopsis(cmd string) error {
	fields := strings.Fields(cmd)
	if len(fields) < 2 {
		return nil
	}
	help, _ := exec.Command(e.toolnode, fields[1], "-h").CombinedOutput()
	for _, flag := range regexp.MustCompile(`--?[a-z][a-z-]*`).FindAllString(cmd, -1) {
		name := strings.TrimLeft(flag, "-")
		if !regexp.MustCompile(`(?m)^\s+-` + regexp.QuoteMeta(name) + `\b`).Match(help) {
			return fmt.Errorf("%q: toolnode %s -h has no flag %s", cmd, fields[1], flag)
		}
	}
	return nil
}

var listeningURL = regexp.MustCompile(`HTTP front listening: url=(\S+)`)

// runToolnode runs a toolnode command: serve until the node is ready, anything else to its
// end, which must succeed. A command for a running node (--url at the default address) is
// given one, serving the examples.
func (e *docEnv) runToolnode(t *testing.T, cmd, dir, home string) error {
	fields := strings.Fields(cmd)
	if len(fields) > 1 && fields[1] == "serve" {
		cmd = regexp.MustCompile(`--http \S+`).ReplaceAllString(cmd, "--http 127.0.0.1:0") // the port may be taken here
		_, err := e.serve(t, cmd, dir, home)
		return err
	}
	if strings.Contains(cmd, "http://127.0.0.1:7777/mcp") {
		url, err := e.serve(t, e.toolnode+" serve --bundles "+e.examples+" --http 127.0.0.1:0", dir, home)
		if err != nil {
			return err
		}
		cmd = strings.ReplaceAll(cmd, "http://127.0.0.1:7777/mcp", url)
	}
	if out, err := e.shell(cmd, dir, home).CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v\n%s", cmd, err, out)
	}
	return nil
}

// serve starts a node as cmd says and waits until it is ready; it is stopped at the end of
// the test. It returns the URL of its HTTP front, if it has one.
func (e *docEnv) serve(t *testing.T, cmd, dir, home string) (string, error) {
	c := e.shell("exec "+cmd, dir, home)
	var logs testkit.SyncBuffer
	c.Stderr = &logs
	// A node serving stdio stops at the end of its stdin, as under a host that quit: its
	// stdin stays open until the test ends, so that it serves as it would under a host.
	stdin, hold, err := os.Pipe()
	if err != nil {
		return "", err
	}
	c.Stdin = stdin
	err = c.Start()
	stdin.Close()
	if err != nil {
		hold.Close()
		return "", err
	}
	exited := make(chan struct{})
	go func() { c.Wait(); close(exited) }()
	t.Cleanup(func() { c.Process.Kill(); <-exited; hold.Close() })
	deadline := time.After(2 * time.Minute)
	for !strings.Contains(logs.String(), "node ready") {
		select {
		case <-exited:
			return "", fmt.Errorf("%s: exited:\n%s", cmd, logs.String())
		case <-deadline:
			return "", fmt.Errorf("%s: not ready:\n%s", cmd, logs.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if strings.Contains(logs.String(), "[ERROR]") {
		return "", fmt.Errorf("%s: logged an error:\n%s", cmd, logs.String())
	}
	url := ""
	if m := listeningURL.FindStringSubmatch(logs.String()); m != nil {
		url = m[1]
	}
	return url, nil
}

// dryMake checks that make knows the targets and variables of a make command (make -n).
func (e *docEnv) dryMake(args []string, dir, home string) error {
	var clean []string
	for _, a := range args {
		clean = append(clean, strings.ReplaceAll(a, "$HOME", home))
	}
	c := exec.Command("make", append([]string{"-n"}, clean...)...)
	c.Dir = dir
	out, err := c.CombinedOutput()
	if err != nil {
		return fmt.Errorf("make -n %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// goList checks that a go command's package patterns name packages of the checkout.
func (e *docEnv) goList(args []string) error {
	var pkgs []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") {
			if !strings.Contains(a, "=") && i+1 < len(args) && !strings.HasPrefix(args[i+1], "./") {
				i++ // the flag's value
			}
			continue
		}
		pkgs = append(pkgs, a)
	}
	c := exec.Command("go", append([]string{"list"}, pkgs...)...)
	c.Dir = e.root
	if out, err := c.CombinedOutput(); err != nil {
		return fmt.Errorf("go list %s: %v\n%s", strings.Join(pkgs, " "), err, out)
	}
	return nil
}

func TestDocBlocksRunOrMarked(t *testing.T) {
	e := newDocEnv(t)
	nodekit.Examples(t, "go", "c", "python") // built, as make leaves them
	count := 0
	for _, file := range docFiles(t, e.root) {
		doc, err := os.ReadFile(filepath.Join(e.root, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range parseBlocks(file, string(doc)) {
			count++
			if err := e.check(t, b); err != nil {
				t.Errorf("%s: %v", b, err)
			}
		}
	}
	t.Logf("%d blocks", count)
}

// An edited line of a document fails the harness: a key of a bundle.json, a flag of a
// command, a level of a log line, a make target.
func TestDocHarnessFailsOnAnEditedLine(t *testing.T) {
	e := newDocEnv(t)
	for _, tt := range []struct{ name, lang, good, bad string }{
		{"a bundle.json key", "json", `{"name": "hello", "command": ["./hello"], "env": {}}`, `{"name": "hello", "command": ["./hello"], "enviroment": {}}`},
		{"a flag of a command", "", "bin/toolnode tools --bundles DIR", "bin/toolnode tools --bundle DIR"},
		{"a log line's level", "", `[WARN]  toolnode.weather: bundle failed: error="x"`, `[INFO]  toolnode.weather: bundle failed: error="x"`},
		{"a make target", "", "make install PREFIX=$HOME/.local", "make instal PREFIX=$HOME/.local"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := e.check(t, docBlock{file: "edited.md", lang: tt.lang, text: tt.good}); err != nil {
				t.Fatalf("the line as written fails: %v", err)
			}
			if err := e.check(t, docBlock{file: "edited.md", lang: tt.lang, text: tt.bad}); err == nil {
				t.Errorf("the edited line %q passes", tt.bad)
			}
		})
	}
}

// quotedOrFigure matches what a message fills in: quoted values, numbers and durations, and
// the docs' elisions.
var quotedOrFigure = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|\b[0-9][0-9a-z.]*\b|\.\.\.|…|/[A-Za-z0-9_./-]+`)

// isOutput reports whether a block is what a program printed rather than commands: its
// first word is no program of this machine and not a toolnode command.
func isOutput(text string) bool {
	first := strings.Fields(text)[0]
	if strings.HasPrefix(text, "$ ") || strings.Contains(text, "\n$ ") {
		return false // commands, and what they print
	}
	if strings.HasSuffix(first, "toolnode") || strings.Contains(first, "=") || first == "$" {
		return false
	}
	_, err := exec.LookPath(first)
	return err != nil && first != "cd" && first != "export" && first != "umask"
}

// checkOutput checks that the fixed parts of each printed line (what is left between the
// values a message fills in) are in the runtime's code.
func (e *docEnv) checkOutput(text string) error {
	for _, line := range strings.Split(text, "\n") {
		for _, part := range quotedOrFigure.Split(line, -1) {
			part = strings.Trim(part, " ():;,.'?")
			if len(part) < 12 || strings.ContainsAny(part, "→[]{}|") {
				continue // a table, a value, or too short to say anything
			}
			if !strings.Contains(e.source, part) {
				return fmt.Errorf("no code prints %q (from %q)", part, strings.TrimSpace(line))
			}
		}
	}
	return nil
}

// checkPython parses a Python block that needs what is not here to run (a tracing
// library, the caller's own code).
func checkPython(text string) error {
	c := exec.Command("python3", "-c", "import ast, sys; ast.parse(sys.stdin.read())")
	c.Stdin = strings.NewReader(text)
	if out, err := c.CombinedOutput(); err != nil {
		return fmt.Errorf("python3 cannot parse it: %v\n%s", err, out)
	}
	return nil
}

// meosBundles returns the folder of the MEOS bundle, built, or "" when make has not
// built it.
func (e *docEnv) meosBundles() string {
	if _, err := os.Stat(filepath.Join(e.root, "bundles", "meos", "build", "meos-bundle")); err != nil {
		return ""
	}
	return filepath.Join(e.root, "bundles")
}

// checkRun runs a toolnode.run program of the docs against the MEOS bundle: it must not
// fail.
func (e *docEnv) checkRun(t *testing.T, code string) error {
	bundles := e.meosBundles()
	if bundles == "" {
		t.Logf("a toolnode.run program not run: bundles/meos is not built (make bundles)")
		return nil
	}
	args, _ := json.Marshal(map[string]string{"code": code})
	out, err := exec.Command(e.toolnode, "call", "toolnode.run", "--json", string(args), "--bundles", bundles).CombinedOutput()
	if err != nil {
		return fmt.Errorf("toolnode.run: %v\n%s", err, out)
	}
	return nil
}

// checkCalls makes the calls of a block of `{"name": ..., "arguments": ...}` lines, each
// followed by "→ result", against the MEOS bundle, and compares the results.
func (e *docEnv) checkCalls(t *testing.T, text string) error {
	bundles := e.meosBundles()
	if bundles == "" {
		t.Logf("MEOS calls not run: bundles/meos is not built (make bundles)")
		return nil
	}
	call, want, _ := strings.Cut(text, "→")
	var req struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal([]byte(elided.Replace(call)), &req); err != nil {
		return fmt.Errorf("the call is not JSON: %v", err)
	}
	out, err := exec.Command(e.toolnode, "call", req.Name, "--json", string(req.Arguments), "--bundles", bundles).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v\n%s", req.Name, err, out)
	}
	got, wantText := strings.Join(strings.Fields(string(out)), ""), strings.Join(strings.Fields(want), "")
	if strings.Contains(wantText, "...") || strings.Contains(wantText, "…") {
		return nil // the doc shows part of it
	}
	var gv, wv any
	if json.Unmarshal([]byte(got), &gv) == nil && json.Unmarshal([]byte(wantText), &wv) == nil {
		gj, _ := json.Marshal(gv)
		wj, _ := json.Marshal(wv)
		got, wantText = string(gj), string(wj)
	}
	if got != wantText {
		return fmt.Errorf("%s answered %s, the doc says %s", req.Name, got, wantText)
	}
	return nil
}

// checkHTTP holds an HTTP request of the docs to what the node's front requires of a POST
// to /mcp: JSON (else 415), both answer types accepted (else 406), and an Mcp-Method header,
// if any, naming the body's method.
func checkHTTP(text string) error {
	head, body, _ := strings.Cut(text, "\n\n")
	lines := strings.Split(head, "\n")
	if !strings.HasPrefix(lines[0], "POST /mcp ") {
		return nil
	}
	header := map[string]string{}
	for _, l := range lines[1:] {
		k, v, _ := strings.Cut(l, ":")
		header[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
	}
	if header["content-type"] != "application/json" {
		return fmt.Errorf("a POST without Content-Type: application/json, which the node answers 415")
	}
	if a := header["accept"]; !strings.Contains(a, "application/json") && !strings.Contains(a, "text/event-stream") {
		return fmt.Errorf("a POST whose Accept has neither application/json nor text/event-stream, which the node answers 406")
	}
	var msg struct {
		Method string `json:"method"`
	}
	if err := json.Unmarshal([]byte(elided.Replace(body)), &msg); err != nil {
		return fmt.Errorf("the body is not JSON: %v", err)
	}
	if m, ok := header["mcp-method"]; ok && m != msg.Method {
		return fmt.Errorf("Mcp-Method %q, the body's method %q", m, msg.Method)
	}
	return nil
}

// The README's tables of serve's flags and of bundle.json's keys hold every flag `toolnode
// serve -h` lists and every key the manifest reader knows.
func TestReadmeTablesHoldEveryFlagAndKey(t *testing.T) {
	e := newDocEnv(t)
	readme, err := os.ReadFile(filepath.Join(e.root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var rows strings.Builder
	for _, line := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(line, "| `") {
			rows.WriteString(strings.SplitN(line, " | ", 2)[0] + "\n")
		}
	}
	help, _ := exec.Command(e.toolnode, "serve", "-h").CombinedOutput()
	for _, m := range regexp.MustCompile(`(?m)^\s+-([a-z][a-z0-9-]*)`).FindAllStringSubmatch(string(help), -1) {
		flag := "--" + m[1]
		if !regexp.MustCompile(regexp.QuoteMeta(flag) + `\b[^-]`).MatchString(rows.String()) {
			t.Errorf("README.md's table of flags has no row for %s", flag)
		}
	}
	_, err = manifest.Parse([]byte(`{"name": "x", "command": ["x"], "no such key": 1}`), "/x")
	known, _ := strings.CutPrefix(regexp.MustCompile(`known keys: ([^)]*)`).FindString(fmt.Sprint(err)), "known keys: ")
	if known == "" {
		t.Fatalf("the manifest reader's error names no known keys: %v", err)
	}
	for _, key := range strings.Split(known, ", ") {
		if !strings.Contains(rows.String(), "`"+key+"`") {
			t.Errorf("README.md's bundle.json table has no row for %s", key)
		}
	}
}
