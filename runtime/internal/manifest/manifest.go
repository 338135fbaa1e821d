// Package manifest reads and checks bundle manifests (bundle.json) and finds the bundles in a
// folder.
package manifest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"

	"github.com/toolnode/toolnode/runtime/internal/sandbox"
	"time"
)

// FileName is the name of a bundle's manifest inside its directory.
const FileName = "bundle.json"

// Defaults for the timeouts a manifest may leave out.
const (
	DefaultStartTimeout    = 30 * time.Second
	DefaultCallTimeout     = 5 * time.Minute
	DefaultCallMaxTimeout  = 30 * time.Minute
	DefaultShutdownTimeout = 3 * time.Second

	// MaxInstances bounds "instances": a pool is for using the cores, not for forking bombs.
	MaxInstances = 64
)

// Isolation values: how a bundle's processes are shared between clients.
const (
	// IsolationShared runs one process (or pool) for every client: the default.
	IsolationShared = "shared"
	// IsolationClient runs a process per client, for servers that do not tag which call
	// their messages belong to.
	IsolationClient = "client"
)

// Manifest is a bundle's bundle.json, checked, with the fields the file leaves out filled in.
type Manifest struct {
	// Name names the bundle: it prefixes the bundle's own tools and its log lines.
	Name string `json:"name"`
	// Command is the program and its arguments. Command[0] is taken relative to the bundle
	// directory when it starts with "./", else looked up on PATH. A bundle has a command or
	// a URL, not both.
	Command []string `json:"command,omitempty"`
	// URL is the MCP endpoint of a remote bundle, reached over Streamable HTTP
	// ("https://host/mcp"), instead of a command.
	URL string `json:"url,omitempty"`
	// Headers are sent with every HTTP request to URL. A value may name variables of the
	// node's environment as ${NAME} (see RequestHeaders), so that secrets stay out of the
	// file.
	Headers map[string]string `json:"headers,omitempty"`
	// Env is added to the bundle's minimal environment.
	Env map[string]string `json:"env,omitempty"`
	// InheritEnv names variables of the node's own environment the bundle may see.
	InheritEnv []string `json:"inherit_env,omitempty"`
	// Seats are the capability slots the bundle implements; its tools named <seat>.<verb>
	// keep their names.
	Seats []string `json:"seats,omitempty"`
	// Timeouts bound start-up, each call and shutdown.
	Timeouts Timeouts `json:"timeouts"`
	// Instances is the number of identical processes run for the bundle; calls go to the
	// least busy. Default 1.
	Instances int `json:"instances,omitempty"`
	// Prefix, when false, exposes the bundle's tools and prompts under their own names
	// instead of <bundle>.<name>, as long as they collide with nothing. Default true.
	Prefix *bool `json:"prefix,omitempty"`
	// Isolation is IsolationShared (the default, filled in by Parse) or IsolationClient.
	Isolation string `json:"isolation,omitempty"`
	// Start is StartEager (the default, filled in by Parse): run the bundle with the node;
	// or StartLazy: list it from its cached surface and run it on its first call.
	Start string `json:"start,omitempty"`
	// IdleStop, when set, stops the bundle after that long without calls; it starts again
	// on demand. Read it with IdleAfter.
	IdleStop duration `json:"idle_stop,omitempty"`
	// Tasks says which tools allow or require a task (MCP's tasks extension): each key is
	// a tool's name as the bundle lists it, or a pattern where * stands for any run of
	// characters, and each value "optional", "required" or "forbidden". A tool no key
	// names keeps what it says itself (its execution.taskSupport), else "optional". Read
	// it with TaskSupport.
	Tasks map[string]string `json:"tasks,omitempty"`
	// Featured are the tools listed directly when the node serves a catalog too large to
	// list whole by search (--view auto): each a tool's name as the bundle lists it, or a
	// pattern where * stands for any run of characters. Read it with IsFeatured.
	Featured []string `json:"featured,omitempty"`

	// Synonyms names a file of the bundle, relative to its directory, that lists the
	// bundle's words beside its users' ("tstzspan, period, time span"), one group a line:
	// toolnode.search finds a tool by the other members of a group one of its words is in.
	// Read with SynonymsPath; the node reads the file when it indexes the catalog.
	Synonyms string `json:"synonyms,omitempty"`

	// Sandbox bounds what the bundle's processes may take and touch (memory, cpu, pids,
	// open files, network, the files they may read and write): docs/sandbox.md. Nil: the
	// node's --sandbox profile, "off" by default. Not for a bundle given by "url".
	Sandbox *sandbox.Policy `json:"sandbox,omitempty"`
	// Skills names a folder of the bundle, relative to its directory, of skill folders
	// (each holding a SKILL.md): the node serves them as the bundle's skills (MCP's skills
	// extension) when the bundle's own server serves none. Read with SkillsPath.
	Skills string `json:"skills,omitempty"`
	// TokenExchange, when set, gives each call a token of the caller's own for the
	// bundle's audience, exchanged at the OAuth issuer from the caller's access token (see
	// TokenExchange).
	TokenExchange *TokenExchange `json:"token_exchange,omitempty"`

	// Link, when set, opens the connection to a bundle that another node of a cluster
	// serves (an upstream.Link); such a bundle has neither a command nor a URL. Not read
	// from a file.
	Link func() (io.ReadWriteCloser, error) `json:"-"`
	// InMemory, when set, serves the bundle in the node's own process instead of a
	// command's (an in-memory bundle: tests give the node an sdk-go bundle.Server's Serve
	// this way). The node runs it as it runs a bundle's process, once per instance and
	// again at each restart, with a pair of in-process pipes for its stdin and stdout: it
	// serves MCP on them until stdin ends or ctx is done, and returning is the process's
	// exit. Such a bundle has neither a command nor a URL, nor a sandbox. Not read from a
	// file.
	InMemory func(ctx context.Context, stdin io.Reader, stdout io.Writer) error `json:"-"`

	// Dir is the bundle directory (absolute); Path the manifest file. Neither is read from
	// the file.
	Dir  string `json:"-"`
	Path string `json:"-"`
}

