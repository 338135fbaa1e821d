package meos_test

import (
	"bytes"
	"debug/elf"
	"debug/macho"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Mach-O nlist type bits (<mach-o/nlist.h>).
const (
	machoNExt  = 0x01
	machoNType = 0x0e
	machoNSect = 0x0e
	machoNPExt = 0x10
)

// TestMacOSWheelExportsWhatTheBundleCalls: the macOS arm64 wheel, downloaded and unpacked
// by the Makefile's own macOS rules (darwin.mk, through make darwin-wheel), holds an arm64
// libmeos whose libraries are all beside it, and which exports every MEOS function the
// bundle calls. A Mac's linker checks that when it links the bundle; this checks it here:
// the functions are those the Linux binary takes from the Linux libmeos (what the Linux
// link resolved), and every prototype of src/meos_decl.h.
func TestMacOSWheelExportsWhatTheBundleCalls(t *testing.T) {
	cmd := exec.Command("make", "-s", "darwin-wheel")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("make darwin-wheel: %v\n%s", err, stderr.String())
	}
	lib := strings.TrimSpace(string(out))
	f, err := macho.Open(lib)
	if err != nil {
		t.Fatalf("the libmeos the macOS rules name: %v", err)
	}
	defer f.Close()
	if f.Cpu != macho.CpuArm64 || f.Type != macho.TypeDylib {
		t.Fatalf("%s is a %v %v, want an arm64 dylib", lib, f.Cpu, f.Type)
	}
	// What the binary's @loader_path names resolve against is libmeos's folder.
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range libs {
		if rest, ok := strings.CutPrefix(l, "@loader_path/"); ok {
			if _, err := os.Stat(filepath.Join(filepath.Dir(lib), rest)); err != nil {
				t.Errorf("libmeos loads %s, which the wheel does not have beside it", l)
			}
		} else if !strings.HasPrefix(l, "/usr/lib/") && !strings.HasPrefix(l, "/System/") {
			t.Errorf("libmeos loads %s, which is neither in the wheel nor the system's", l)
		}
	}
	exports := map[string]bool{}
	for _, s := range f.Symtab.Syms {
		if s.Type&machoNExt != 0 && s.Type&machoNPExt == 0 && s.Type&machoNType == machoNSect {
			exports[strings.TrimPrefix(s.Name, "_")] = true
		}
	}

	called := linuxCalls(t)
	for _, name := range declared(t, "src/meos_decl.h") {
		if !slices.Contains(called, name) {
			called = append(called, name)
		}
	}
	var missing []string
	for _, name := range called {
		if !exports[name] {
			missing = append(missing, name)
		}
	}
	t.Logf("the macOS libmeos exports %d symbols; the bundle calls %d MEOS functions", len(exports), len(called))
	if len(missing) > 0 {
		t.Errorf("the macOS libmeos lacks %d functions the bundle calls: %v", len(missing), missing)
	}
}

// linuxCalls returns the functions the Linux bundle binary takes from the Linux libmeos.
func linuxCalls(t *testing.T) []string {
	t.Helper()
	bin, err := elf.Open(filepath.Join("build", "meos-bundle"))
	if err != nil {
		t.Fatal(err)
	}
	defer bin.Close()
	imports, err := bin.ImportedSymbols()
	if err != nil {
		t.Fatal(err)
	}
	sos, _ := filepath.Glob(filepath.Join("build", "pymeos", "pymeos_cffi.libs", "libmeos-*.so"))
	if len(sos) != 1 {
		t.Fatalf("want one Linux libmeos under build/pymeos, have %v", sos)
	}
	so, err := elf.Open(sos[0])
	if err != nil {
		t.Fatal(err)
	}
	defer so.Close()
	syms, err := so.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	for _, s := range syms {
		if s.Section != elf.SHN_UNDEF && elf.ST_BIND(s.Info) != elf.STB_LOCAL {
			defined[s.Name] = true
		}
	}
	var out []string
	for _, s := range imports {
		if defined[s.Name] {
			out = append(out, s.Name)
		}
	}
	if len(out) == 0 {
		t.Fatal("the Linux bundle takes no function from libmeos: not the bundle this test knows")
	}
	return out
}

// declared returns the names of the functions a header declares: a prototype is a line
// "type name(params);", possibly over several lines.
func declared(t *testing.T, header string) []string {
	t.Helper()
	b, err := os.ReadFile(header)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^[A-Za-z_][\w \t]*?[\s*](\w+)\(([^;{)]|\n)*\);`)
	var out []string
	for _, m := range re.FindAllSubmatch(b, -1) {
		if !bytes.HasPrefix(m[0], []byte("typedef")) {
			out = append(out, string(m[1]))
		}
	}
	if len(out) == 0 {
		t.Fatalf("no prototype found in %s", header)
	}
	return out
}
