package skills

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// SkillFile is the file every skill folder holds.
const SkillFile = "SKILL.md"

// Local is a skill read from a bundle's skills folder.
type Local struct {
	// Path is the skill's folder relative to the skills folder, with / between names: the
	// skill's path under its bundle (its last name is the skill's name).
	Path string
	// Dir is the skill's folder on disk.
	Dir string
	// Files are its files, SKILL.md among them, by their path relative to Dir (/).
	Files []File
}

// File is one file of a skill read from disk.
type File struct {
	Rel    string
	Digest string
	Size   int64
}

// namePattern is the Agent Skills specification's rule for a skill's name: lowercase
// letters, digits and single hyphens inside, 1 to 64 characters.
var namePattern = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9]|-[a-z0-9]){0,63}$`)

// Reader reads the skills folders of bundles. It keeps the digest of every file it has
// read, by path, size and modification time, so that reading a folder again hashes only
// the files that changed. It is safe for concurrent use.
type Reader struct {
	mu      sync.Mutex
	digests map[string]stamped
}

type stamped struct {
	size   int64
	mod    time.Time
	digest string
}

// NewReader returns a Reader with nothing read yet.
func NewReader() *Reader { return &Reader{digests: map[string]stamped{}} }

// Read reads every skill under root (a folder holding a SKILL.md, at any depth: a skill
// inside another is a skill of its own and files of the other) as bundle's, and reports
// the skills it leaves out and why. Hidden files and folders and symbolic links are not
// part of any skill.
func (r *Reader) Read(bundle, root string) ([]Skill, []error) {
	var dirs []string
	var errs []error
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case p != root && strings.HasPrefix(d.Name(), "."):
			if d.IsDir() {
				return filepath.SkipDir
			}
		case !d.IsDir() && d.Type().IsRegular() && d.Name() == SkillFile && p != filepath.Join(root, SkillFile):
			dirs = append(dirs, filepath.Dir(p))
		}
		return nil
	})
	if err != nil {
		return nil, []error{fmt.Errorf("skills folder %s: %w", root, err)}
	}
	var out []Skill
	for _, dir := range dirs {
		sk, err := r.skill(bundle, root, dir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, sk)
	}
	return out, errs
}

// skill reads the skill in dir, under root.
func (r *Reader) skill(bundle, root, dir string) (Skill, error) {
	rel, _ := filepath.Rel(root, dir)
	l := &Local{Path: filepath.ToSlash(rel), Dir: dir}
	name := path.Base(l.Path)
	fail := func(format string, args ...any) (Skill, error) {
		return Skill{}, fmt.Errorf("skill %s of bundle %s: %s", l.Path, bundle, fmt.Sprintf(format, args...))
	}
	if !namePattern.MatchString(name) {
		return fail("its folder's name %q is not a skill name (lowercase letters, digits and single hyphens, at most 64)", name)
	}
	var total int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if len(l.Files) == MaxFiles {
			return fmt.Errorf("more than %d files", MaxFiles)
		}
		f, err := r.file(p)
		if err != nil {
			return err
		}
		if total += f.Size; total > MaxBytes {
			return fmt.Errorf("more than %d bytes of files", MaxBytes)
		}
		rel, _ := filepath.Rel(dir, p)
		f.Rel = filepath.ToSlash(rel)
		l.Files = append(l.Files, f)
		return nil
	})
	if err != nil {
		return fail("%v", err)
	}
	body, err := os.ReadFile(filepath.Join(dir, SkillFile))
	if err != nil {
		return fail("%v", err)
	}
	front, err := Frontmatter(body)
	if err != nil {
		return fail("%v", err)
	}
	var fm struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	if err := json.Unmarshal(front, &fm); err != nil || fm.Name != name || fm.Description == "" {
		return fail("its frontmatter must have name %q (its folder's name) and a description", name)
	}
	sort.Slice(l.Files, func(i, j int) bool { return l.Files[i].Rel < l.Files[j].Rel })
	base := Scheme + bundle + "/" + l.Path + "/"
	files := make([]Resource, len(l.Files))
	for i, f := range l.Files {
		files[i] = Resource{URI: base + f.Rel, Digest: f.Digest, Size: f.Size}
	}
	res, _ := json.Marshal(files)
	e := Entry{URI: base + SkillFile, Frontmatter: front, Resources: res}
	raw, err := json.Marshal(e)
	if err != nil {
		return fail("%v", err)
	}
	return Skill{Bundle: bundle, Entry: raw, URI: e.URI, Local: l}, nil
}

// file is the size and digest of the file at p, hashed only when its size or modification
// time changed since it was last hashed.
func (r *Reader) file(p string) (File, error) {
	st, err := os.Stat(p)
	if err != nil {
		return File{}, err
	}
	r.mu.Lock()
	s, ok := r.digests[p]
	r.mu.Unlock()
	if ok && s.size == st.Size() && s.mod.Equal(st.ModTime()) {
		return File{Digest: s.digest, Size: s.size}, nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return File{}, err
	}
	d := Digest(b)
	r.mu.Lock()
	r.digests[p] = stamped{size: int64(len(b)), mod: st.ModTime(), digest: d}
	r.mu.Unlock()
	return File{Digest: d, Size: int64(len(b))}, nil
}

// Digest is the extension's digest of a file's bytes: sha256:<64 lowercase hex digits>.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Frontmatter is the YAML frontmatter of a SKILL.md as a JSON object: every field the
// author wrote.
func Frontmatter(body []byte) (json.RawMessage, error) {
	body = bytes.TrimPrefix(body, []byte("\ufeff"))
	rest, ok := bytes.CutPrefix(bytes.ReplaceAll(body, []byte("\r\n"), []byte("\n")), []byte("---\n"))
	if !ok {
		return nil, errors.New("SKILL.md does not begin with YAML frontmatter (a line ---)")
	}
	end := bytes.Index(rest, []byte("\n---\n"))
	if end < 0 {
		if !bytes.HasSuffix(rest, []byte("\n---")) {
			return nil, errors.New("SKILL.md's frontmatter has no closing line ---")
		}
		end = len(rest) - len("\n---")
	}
	var v map[string]any
	if err := yaml.Unmarshal(rest[:end], &v); err != nil {
		return nil, fmt.Errorf("SKILL.md's frontmatter: %w", err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("SKILL.md's frontmatter as JSON: %w", err)
	}
	return out, nil
}

// Contents is a resources/read result holding the file rel of skill l, read now, under
// uri: text when the file is UTF-8, else base64 in blob.
func (l *Local) Contents(uri, rel string) (json.RawMessage, error) {
	known := false
	for _, f := range l.Files {
		known = known || f.Rel == rel
	}
	if !known {
		return nil, fs.ErrNotExist
	}
	b, err := os.ReadFile(filepath.Join(l.Dir, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	c := map[string]any{"uri": uri, "mimeType": mimeType(rel, b)}
	if utf8.Valid(b) {
		c["text"] = string(b)
	} else {
		c["blob"] = b // base64 by encoding/json
	}
	return json.Marshal(map[string]any{"contents": []any{c}})
}

// mimeType is a skill file's media type: text/markdown for Markdown, else by its
// extension, else text/plain for UTF-8 and application/octet-stream for the rest.
func mimeType(name string, b []byte) string {
	ext := path.Ext(name)
	switch {
	case ext == ".md":
		return "text/markdown"
	case ext == ".star" || ext == ".py":
		return "text/x-python"
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	if utf8.Valid(b) {
		return "text/plain"
	}
	return "application/octet-stream"
}