// Start values: when a bundle's process is started.
const (
	// StartEager starts the bundle with the node: the default.
	StartEager = "eager"
	// StartLazy lists the bundle from the surface it showed last and starts it on its
	// first call, read or get.
	StartLazy = "lazy"
)

// Timeouts bound the phases of a bundle's life. The manifest may leave any of them out:
// Parse and LoadConfig fill in the defaults, so every field of a loaded manifest is set.
type Timeouts struct {
	// Start bounds process start, initialize and the first tools/list. Default 30s.
	Start time.Duration
	// Call bounds one call while it shows no progress: each progress notification of the
	// call starts the wait anew, up to CallMax. Default 5m.
	Call time.Duration
	// CallMax bounds one call whatever its progress. Default 30m, and never below Call.
	CallMax time.Duration
	// Shutdown is the grace given at each step of stopping (stdin closed, then SIGTERM)
	// before the next, harsher one. Default 3s.
	Shutdown time.Duration
}

// timeoutsJSON is how Timeouts are written: duration strings.
type timeoutsJSON struct {
	Start    duration `json:"start,omitempty"`
	Call     duration `json:"call,omitempty"`
	CallMax  duration `json:"call_max,omitempty"`
	Shutdown duration `json:"shutdown,omitempty"`
}

// UnmarshalJSON reads the timeouts object strictly: an unknown key is an error naming it.
func (t *Timeouts) UnmarshalJSON(b []byte) error {
	var j timeoutsJSON
	if err := decodeObject(b, "timeouts", `{"call": "1m"}`, &j); err != nil {
		return err
	}
	*t = Timeouts{Start: time.Duration(j.Start), Call: time.Duration(j.Call), CallMax: time.Duration(j.CallMax), Shutdown: time.Duration(j.Shutdown)}
	return nil
}

// decodeObject reads b, the value of the manifest's key, strictly into v, a pointer to a
// struct: not an object, or an unknown key, is an error naming the key, the known keys and
// an example of the object.
func decodeObject[T any](b []byte, key, example string, v *T) error {
	if b = bytes.TrimSpace(b); len(b) == 0 || b[0] != '{' {
		return fmt.Errorf("key %q must be an object such as %s", key, example)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if unknown, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return fmt.Errorf("unknown key %s in %s (known keys: %s)", unknown, key, knownKeys(reflect.TypeFor[T]()))
		}
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

// MarshalJSON writes the timeouts as duration strings.
func (t Timeouts) MarshalJSON() ([]byte, error) {
	return json.Marshal(timeoutsJSON{Start: duration(t.Start), Call: duration(t.Call), CallMax: duration(t.CallMax), Shutdown: duration(t.Shutdown)})
}

// withDefaults returns t with every zero field set to its default.
func (t Timeouts) withDefaults() Timeouts {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&t.Start, DefaultStartTimeout)
	def(&t.Call, DefaultCallTimeout)
	def(&t.CallMax, DefaultCallMaxTimeout)
	def(&t.Shutdown, DefaultShutdownTimeout)
	// A call that shows no progress ends at Call; one that does cannot end sooner.
	t.CallMax = max(t.CallMax, t.Call)
	return t
}

