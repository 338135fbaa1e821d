package node

import (
	"bytes"
	"container/list"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/clock"
	"github.com/toolnode/toolnode/runtime/internal/cut"
	"github.com/toolnode/toolnode/runtime/internal/rpc"
	"github.com/toolnode/toolnode/sdk-go/mcp"
	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// Results a host can show. Hosts cut what they hand a model (Claude Code at 25,000 tokens by
// default) wherever the cut falls, and several clients read only a result's content. So a
// tools/call result whose text content passes ResultBounds.MaxBytes reaches its client cut
// at a boundary that keeps it valid (package cut), followed by a note saying what was left
// out and how to read it; the whole text is kept for a while as resources of the caller's
// own, toolnode://result/<id>/content/<i>, read in ranges by resources/read
// (?offset=&length=) and by the node tool toolnode.read_result. A result with
// structuredContent and no content also gets the JSON as text, as the specification says
// servers should.
//
// A kept result is its caller's alone: its owner is the caller's key (Caller.Key: an
// OAuth subject, an access file's client, or one anonymous session); any other caller is
// told it does not exist. An anonymous caller without a session (a stateless request
// without an identity) owns its results with every such caller: nothing tells their
// requests apart, and the id, 128 random bits, is what keeps them. In a cluster the id
// begins with the task tag of the node that keeps it, and a read reaching another node is
// carried to it as tasks/* requests are.

// Defaults and floor of ResultBounds.
const (
	DefaultMaxResultBytes    = 100 << 10
	MinMaxResultBytes        = 4 << 10
	DefaultResultTTL         = time.Hour
	DefaultResultClientBytes = 32 << 20
	DefaultResultStoreBytes  = 128 << 20
)

// ResultURIPrefix begins the URI of every kept result.
const ResultURIPrefix = "toolnode://result/"

// ReadResultToolName is the node tool that reads a kept result in ranges.
const ReadResultToolName = "toolnode.read_result"

// resultMetaKey is the member of a cut result's _meta that says what was cut.
const resultMetaKey = "io.toolnode/result"

// noteReserve is the part of the budget kept for the note that follows a cut.
const noteReserve = 1024

// ResultBounds bound the results the node passes to clients and keeps for them.
type ResultBounds struct {
	// MaxBytes is the most text content a tools/call result may carry to its client
	// (the sum over its text items); past it, the result is cut. 0 turns cutting off;
	// below MinMaxResultBytes it is MinMaxResultBytes. Default DefaultMaxResultBytes (set
	// by the command line; a zero Config keeps results whole).
	MaxBytes int
	// TTL is how long a cut result's whole is kept. Default DefaultResultTTL.
	TTL time.Duration
	// ClientBytes bounds what is kept for one client; its oldest results go first.
	// Default DefaultResultClientBytes.
	ClientBytes int64
	// StoreBytes bounds what is kept for every client; the oldest results go first.
	// Default DefaultResultStoreBytes.
	StoreBytes int64
	// Clock is the time TTL runs by. Default the system's; tests give a clock.Fake.
	Clock clock.Clock
}

func (b ResultBounds) withDefaults() ResultBounds {
	if b.MaxBytes > 0 && b.MaxBytes < MinMaxResultBytes {
		b.MaxBytes = MinMaxResultBytes
	}
	if b.TTL <= 0 {
		b.TTL = DefaultResultTTL
	}
	if b.ClientBytes <= 0 {
		b.ClientBytes = DefaultResultClientBytes
	}
	if b.StoreBytes <= 0 {
		b.StoreBytes = DefaultResultStoreBytes
	}
	b.ClientBytes = min(b.ClientBytes, b.StoreBytes)
	b.Clock = clock.Or(b.Clock)
	return b
}

// resultStore keeps the wholes of cut results.
type resultStore struct {
	b   ResultBounds
	tag func() string // the node's task tag, which every id begins with

	mu      sync.Mutex
	byID    map[string]*keptResult
	order   *list.List            // every kept result, oldest first
	owners  map[string]*list.List // each owner's, oldest first
	total   int64
	byOwner map[string]int64
}

// keptResult is the whole text of the content items a result's cut shortened.
type keptResult struct {
	id, owner string
	texts     map[int]string // by content index
	size      int64
	until     time.Time
	all, mine *list.Element
}

func newResultStore(b ResultBounds, tag func() string) *resultStore {
	return &resultStore{b: b.withDefaults(), tag: tag, byID: map[string]*keptResult{}, order: list.New(),
		owners: map[string]*list.List{}, byOwner: map[string]int64{}}
}

// put keeps texts for owner and returns the id; "" when they are larger than a client may
// keep. Older results go as the bounds need.
func (s *resultStore) put(owner string, texts map[int]string) string {
	var size int64
	for _, t := range texts {
		size += int64(len(t))
	}
	if size > s.b.ClientBytes {
		return ""
	}
	var rnd [16]byte
	_, _ = rand.Read(rnd[:])
	k := &keptResult{id: s.tag() + "-" + hex.EncodeToString(rnd[:]), owner: owner, texts: texts, size: size,
		until: s.b.Clock.Now().Add(s.b.TTL)}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked(s.b.Clock.Now())
	mine := s.owners[owner]
	for s.byOwner[owner]+size > s.b.ClientBytes {
		s.dropLocked(mine.Front().Value.(*keptResult))
	}
	for s.total+size > s.b.StoreBytes {
		s.dropLocked(s.order.Front().Value.(*keptResult))
	}
	if mine = s.owners[owner]; mine == nil {
		mine = list.New()
		s.owners[owner] = mine
	}
	k.all, k.mine = s.order.PushBack(k), mine.PushBack(k)
	s.byID[k.id] = k
	s.total += size
	s.byOwner[owner] += size
	return k.id
}

// expireLocked drops what has passed its TTL.
func (s *resultStore) expireLocked(now time.Time) {
	for e := s.order.Front(); e != nil && now.After(e.Value.(*keptResult).until); e = s.order.Front() {
		s.dropLocked(e.Value.(*keptResult))
	}
}

func (s *resultStore) dropLocked(k *keptResult) {
	s.order.Remove(k.all)
	mine := s.owners[k.owner]
	mine.Remove(k.mine)
	if mine.Len() == 0 {
		delete(s.owners, k.owner)
	}
	delete(s.byID, k.id)
	s.total -= k.size
	if s.byOwner[k.owner] -= k.size; s.byOwner[k.owner] == 0 {
		delete(s.byOwner, k.owner)
	}
}

// text is the whole text of content item i of result id, when owner may read it.
func (s *resultStore) text(owner, id string, i int) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked(s.b.Clock.Now())
	k := s.byID[id]
	if k == nil || k.owner != owner {
		return "", false
	}
	t, ok := k.texts[i]
	return t, ok
}

