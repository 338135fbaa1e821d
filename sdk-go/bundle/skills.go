package bundle

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// Skills (MCP's skills extension, SEP-2640): a skill is a folder of files with a SKILL.md
// whose YAML frontmatter names it and says when to use it (the Agent Skills format). The
// server serves each file as the resource skill://<path>/<file>, unlisted, and lists the
// skills with their files' digests in skills/list and skills/get; once there is one it
// declares the extension.

// skillFile is the file every skill holds.
const skillFile = "SKILL.md"

// skillName is the Agent Skills rule for a name: lowercase letters, digits and single
// hyphens inside, at most 64 characters.
var skillName = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9]|-[a-z0-9]){0,63}$`)

// skill is an added skill's entry, by the URI of its SKILL.md.
type skill struct {
	uri   string
	entry json.RawMessage
}

// AddSkill serves the skill whose files fsys holds (os.DirFS of its folder, or an
// embed.FS's fs.Sub), under path: its URIs are skill://<path>/<file>, and the last name
// of path is the skill's name, which SKILL.md's frontmatter must give as "name" beside a
// "description". Every regular file is read now (hidden ones are left out) and served as it
// was read. It fails past the extension's limits (512 files, 16 MiB), on a frontmatter it
// cannot read, or when path is taken. The frontmatter is read as simple YAML: "key: value"
// lines, quoted or plain values, "key:" followed by indented "key: value" lines (a map
// such as metadata), and ">" or "|" blocks; write it so.
func (s *Server) AddSkill(skillPath string, fsys fs.FS) error {
	name := path.Base(skillPath)
	if skillPath == "" || strings.HasPrefix(skillPath, "/") || strings.HasSuffix(skillPath, "/") || !skillName.MatchString(name) {
		return fmt.Errorf("bundle: skill path %q must end in a skill name (lowercase letters, digits and single hyphens)", skillPath)
	}
	files := map[string][]byte{}
	total := 0
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != "." && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		if total += len(b); total > 16<<20 || len(files) == 512 {
			return fmt.Errorf("past the extension's limits of 512 files and 16 MiB")
		}
		files[p] = b
		return nil
	})
	if err != nil {
		return fmt.Errorf("bundle: skill %q: %w", skillPath, err)
	}
	body, ok := files[skillFile]
	if !ok {
		return fmt.Errorf("bundle: skill %q has no %s", skillPath, skillFile)
	}
	front, err := parseFrontmatter(body)
	if err != nil {
		return fmt.Errorf("bundle: skill %q: %w", skillPath, err)
	}
	if front["name"] != name || front["description"] == nil || front["description"] == "" {
		return fmt.Errorf("bundle: skill %q: its frontmatter must have name %q and a description", skillPath, name)
	}
	base := "skill://" + skillPath + "/"
	type resource struct {
		URI    string `json:"uri"`
		Digest string `json:"digest"`
		Size   int    `json:"size"`
	}
	rels := make([]string, 0, len(files))
	for rel := range files {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	list := make([]resource, len(rels))
	for i, rel := range rels {
		sum := sha256.Sum256(files[rel])
		list[i] = resource{URI: base + rel, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: len(files[rel])}
	}
	entry, err := json.Marshal(struct {
		URI         string         `json:"uri"`
		Frontmatter map[string]any `json:"frontmatter"`
		Resources   []resource     `json:"resources"`
	}{base + skillFile, front, list})
	if err != nil {
		return fmt.Errorf("bundle: skill %q: %w", skillPath, err)
	}
	s.mu.Lock()
	for _, sk := range s.skills {
		if sk.uri == base+skillFile {
			s.mu.Unlock()
			return fmt.Errorf("bundle: skill %q is already added", skillPath)
		}
	}
	s.skills = append(s.skills, skill{uri: base + skillFile, entry: entry})
	s.listed[listSkills] = append(s.listed[listSkills], entry)
	s.mu.Unlock()
	for _, rel := range rels {
		b, uri := files[rel], base+rel
		read := func(context.Context, *ResourceRequest) ([]mcp.ResourceContents, error) {
			c := mcp.ResourceContents{URI: uri, MimeType: skillMimeType(rel, b)}
			if utf8.Valid(b) {
				c.Text = string(b)
			} else {
				c.Blob = base64.StdEncoding.EncodeToString(b)
			}
			return []mcp.ResourceContents{c}, nil
		}
		if err := s.addResource(mcp.Resource{URI: uri, Name: rel}, read, false); err != nil {
			return err
		}
	}
	return nil
}

// getSkill answers skills/get.
func (s *Server) getSkill(params json.RawMessage) (any, *RPCError) {
	var p struct {
		URI string `json:"uri"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, sk := range s.skills {
		if sk.uri == p.URI {
			return map[string]json.RawMessage{"skill": sk.entry}, nil
		}
	}
	return nil, errorf(mcp.CodeInvalidParams, "no skill is served at %s", p.URI)
}