// duration is a time.Duration written in JSON as a Go duration string ("10s", "1m30s").
type duration time.Duration

// UnmarshalJSON reads a duration string.
func (d *duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration must be a string such as \"10s\"")
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return fmt.Errorf("%q is not a duration such as \"10s\"", s)
	}
	*d = duration(v)
	return nil
}

// MarshalJSON writes a duration string.
func (d duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// namePattern keeps bundle and seat names usable inside tool names, where '.' separates the
// parts, and short enough to leave room for the tool's own name.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidName reports whether s may name a bundle or a seat.
func ValidName(s string) bool { return namePattern.MatchString(s) }

// Load reads and checks the manifest at path.
func Load(path string) (*Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("manifest path %s: %w", path, err)
	}
	m, err := Parse(data, filepath.Dir(abs))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m.Path = abs
	return m, nil
}

// Parse decodes a manifest strictly (an unknown key is an error naming it) and checks it;
// dir is the bundle directory that "./" commands are relative to.
func Parse(data []byte, dir string) (*Manifest, error) {
	return parse(data, dir, nil)
}

// parse is Parse, of an in-memory bundle served by serve when it is not nil.
func parse(data []byte, dir string, serve func(ctx context.Context, stdin io.Reader, stdout io.Writer) error) (*Manifest, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		return nil, explainDecodeError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("unexpected data after the manifest's JSON object")
	}
	m.Dir, m.InMemory = dir, serve
	if err := m.check(); err != nil {
		return nil, err
	}
	m.fill()
	return &m, nil
}

// fill sets what a checked manifest left out to its default, once, so that users of a
// manifest read plain values.
func (m *Manifest) fill() {
	m.Timeouts = m.Timeouts.withDefaults()
	if m.Isolation == "" {
		m.Isolation = IsolationShared
	}
	if m.Start == "" {
		m.Start = StartEager
	}
}

// knownKeys lists the keys of the JSON object the struct type t is read from, in the
// order of its fields: the keys an unknown one is told apart from, never out of step.
func knownKeys(t reflect.Type) string {
	var keys []string
	for i := range t.NumField() {
		if key, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); key != "" && key != "-" {
			keys = append(keys, key)
		}
	}
	return strings.Join(keys, ", ")
}

// explainDecodeError turns encoding/json's messages into ones that say what to fix.
func explainDecodeError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Errorf("not valid JSON at byte %d: %w", syn.Offset, err)
	case errors.As(err, &typ):
		return fmt.Errorf("key %q must be %s, not JSON %s", typ.Field, typeName(typ.Type.String()), typ.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		key := strings.TrimPrefix(err.Error(), "json: unknown field ")
		return fmt.Errorf("unknown key %s (known keys: %s)", key, knownKeys(reflect.TypeFor[Manifest]()))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("not valid JSON: the file ends inside the object")
	case errors.Is(err, io.EOF):
		return errors.New("empty file: a manifest is a JSON object with at least \"name\" and \"command\" (or \"url\")")
	}
	return err
}

func typeName(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	case strings.HasPrefix(goType, "map["):
		return "an object"
	}
	return "a " + goType
}

