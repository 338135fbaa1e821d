// Package scaffold creates the starting point of a new bundle: a manifest, a source file
// with one tool, a Makefile, a test and a README, written with one of toolnode's SDKs.
//
// The files are text/template files embedded from templates/: templates/common serves every
// language, templates/<lang> one of them. Each file drops its ".tmpl" suffix when written
// (the suffix keeps the Go tool from reading the templates as packages or modules).
package scaffold

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"text/template"
	"unicode"

	"github.com/toolnode/toolnode/runtime/internal/manifest"
	"github.com/toolnode/toolnode/runtime/internal/version"
)

//go:embed templates
var templateFS embed.FS

// sdkModule is the module path of the Go SDK a Go bundle builds against. Its go.mod requires
// the release of this node (version.Tag), which a module proxy serves once tagged; the
// go.work written beside it builds against the checkout's sdk-go instead.
const sdkModule = "github.com/toolnode/toolnode/sdk-go"

// Options says what Create makes. Lang, Name and SDKRoot are required.
type Options struct {
	// Lang is the SDK the bundle is written with: "go", "c" or "python".
	Lang string
	// Name names the bundle and its folder: 1 to 64 of A-Z a-z 0-9 _ -.
	Name string
	// Seat, when set, is declared in the manifest, and the bundle implements <Seat>.on
	// besides its own tool hello. Same rule as Name.
	Seat string
	// Dir is the folder the bundle is created in, as Dir/Name. Default: the current
	// directory.
	Dir string
	// SDKRoot is the absolute path of the toolnode checkout whose SDK the bundle builds
	// against: a Go bundle's go.work uses its sdk-go module, a C bundle links its
	// sdk-c/build/libtn.a, a Python bundle imports from its sdk-python/src.
	SDKRoot string
}

// Languages returns the values Options.Lang may take.
func Languages() []string { return []string{"go", "c", "python"} }

// language is what differs between the SDKs outside the templates.
type language struct {
	title string
	// sdkPath is a path under the SDK root that must exist for the SDK to be there.
	sdkPath string
	// command is the manifest's command for a bundle named name.
	command func(name string) []string
}

func lookupLanguage(lang string) (language, bool) {
	binary := func(name string) []string { return []string{"./build/" + name} }
	switch lang {
	case "go":
		return language{title: "Go", sdkPath: "sdk-go/bundle", command: binary}, true
	case "c":
		return language{title: "C", sdkPath: "sdk-c/include/tn.h", command: binary}, true
	case "python":
		return language{title: "Python", sdkPath: "sdk-python/src/toolnode_sdk/__init__.py",
			command: func(string) []string { return []string{"python3", "./server.py"} }}, true
	}
	return language{}, false
}

// data is what the templates see.
type data struct {
	Lang, LangTitle string
	Name, Seat      string
	Command         []string
	// SDKRoot is the toolnode checkout; Parent the folder holding the bundle.
	SDKRoot, Parent string
	// GoModule, GoVersion, SDKModule and SDKVersion fill a Go bundle's go.mod and go.work.
	GoModule, GoVersion, SDKModule, SDKVersion string
}

// Create writes a new bundle to opts.Dir/opts.Name and returns that folder's absolute path.
// It refuses to write into an existing folder that is not empty. On failure nothing it wrote
// is left behind.
func Create(opts Options) (dir string, err error) {
	lang, ok := lookupLanguage(opts.Lang)
	if !ok {
		return "", fmt.Errorf("unknown language %q: use %s", opts.Lang, strings.Join(Languages(), ", "))
	}
	if !manifest.ValidName(opts.Name) {
		return "", fmt.Errorf("bad bundle name %q: use 1 to 64 of A-Z a-z 0-9 _ -", opts.Name)
	}
	if opts.Seat != "" && !manifest.ValidName(opts.Seat) {
		return "", fmt.Errorf("bad seat %q: use 1 to 64 of A-Z a-z 0-9 _ -", opts.Seat)
	}
	root, err := checkSDKRoot(opts.SDKRoot, lang)
	if err != nil {
		return "", err
	}
	parent := opts.Dir
	if parent == "" {
		parent = "."
	}
	if parent, err = filepath.Abs(parent); err != nil {
		return "", fmt.Errorf("bundle folder %s: %w", opts.Dir, err)
	}
	d := data{
		Lang: opts.Lang, LangTitle: lang.title,
		Name: opts.Name, Seat: opts.Seat, Command: lang.command(opts.Name),
		SDKRoot: root, Parent: parent,
	}
	if opts.Lang == "go" {
		if d.GoVersion, err = goVersion(root); err != nil {
			return "", err
		}
		d.GoModule = goModule(opts.Name)
		d.SDKModule, d.SDKVersion = sdkModule, version.Tag
	}
	files, err := render(d)
	if err != nil {
		return "", err
	}
	dir = filepath.Join(parent, opts.Name)
	// The node's own rules have the last word (a reserved name, say).
	for _, f := range files {
		if f.name == manifest.FileName {
			if _, err := manifest.Parse(f.data, dir); err != nil {
				return "", fmt.Errorf("%s: %w", manifest.FileName, err)
			}
		}
	}
	if err := write(dir, files); err != nil {
		return "", err
	}
	return dir, nil
}