// skillMimeType is a skill file's media type.
func skillMimeType(name string, b []byte) string {
	switch {
	case strings.HasSuffix(name, ".md"):
		return "text/markdown"
	case utf8.Valid(b):
		return "text/plain"
	}
	return "application/octet-stream"
}

// parseFrontmatter reads the YAML frontmatter of a SKILL.md in the simple form AddSkill
// documents.
func parseFrontmatter(body []byte) (map[string]any, error) {
	text := strings.ReplaceAll(strings.TrimPrefix(string(body), "\ufeff"), "\r\n", "\n")
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return nil, fmt.Errorf("%s does not begin with frontmatter (a line ---)", skillFile)
	}
	block, _, ok := strings.Cut(rest, "\n---")
	if !ok {
		return nil, fmt.Errorf("%s's frontmatter has no closing line ---", skillFile)
	}
	lines := strings.Split(block, "\n")
	out := map[string]any{}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok || key != strings.TrimSpace(key) || key == "" {
			return nil, fmt.Errorf("%s frontmatter line %q: want key: value", skillFile, line)
		}
		value = strings.TrimSpace(value)
		var nested []string // the indented lines under the key
		for i+1 < len(lines) && (strings.HasPrefix(lines[i+1], " ") || strings.TrimSpace(lines[i+1]) == "") {
			i++
			nested = append(nested, lines[i])
		}
		switch {
		case value == ">" || value == "|" || value == ">-" || value == "|-":
			sep := "\n"
			if value[0] == '>' {
				sep = " "
			}
			var parts []string
			for _, l := range nested {
				parts = append(parts, strings.TrimSpace(l))
			}
			s := strings.TrimSpace(strings.Join(parts, sep))
			if !strings.HasSuffix(value, "-") {
				s += "\n"
			}
			out[key] = s
		case value == "" && len(nested) > 0:
			m := map[string]any{}
			for _, l := range nested {
				if strings.TrimSpace(l) == "" {
					continue
				}
				k, v, ok := strings.Cut(strings.TrimSpace(l), ":")
				if !ok {
					return nil, fmt.Errorf("%s frontmatter line %q: want key: value", skillFile, l)
				}
				m[k] = scalar(strings.TrimSpace(v))
			}
			out[key] = m
		default:
			if len(nested) > 0 && strings.TrimSpace(strings.Join(nested, "")) != "" {
				return nil, fmt.Errorf("%s frontmatter key %q: a value the SDK's simple YAML does not read", skillFile, key)
			}
			out[key] = scalar(value)
		}
	}
	return out, nil
}

// scalar is a plain or quoted YAML scalar as YAML reads it: quoted strings unquoted, true
// and false, null, numbers, else the string.
func scalar(v string) any {
	switch {
	case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
		if s, err := strconv.Unquote(v); err == nil {
			return s
		}
	case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'':
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	case v == "true" || v == "false":
		return v == "true"
	case v == "" || v == "null" || v == "~":
		return nil
	}
	if _, err := strconv.ParseFloat(v, 64); err == nil && strings.Trim(v, "0123456789.-+eE") == "" {
		return json.Number(v)
	}
	return v
}
