package access

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// checkParse holds whatever Parse makes of data to the rules a policy must keep.
func checkParse(t *testing.T, data []byte) {
	p, err := Parse(data)
	if err != nil {
		var fe *FileError
		if !errors.As(err, &fe) || len(fe.Problems) == 0 {
			t.Fatalf("Parse(%q): %v, want a *FileError with problems", data, err)
		}
		for _, pr := range fe.Problems {
			if strings.TrimSpace(pr) == "" {
				t.Fatalf("Parse(%q): an empty problem", data)
			}
		}
		return
	}
	if len(p.Clients()) == 0 {
		t.Fatalf("Parse(%q): a policy without clients", data)
	}
	names := map[string]bool{}
	for _, c := range p.Clients() {
		if c.Name == "" || names[c.Name] {
			t.Fatalf("Parse(%q): client name %q empty or repeated", data, c.Name)
		}
		names[c.Name] = true
		if got, ok := p.Client(c.Name); !ok || got != c {
			t.Fatalf("Parse(%q): Client(%q) does not find it", data, c.Name)
		}
		for _, name := range []string{"", "a", "meos.speed", "toolnode.search", strings.Join(c.Allow, ".")} {
			_ = c.Allowed(name)
		}
	}
	if c, ok := p.Authenticate("no such token"); ok {
		t.Fatalf("Parse(%q): a made-up token authenticated as %q", data, c.Name)
	}
}

// FuzzParse: run with go test -fuzz FuzzParse ./runtime/access (make fuzz); its seed
// corpus, testdata/fuzz/FuzzParse and the files of testdata/valid and invalid, runs with
// every go test.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/*.json")
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(checkParse)
}

// TestParseMutations is a bounded fuzz that runs with every go test: random byte edits of
// the testdata files, from a fixed seed, so a failure is repeatable.
func TestParseMutations(t *testing.T) {
	files, _ := filepath.Glob("testdata/*/*.json")
	var seeds [][]byte
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	r := rand.New(rand.NewPCG(16, 3))
	alphabet := []byte(`{}[]",:*?. aA0fz-_\` + "\x00\xff")
	for i := 0; i < 3000; i++ {
		b := append([]byte(nil), seeds[r.IntN(len(seeds))]...)
		for range 1 + r.IntN(4) {
			if len(b) == 0 {
				break
			}
			at := r.IntN(len(b))
			switch r.IntN(3) {
			case 0:
				b[at] = alphabet[r.IntN(len(alphabet))]
			case 1:
				b = append(b[:at], b[at+1:]...)
			case 2:
				b = append(b[:at], append([]byte{alphabet[r.IntN(len(alphabet))]}, b[at:]...)...)
			}
		}
		checkParse(t, b)
	}
}

// FuzzGlob holds the matcher to the regular expression the documented rules describe.
func FuzzGlob(f *testing.F) {
	for _, s := range [][2]string{{"meos.*", "meos.speed"}, {"*.status", "a.b.status"}, {"?.g*", "c.greet"}, {"a*b*c", "abbbc"}, {"**?", "x"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pat, name string) {
		p, err := ParsePattern(pat)
		if err != nil {
			return
		}
		var re strings.Builder
		re.WriteString(`\A(?s:`)
		for _, r := range pat {
			switch r {
			case '*':
				re.WriteString(".*")
			case '?':
				re.WriteString(".")
			default:
				re.WriteString(regexp.QuoteMeta(string(r)))
			}
		}
		re.WriteString(`)\z`)
		// The matcher works on bytes, as tool names are ASCII; compare on ASCII names.
		for i := 0; i < len(name); i++ {
			if name[i] >= 0x80 {
				return
			}
		}
		if want := regexp.MustCompile(re.String()).MatchString(name); p.Match(name) != want {
			t.Fatalf("%q.Match(%q) = %v, want %v", pat, name, !want, want)
		}
	})
}