// bounds reports the store's bounds for toolnode.status.
func (s *resultStore) bounds() []Bound {
	s.mu.Lock()
	defer s.mu.Unlock()
	var most int64
	for _, b := range s.byOwner {
		most = max(most, b)
	}
	return []Bound{
		{Name: "results.max_bytes", Limit: int64(s.b.MaxBytes)},
		{Name: "results.ttl_ms", Limit: s.b.TTL.Milliseconds()},
		{Name: "results.client_bytes", Limit: s.b.ClientBytes, Used: most},
		{Name: "results.store_bytes", Limit: s.b.StoreBytes, Used: s.total},
	}
}

// ResultBytes reports the bytes of results kept now, in all: for tests and status.
func (n *Node) ResultBytes() int64 {
	n.results.mu.Lock()
	defer n.results.mu.Unlock()
	return n.results.total
}

// shaping is a call's record as the Done of a tools/call whose result is shaped for its
// client (see shapeResult) on its way to the call's Exchange: the record is its own Done,
// rather than one more allocation per call.
type shaping call

// CallDone implements Done.
func (s *shaping) CallDone(o Outcome) {
	c := (*call)(s)
	if o.Err == nil {
		o.Result = c.shaper.shapeResult(c.x.Caller().Key, o.Result)
	}
	c.x.CallDone(o)
}