func (m *Manifest) check() error {
	if m.Name == "" {
		return errors.New(`missing "name"`)
	}
	if !ValidName(m.Name) {
		return fmt.Errorf("bad name %q: use 1 to 64 of A-Z a-z 0-9 _ - (no dots: a dot separates a bundle from its tool)", m.Name)
	}
	if err := m.checkTarget(); err != nil {
		return err
	}
	switch m.Isolation {
	case "", IsolationShared, IsolationClient:
	default:
		return fmt.Errorf("isolation %q: use %q (one process for every client, the default) or %q (a process per client)", m.Isolation, IsolationShared, IsolationClient)
	}
	switch m.Start {
	case "", StartEager, StartLazy:
	default:
		return fmt.Errorf("start %q: use %q (start with the node, the default) or %q (list from the cached surface, start on the first call)", m.Start, StartEager, StartLazy)
	}
	if m.Isolation == IsolationClient && (m.Start == StartLazy || m.IdleStop > 0) {
		return errors.New(`"start": "lazy" and "idle_stop" do not apply with "isolation": "client", which starts a process per client when it connects`)
	}
	if m.Sandbox != nil && m.Remote() {
		return errors.New(`"sandbox" bounds a process the node starts: a bundle given by "url" runs elsewhere`)
	}
	if m.Instances < 0 || m.Instances > MaxInstances {
		return fmt.Errorf("instances %d: use 1 to %d", m.Instances, MaxInstances)
	}
	for _, s := range m.Seats {
		if !ValidName(s) {
			return fmt.Errorf("bad seat %q: use 1 to 64 of A-Z a-z 0-9 _ -", s)
		}
	}
	if err := checkTasks(m.Tasks); err != nil {
		return err
	}
	if m.Synonyms != "" && !filepath.IsLocal(m.Synonyms) {
		return fmt.Errorf("synonyms %q: name a file inside the bundle's directory, relative to it (e.g. \"synonyms.txt\")", m.Synonyms)
	}
	if m.Skills != "" && !filepath.IsLocal(m.Skills) {
		return fmt.Errorf("skills %q: name a folder inside the bundle's directory, relative to it (e.g. \"skills\")", m.Skills)
	}
	if err := checkFeatured(m.Featured); err != nil {
		return err
	}
	if err := m.checkTokenExchange(); err != nil {
		return err
	}
	for k := range m.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return fmt.Errorf("bad env name %q", k)
		}
	}
	for _, k := range m.InheritEnv {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return fmt.Errorf("bad inherit_env name %q", k)
		}
	}
	return nil
}

// SynonymsPath is the path of the bundle's synonyms file, "" when it names none.
func (m *Manifest) SynonymsPath() string {
	if m.Synonyms == "" {
		return ""
	}
	return filepath.Join(m.Dir, m.Synonyms)
}

// SkillsPath is the path of the bundle's skills folder, "" when it names none.
func (m *Manifest) SkillsPath() string {
	if m.Skills == "" {
		return ""
	}
	return filepath.Join(m.Dir, m.Skills)
}

// Lazy reports whether the bundle starts on its first call rather than with the node.
func (m *Manifest) Lazy() bool { return m.Start == StartLazy }

// IdleAfter is how long the bundle may go without calls before it is stopped; 0 keeps it
// running.
func (m *Manifest) IdleAfter() time.Duration { return time.Duration(m.IdleStop) }

// Pool is the number of processes to run for the bundle.
func (m *Manifest) Pool() int { return max(m.Instances, 1) }

// Prefixed reports whether the bundle's names get its name as prefix.
func (m *Manifest) Prefixed() bool { return m.Prefix == nil || *m.Prefix }

// Remote reports whether the bundle is an MCP server reached at a URL rather than a
// process the node starts.
func (m *Manifest) Remote() bool { return m.URL != "" }

// Program resolves Command[0]: a "./" path inside the bundle directory (it may not escape
// it, also not through a symbolic link), an absolute path, or a bare name left for a PATH
// lookup at start.
func (m *Manifest) Program() (string, error) {
	if len(m.Command) == 0 {
		return "", fmt.Errorf("bundle %q has no command (it is reached at %s)", m.Name, m.URL)
	}
	prog := m.Command[0]
	switch {
	case strings.HasPrefix(prog, "./"):
		p := filepath.Join(m.Dir, prog)
		if !within(m.Dir, p) {
			return "", fmt.Errorf("command %q escapes the bundle directory", prog)
		}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			realDir, derr := filepath.EvalSymlinks(m.Dir)
			if derr == nil && !within(realDir, real) {
				return "", fmt.Errorf("command %q links outside the bundle directory (to %s)", prog, real)
			}
		}
		return p, nil
	case filepath.IsAbs(prog), !strings.ContainsRune(prog, '/'):
		return prog, nil
	}
	return "", fmt.Errorf("command %q: start it with ./ for a file in the bundle directory, or give a name found on PATH", prog)
}

func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && rel != "."
}
