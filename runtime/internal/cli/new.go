package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolnode/toolnode/runtime/internal/scaffold"
)

func newCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("new", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seat := fs.String("seat", "", "declare `SEAT` and implement its verb <SEAT>.on")
	dir := fs.String("dir", ".", "create the bundle in `DIR`/NAME")
	sdk := fs.String("sdk", "", "the toolnode checkout to build against, `ROOT` (default: the one this toolnode was built in)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, `Usage: toolnode new %s [PATH/]NAME [--seat SEAT] [--dir DIR]

Creates a bundle directory from our SDKs: bundle.json, the source, a Makefile that builds it,
and a test. It answers the tool hello (and <SEAT>.on with --seat) as soon as it is built.
As with cargo new, path/to/demo creates the folder path/to/demo for the bundle named demo.

Flags:
`, strings.Join(scaffold.Languages(), "|"))
		fs.PrintDefaults()
	}
	positional, code, done := parseInterspersed(fs, args)
	if done {
		return code
	}
	if len(positional) != 2 {
		fs.Usage()
		return ExitUsage
	}
	root := *sdk
	if root == "" {
		var err error
		if root, err = checkoutRoot(); err != nil {
			fmt.Fprintf(stderr, "toolnode new: %v; give --sdk ROOT\n", err)
			return ExitUsage
		}
	}
	root, _ = filepath.Abs(root)
	name, parent := splitBundlePath(positional[1], *dir)
	out, err := scaffold.Create(scaffold.Options{Lang: positional[0], Name: name, Seat: *seat, Dir: parent, SDKRoot: root})
	if err != nil {
		fmt.Fprintf(stderr, "toolnode new: %v\n", err)
		return ExitError
	}
	fmt.Fprintf(stdout, "created %s\n\nnext:\n  make -C %s          # build\n  make -C %s test     # test\n  toolnode check %s    # check it as the node will run it\n  toolnode serve --bundles %s\n",
		out, out, out, out, filepath.Dir(out))
	return ExitOK
}

// splitBundlePath reads the NAME argument of new, which may be a path: its last element
// names the bundle, and the rest is the folder to create it in, under dir unless absolute.
func splitBundlePath(arg, dir string) (name, parent string) {
	clean := filepath.Clean(arg)
	name, parent = filepath.Base(clean), filepath.Dir(clean)
	if !filepath.IsAbs(parent) {
		parent = filepath.Join(dir, parent)
	}
	return name, parent
}

// checkoutRoot finds the toolnode checkout this binary lives in (ROOT/bin/toolnode).
func checkoutRoot() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return "", err
	}
	root := filepath.Dir(filepath.Dir(exe))
	if _, err := os.Stat(filepath.Join(root, "sdk-go", "bundle")); err != nil {
		return "", fmt.Errorf("cannot find the SDKs next to %s", exe)
	}
	return root, nil
}