// shapedCall makes c, a new record, the record of a tools/call of x whose Outcome goes to
// x with its result shaped for x's client, unless the node passes results as they are.
func (n *Node) shapedCall(c *call, ctx context.Context, x Exchange, req *Request, how settling) *call {
	c.ctx, c.x, c.req, c.how, c.done = ctx, x, req, how, x
	if n.results.b.MaxBytes > 0 {
		c.shaper, c.done = n, (*shaping)(c)
	}
	return c
}

// shapeResult gives res, a tools/call result, the JSON of its structuredContent as text
// when it has no content, and cuts its text content to the budget, keeping the whole for
// the client key. A result that fits, and anything that is not a result, pass as they are.
func (n *Node) shapeResult(key string, res json.RawMessage) json.RawMessage {
	budget := n.results.b.MaxBytes
	content, hasContent := rawjson.Member(res, "content")
	// structuredContent is looked for only when there is no content to read: most results
	// have some, and this runs for every one.
	if !hasContent || emptyArray(content) {
		if structured, ok := rawjson.Member(res, "structuredContent"); ok {
			content = append(append([]byte(`[{"type":"text","text":`), rawjson.AppendString(nil, string(structured))...), "}]"...)
			if out, ok := rawjson.PutMember(res, "content", content); ok {
				res = out
			}
		}
	}
	if len(res) <= budget || len(content) <= budget {
		return res // the text, escaped, is no longer than its JSON
	}
	var items []map[string]json.RawMessage
	if json.Unmarshal(content, &items) != nil {
		return res
	}
	texts := make(map[int]string, len(items))
	total := 0
	for i, item := range items {
		var text string
		if string(item["type"]) == `"text"` && json.Unmarshal(item["text"], &text) == nil {
			texts[i] = text
			total += len(text)
		}
	}
	if total <= budget {
		return res
	}
	left := budget - noteReserve
	whole := map[int]string{}
	cuts := map[int]cut.Cut{}
	for i := range items {
		text, ok := texts[i]
		if !ok {
			continue
		}
		c, shortened := cut.Text(text, max(left, 0))
		left -= len(c.Text)
		if shortened {
			whole[i], cuts[i] = text, c
			items[i]["text"], _ = json.Marshal(c.Text)
		}
	}
	id := n.results.put(key, whole)
	note, meta := n.cutNote(id, whole, cuts)
	noteItem, _ := json.Marshal(map[string]string{"type": "text", "text": note})
	out, err := json.Marshal(items)
	if err != nil {
		return res
	}
	out = append(append(append(out[:len(out)-1:len(out)-1], ','), noteItem...), ']')
	shaped, ok := rawjson.PutMember(res, "content", out)
	if !ok {
		return res
	}
	m, _ := rawjson.Member(shaped, "_meta")
	if len(m) == 0 || m[0] != '{' {
		m = []byte(`{}`)
	}
	if m, ok = rawjson.PutMember(m, resultMetaKey, meta); ok {
		shaped, _ = rawjson.PutMember(shaped, "_meta", m)
	}
	return shaped
}

// emptyArray reports whether the JSON value v is [] (spaced or not), without copying it.
func emptyArray(v []byte) bool {
	return len(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimPrefix(bytes.TrimSpace(v), []byte("[")), []byte("]")))) == 0
}

