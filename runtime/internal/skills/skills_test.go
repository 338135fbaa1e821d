package skills_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/toolnode/toolnode/runtime/internal/skills"
)

func TestABundlesEntryIsRenamedUnderItsNameAndNothingElseChanges(t *testing.T) {
	own := `{"uri":"skill://acme/refunds/SKILL.md","frontmatter":{"name":"refunds","description":"d","x-extra":[1,2]},` +
		`"resources":[{"uri":"skill://acme/refunds/SKILL.md","digest":"sha256:aa","size":3},{"uri":"skill://acme/refunds/a.md","digest":"sha256:bb","size":4}]}`
	sk, err := skills.Rename("billing", json.RawMessage(own))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.ReplaceAll(own, "skill://acme/", "skill://billing/acme/")
	if canon(sk.Entry) != canon([]byte(want)) {
		t.Errorf("renamed\n%s\nwant\n%s", sk.Entry, want)
	}
	if bundle, back, ok := skills.Split(sk.URI); !ok || bundle != "billing" || back != "skill://acme/refunds/SKILL.md" {
		t.Errorf("Split(%s) = %s %s %v", sk.URI, bundle, back, ok)
	}
	if _, err := skills.Rename("b", json.RawMessage(`{"uri":"skill://x/SKILL.md","frontmatter":{"name":"x","description":"d"},"resources":"dynamic"}`)); err != nil {
		t.Errorf("a dynamic skill: %v", err)
	}
	for _, bad := range []string{
		`{"uri":"github://o/r/x/SKILL.md","frontmatter":{},"resources":"dynamic"}`,
		`{"uri":"skill://x/SKILL.md","frontmatter":{},"resources":"static"}`,
		`{"uri":"skill://x/SKILL.md","frontmatter":{}}`,
		`{"uri":"skill://x/README.md","frontmatter":{},"resources":"dynamic"}`,
	} {
		if _, err := skills.Rename("b", json.RawMessage(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

func TestPagesFollowTheirCursorsToTheEnd(t *testing.T) {
	var all []skills.Skill
	for _, name := range []string{"c", "a", "b", "d"} {
		uri := "skill://x/" + name + "/SKILL.md"
		all = append(all, skills.Skill{Bundle: "x", URI: uri, Entry: json.RawMessage(`"` + uri + `"`)})
	}
	set := skills.NewSet(all)
	var got []string
	cursor := ""
	for range 10 {
		page, next, err := set.Page(cursor, 1, func(_, uri string) bool { return !strings.Contains(uri, "/c/") })
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range page {
			got = append(got, string(p))
		}
		if cursor = next; cursor == "" {
			break
		}
	}
	if strings.Join(got, " ") != `"skill://x/a/SKILL.md" "skill://x/b/SKILL.md" "skill://x/d/SKILL.md"` {
		t.Errorf("pages gave %v", got)
	}
	if _, _, err := set.Page("%%%", 1, nil); err == nil {
		t.Error("a cursor that is not one was taken")
	}
}

func TestFrontmatterIsEveryFieldAsWritten(t *testing.T) {
	fm, err := skills.Frontmatter([]byte("---\r\nname: a\r\ndescription: >\r\n  two\r\n  lines\r\nallowed-tools: Read Bash\r\n---\r\nbody"))
	if err != nil || string(fm) != `{"allowed-tools":"Read Bash","description":"two lines\n","name":"a"}` {
		t.Errorf("frontmatter %s, %v", fm, err)
	}
	for _, bad := range []string{"# no frontmatter", "---\nname: a\n", "---\n: : :\n---\n"} {
		if _, err := skills.Frontmatter([]byte(bad)); err == nil {
			t.Errorf("took %q", bad)
		}
	}
}

// canon is JSON text with its objects' members sorted.
func canon(b []byte) string {
	var v any
	json.Unmarshal(b, &v)
	out, _ := json.Marshal(v)
	return string(out)
}

func TestTheDigestsInTheProtocolDocAreTheMEOSSkillsFiles(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "protocol.md"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`"uri":"skill://meos/trajectory-analysis/([^"]+)","digest":"([^"]+)","size":(\d+)`)
	found := re.FindAllStringSubmatch(string(doc), -1)
	if len(found) < 2 {
		t.Fatalf("docs/protocol.md lists %d files of the MEOS skill", len(found))
	}
	for _, m := range found {
		b, err := os.ReadFile(filepath.Join(root, "bundles", "meos", "skills", "trajectory-analysis", filepath.FromSlash(m[1])))
		if err != nil {
			t.Fatal(err)
		}
		if d := skills.Digest(b); d != m[2] || strconv.Itoa(len(b)) != m[3] {
			t.Errorf("%s: the doc says %s of %s bytes, the file is %s of %d", m[1], m[2], m[3], d, len(b))
		}
	}
}