// checkSDKRoot returns root cleaned, once it is sure the SDK for lang is there and the path
// can be written into Makefiles and sources as it is.
func checkSDKRoot(root string, lang language) (string, error) {
	if !filepath.IsAbs(root) {
		return "", fmt.Errorf("SDK root %q: want the absolute path of a toolnode checkout", root)
	}
	if i := strings.IndexFunc(root, unsafeInFiles); i >= 0 {
		return "", fmt.Errorf("SDK root %q: a Makefile or a source file cannot hold the path as it is because of %q; use a path without it (a symbolic link will do)",
			root, root[i:i+1])
	}
	root = filepath.Clean(root)
	if _, err := os.Stat(filepath.Join(root, lang.sdkPath)); err != nil {
		return "", fmt.Errorf("SDK root %s has no %s SDK (%s): %w", root, lang.title, lang.sdkPath, err)
	}
	return root, nil
}

// unsafeInFiles reports the characters that make or the shell would read as syntax, or that
// would end a string literal in the generated sources.
func unsafeInFiles(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsControl(r) || strings.ContainsRune("\"'`\\$#%:;*?[]()&|<>", r)
}

// goVersion reads the go directive of the checkout's sdk-go/go.mod, which a bundle building
// against that module must meet.
func goVersion(root string) (string, error) {
	p := filepath.Join(root, "sdk-go", "go.mod")
	b, err := os.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("SDK root: %w", err)
	}
	var module, version string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == "module" {
			module = strings.Trim(f[1], `"`)
		}
		if len(f) == 2 && f[0] == "go" {
			version = f[1]
		}
	}
	if module != sdkModule {
		return "", fmt.Errorf("SDK root: %s is the module %q, not %s", p, module, sdkModule)
	}
	if version == "" {
		return "", fmt.Errorf("SDK root: %s has no go directive", p)
	}
	return version, nil
}

// goModule is the module path of a Go bundle: its name, unless the name starts with a dash,
// which Go refuses at the start of a path element.
func goModule(name string) string {
	if strings.HasPrefix(name, "-") {
		return "bundle" + name
	}
	return name
}

// file is a rendered template: its name inside the bundle folder and its content.
type file struct {
	name string
	data []byte
}

// render executes the common templates and those of d.Lang.
func render(d data) ([]file, error) {
	funcs := template.FuncMap{"jsonList": func(items []string) (string, error) {
		quoted := make([]string, len(items))
		for i, s := range items {
			b, err := json.Marshal(s)
			if err != nil {
				return "", err
			}
			quoted[i] = string(b)
		}
		return "[" + strings.Join(quoted, ", ") + "]", nil
	}}
	var files []file
	for _, folder := range []string{"templates/common", "templates/" + d.Lang} {
		entries, err := fs.ReadDir(templateFS, folder)
		if err != nil {
			return nil, fmt.Errorf("templates: %w", err)
		}
		for _, e := range entries {
			src, err := fs.ReadFile(templateFS, path.Join(folder, e.Name()))
			if err != nil {
				return nil, fmt.Errorf("templates: %w", err)
			}
			t, err := template.New(e.Name()).Option("missingkey=error").Funcs(funcs).Parse(string(src))
			if err != nil {
				return nil, fmt.Errorf("template %s/%s: %w", folder, e.Name(), err)
			}
			var buf bytes.Buffer
			if err := t.Execute(&buf, d); err != nil {
				return nil, fmt.Errorf("template %s/%s: %w", folder, e.Name(), err)
			}
			files = append(files, file{name: strings.TrimSuffix(e.Name(), ".tmpl"), data: buf.Bytes()})
		}
	}
	return files, nil
}

// write creates dir (or takes it when it exists and is empty) and writes files into it. On
// failure it removes what it created.
func write(dir string, files []file) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("create the parent folder: %w", err)
	}
	created := true
	if err := os.Mkdir(dir, 0o755); errors.Is(err, fs.ErrExist) {
		created = false
		if err := checkEmpty(dir); err != nil {
			return err
		}
	} else if err != nil {
		return fmt.Errorf("create the bundle folder: %w", err)
	}
	for i, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, 0o644); err != nil {
			if created {
				os.RemoveAll(dir)
			} else {
				for _, done := range files[:i+1] {
					os.Remove(filepath.Join(dir, done.name))
				}
			}
			return fmt.Errorf("write the bundle: %w", err)
		}
	}
	return nil
}

func checkEmpty(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("bundle folder: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s already exists and is not a folder", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("bundle folder: %w", err)
	}
	if len(entries) > 0 {
		return fmt.Errorf("%s already exists and is not empty: choose another name or folder", dir)
	}
	return nil
}