// cutNote is the note that follows a cut result, for the model, and its _meta entry, for
// programs: what each cut item kept and where its whole is.
func (n *Node) cutNote(id string, whole map[int]string, cuts map[int]cut.Cut) (string, json.RawMessage) {
	type cutMeta struct {
		Index   int    `json:"index"`
		URI     string `json:"uri,omitempty"`
		Bytes   int    `json:"bytes"`
		Kept    int    `json:"kept"`
		Offset  int    `json:"offset"`
		Cut     string `json:"cut"`
		Items   int    `json:"items,omitempty"`
		Omitted int    `json:"itemsOmitted,omitempty"`
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[toolnode: this result was cut to fit %d bytes.", n.results.b.MaxBytes)
	var metas []cutMeta
	for _, i := range slices.Sorted(maps.Keys(cuts)) {
		c := cuts[i]
		m := cutMeta{Index: i, Bytes: len(whole[i]), Kept: len(c.Text), Offset: c.Offset, Cut: string(c.How),
			Items: c.ItemsKept, Omitted: c.ItemsLeft}
		fmt.Fprintf(&b, " content[%d]: %d of %d bytes left out", i, len(whole[i])-c.Offset, len(whole[i]))
		switch c.How {
		case cut.JSON:
			fmt.Fprintf(&b, " (valid JSON kept: %d items, %d more left out)", c.ItemsKept, c.ItemsLeft)
		default:
			fmt.Fprintf(&b, " (cut after whole %s)", c.How)
		}
		if id != "" {
			m.URI = resultURI(id, i)
			fmt.Fprintf(&b, "; the rest is %s from offset %d: call %s with {\"uri\": %q, \"offset\": %d}, or resources/read %s?offset=%d&length=%d.",
				m.URI, c.Offset, ReadResultToolName, m.URI, c.Offset, m.URI, c.Offset, n.results.b.MaxBytes)
		} else {
			b.WriteString(".")
		}
		metas = append(metas, m)
	}
	if id != "" {
		fmt.Fprintf(&b, " It is kept for %s, for this client only.]", n.results.b.TTL)
	} else {
		fmt.Fprintf(&b, " The whole is more than the %d bytes the node keeps per client, and was not kept.]", n.results.b.ClientBytes)
	}
	meta, _ := json.Marshal(map[string]any{"maxBytes": n.results.b.MaxBytes, "cut": metas})
	return b.String(), meta
}

func resultURI(id string, i int) string {
	return ResultURIPrefix + id + "/content/" + strconv.Itoa(i)
}

// IsResultURI reports whether uri names a kept result (with or without a range).
func IsResultURI(uri string) bool { return strings.HasPrefix(uri, ResultURIPrefix) }

// resultRange is a read of a kept result: which, and what part.
type resultRange struct {
	id             string
	index          int
	offset, length int // length < 0: to the end
}

// parseResultURI reads toolnode://result/<id>/content/<i>[?offset=N&length=M].
func parseResultURI(uri string) (resultRange, bool) {
	r := resultRange{length: -1}
	rest, query, _ := strings.Cut(strings.TrimPrefix(uri, ResultURIPrefix), "?")
	id, index, ok := strings.Cut(rest, "/content/")
	if !ok || id == "" || strings.Contains(id, "/") {
		return r, false
	}
	var err error
	if r.index, err = strconv.Atoi(index); err != nil || r.index < 0 {
		return r, false
	}
	r.id = id
	q, err := url.ParseQuery(query)
	if err != nil {
		return r, false
	}
	for key, set := range map[string]*int{"offset": &r.offset, "length": &r.length} {
		if v := q.Get(key); v != "" {
			if *set, err = strconv.Atoi(v); err != nil || *set < 0 {
				return r, false
			}
		}
	}
	return r, true
}

// readResultText reads the range r of a kept result for owner: the part, snapped to whole
// characters (so that ranges that meet read every byte once), its offset, and the whole's
// length.
func (s *resultStore) readRange(owner string, r resultRange) (part string, offset, total int, ok bool) {
	text, ok := s.text(owner, r.id, r.index)
	if !ok {
		return "", 0, 0, false
	}
	end := len(text)
	if r.length >= 0 && r.offset+r.length < end {
		end = r.offset + r.length
	}
	start := cut.RuneStart(text, r.offset)
	end = cut.RuneStart(text, end)
	if end < start {
		end = start
	}
	return text[start:end], start, len(text), true
}

// readResult serves resources/read of a kept result for the caller owner. A result kept by
// another node of the cluster is read there.
func (n *Node) readResult(ctx context.Context, owner, uri string) (json.RawMessage, error) {
	r, ok := parseResultURI(uri)
	if !ok {
		return nil, resourceNotFound(uri)
	}
	if tag, _, _ := strings.Cut(r.id, "-"); tag != n.TaskTag() {
		params, _ := json.Marshal(map[string]string{"uri": uri})
		res, routed, err := n.RouteTask(ctx, tag, TaskCaller{Owner: owner}, mcp.MethodResourcesRead, params)
		if !routed || err != nil && isRPCError(err) {
			return nil, resourceNotFound(uri)
		}
		return res, err
	}
	part, offset, total, ok := n.results.readRange(owner, r)
	if !ok {
		return nil, resourceNotFound(uri)
	}
	return json.Marshal(map[string]any{
		"contents": []map[string]any{{"uri": uri, "mimeType": "text/plain", "text": part}},
		"_meta":    map[string]any{resultMetaKey: map[string]int{"offset": offset, "length": len(part), "total": total}},
	})
}

// readLength is the most toolnode.read_result reads at once: its answer, note included,
// fits the budget, and is not cut again.
func (n *Node) readLength() int { return n.results.b.MaxBytes - noteReserve }

// readResultTool is the tools/list entry of toolnode.read_result.
func readResultTool(maxBytes int) json.RawMessage {
	return json.RawMessage(`{"name":"` + ReadResultToolName + `","title":"Read a cut result",` +
		`"description":"Reads the rest of a tool result this node cut to fit (its note names the uri and the offset to go on from): the bytes from offset, at most length (default and most ` + strconv.Itoa(maxBytes) + `). Results are kept for a while, for the client that made them only.",` +
		`"inputSchema":{"type":"object","properties":{` +
		`"uri":{"type":"string","maxLength":256,"description":"The toolnode://result/... URI the cut result's note gives."},` +
		`"offset":{"type":"integer","minimum":0,"default":0,"description":"The byte to start at."},` +
		`"length":{"type":"integer","minimum":1,"description":"Most bytes to read."}},` +
		`"required":["uri"],"additionalProperties":false},` +
		`"annotations":{"readOnlyHint":true,"openWorldHint":false}}`)
}

// readResultCall serves toolnode.read_result.
func (n *Node) readResultCall(ctx context.Context, x Exchange, args json.RawMessage) (json.RawMessage, error) {
	var a struct {
		URI    string `json:"uri"`
		Offset int    `json:"offset"`
		Length int    `json:"length"`
	}
	if err := json.Unmarshal(args, &a); err != nil || a.URI == "" || a.Offset < 0 || a.Length < 0 {
		return json.Marshal(mcp.ErrorResult(ReadResultToolName + " takes {\"uri\": string, \"offset\": integer >= 0, \"length\": integer >= 1}"))
	}
	if a.Length == 0 || a.Length > n.readLength() {
		a.Length = n.readLength()
	}
	base, _, _ := strings.Cut(a.URI, "?")
	key := x.Caller().Key
	res, err := n.readResult(ctx, key, fmt.Sprintf("%s?offset=%d&length=%d", base, a.Offset, a.Length))
	if err != nil {
		if isRPCError(err) {
			return json.Marshal(mcp.ErrorResult("no result " + base + " is kept for this client: it was never made, has expired or was pushed out by newer ones, or is another client's"))
		}
		return nil, err
	}
	var read struct {
		Contents []struct {
			Text string `json:"text"`
		} `json:"contents"`
		Meta map[string]struct {
			Offset int `json:"offset"`
			Length int `json:"length"`
			Total  int `json:"total"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(res, &read); err != nil || len(read.Contents) != 1 {
		return nil, fmt.Errorf("%s: reading %s: %w", ReadResultToolName, base, rpc.Errorf(mcp.CodeInternalError, "malformed read"))
	}
	r := read.Meta[resultMetaKey]
	next := r.Offset + r.Length
	note := fmt.Sprintf("[toolnode: bytes %d to %d of %d.", r.Offset, next, r.Total)
	if next < r.Total {
		note += fmt.Sprintf(" The rest: offset %d.]", next)
	} else {
		note += " That is the end.]"
	}
	return json.Marshal(map[string]any{
		"content":           []map[string]string{{"type": "text", "text": read.Contents[0].Text}, {"type": "text", "text": note}},
		"structuredContent": map[string]any{"offset": r.Offset, "length": r.Length, "total": r.Total, "next": next, "done": next >= r.Total},
	})
}
