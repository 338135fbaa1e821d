package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/access"
	"github.com/toolnode/toolnode/runtime/internal/pin"
)

const pinUsage = `Usage: toolnode pin [--bundles DIR]... [--config FILE] [--lock FILE] [--diff | --accept NAME|PATTERN...]

Starts the bundles in-process, as toolnode manifest does, and pins their tools: writes the
lock file with every tool's canonical name, its bundle, and the digest of its definition
(title, description, input and output schemas, annotations, _meta.ui). A node serving with
--lock FILE serves only the tools it pins, as it pins them; a changed or new tool is held
back (not listed, not callable) until it is accepted here.

  toolnode pin                  pin every tool as it is now (writes the file anew)
  toolnode pin --diff           show what is held back and why, line by line, and the
                                tools pinned that no bundle serves; exit status 1 if any
  toolnode pin --accept NAME    pin NAME as it is now (a glob: * any run of characters,
                                ? one; may be repeated); a pinned tool matching it that no
                                bundle serves is forgotten. A node watching the file
                                serves the tool at once.

Flags:
`

func pinCommand(args []string, stdout, stderr io.Writer) int {
	var t targetFlags
	var accept listFlag
	fs := flag.NewFlagSet("pin", flag.ContinueOnError)
	fs.SetOutput(stderr)
	t.registerLocal(fs)
	lockPath := fs.String("lock", pin.FileName, "the lock `FILE`")
	diff := fs.Bool("diff", false, "show what the lock holds back instead of writing it")
	fs.Var(&accept, "accept", "pin the tools matching `NAME|PATTERN` as they are now (may be repeated)")
	fs.Usage = func() {
		fmt.Fprint(stderr, pinUsage)
		fs.PrintDefaults()
	}
	if code, done := parse(fs, args, stderr); done {
		return code
	}
	switch {
	case len(t.bundles) == 0 && t.config == "":
		fmt.Fprintln(stderr, "toolnode pin: say where the bundles are: --bundles DIR or --config FILE")
		return ExitUsage
	case *diff && len(accept) > 0:
		fmt.Fprintln(stderr, "toolnode pin: give --diff or --accept, not both")
		return ExitUsage
	}
	for _, p := range accept {
		if _, err := access.ParsePattern(p); err != nil {
			fmt.Fprintf(stderr, "toolnode pin: --accept %q: %v\n", p, err)
			return ExitUsage
		}
	}
	return t.with("pin", 2*time.Minute, stderr, func(ctx context.Context, tgt target) int {
		n := tgt.(localTarget).n
		// A bundle that did not start would have its tools missing: nothing to pin by.
		if !allStarted(n, "pin", stderr) {
			return ExitError
		}
		served := n.Served(n.Catalog())
		switch {
		case *diff:
			return pinDiff(*lockPath, served, stdout, stderr)
		case len(accept) > 0:
			return pinAccept(*lockPath, served, accept, stdout, stderr)
		}
		l, err := pin.New(served)
		if err == nil {
			err = l.Write(*lockPath)
		}
		if err != nil {
			fmt.Fprintf(stderr, "toolnode pin: %v\n", err)
			return ExitError
		}
		fmt.Fprintf(stdout, "pinned %d tools in %s\n", len(l.Tools), *lockPath)
		return ExitOK
	})
}

// pinDiff prints what the lock at path holds back of served, and what it pins that no
// bundle serves: exit status 1 when there is any.
func pinDiff(path string, served []pin.Tool, stdout, stderr io.Writer) int {
	l, err := pin.Read(path)
	if err != nil {
		fmt.Fprintf(stderr, "toolnode pin: %v\n", err)
		return ExitError
	}
	r := l.Check(served)
	if len(r.Held) == 0 && len(r.Missing) == 0 {
		fmt.Fprintf(stdout, "every tool served is pinned as it is in %s\n", path)
		return ExitOK
	}
	for _, h := range r.Held {
		fmt.Fprintf(stdout, "held back: %s (- pinned, + now):\n", h)
		for _, line := range strings.SplitAfter(strings.TrimRight(h.Diff, "\n"), "\n") {
			fmt.Fprintf(stdout, "    %s", strings.TrimRight(line, "\n")+"\n")
		}
	}
	for _, name := range r.Missing {
		fmt.Fprintf(stdout, "pinned but not served: tool %q is in %s, and no bundle serves it\n", name, path)
	}
	return ExitError
}

// pinAccept pins the served tools matching patterns as they are now, in the lock at path.
func pinAccept(path string, served []pin.Tool, patterns []string, stdout, stderr io.Writer) int {
	l, err := pin.Read(path)
	if err != nil {
		fmt.Fprintf(stderr, "toolnode pin: %v\n", err)
		return ExitError
	}
	pinned, forgot, err := l.Accept(served, patterns)
	if err == nil && len(pinned)+len(forgot) > 0 {
		err = l.Write(path)
	}
	if err != nil {
		fmt.Fprintf(stderr, "toolnode pin: %v\n", err)
		return ExitError
	}
	if len(pinned)+len(forgot) == 0 {
		fmt.Fprintf(stderr, "toolnode pin: --accept %s: no tool held back or pinned but not served matches; toolnode pin --diff lists them\n", strings.Join(patterns, " "))
		return ExitError
	}
	for _, name := range pinned {
		fmt.Fprintf(stdout, "pinned %s\n", name)
	}
	for _, name := range forgot {
		fmt.Fprintf(stdout, "forgot %s (no bundle serves it)\n", name)
	}
	return ExitOK
}
