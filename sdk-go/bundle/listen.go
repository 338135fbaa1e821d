package bundle

import (
	"encoding/json"
	"slices"

	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// A 2026-07-28 client has no resources/subscribe: it opens subscriptions/listen, naming the
// notifications it wants, and the request stays open, never answered while the client
// listens. Everything sent for it carries the request's id in _meta; the client ends it
// with notifications/cancelled, which gets no answer.

// listenFilter is the notifications member of subscriptions/listen and of its
// acknowledgment.
type listenFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
}

// listen is one open subscriptions/listen of a session.
type listen struct {
	id   json.RawMessage // as the client sent it: the subscription id
	uris map[string]bool
}

// subscriptionMeta is the _meta that tags what belongs to the subscription id.
func subscriptionMeta(id json.RawMessage) map[string]json.RawMessage {
	return map[string]json.RawMessage{mcp.MetaSubscriptionID: id}
}

// listen opens a subscription and acknowledges it with what the server agreed to: the
// resources it serves among those asked for. It sends no list changes (its lists are fixed
// once it serves), so it agrees to none.
func (ss *session) listen(id, params json.RawMessage) {
	var p struct {
		Notifications listenFilter `json:"notifications"`
	}
	if rerr := decodeParams(params, &p); rerr != nil {
		ss.answer(id, nil, rerr)
		return
	}
	l := &listen{id: id, uris: map[string]bool{}}
	var agreed listenFilter
	for _, uri := range p.Notifications.ResourceSubscriptions {
		if h, _ := ss.s.lookup(uri); h != nil && !l.uris[uri] {
			l.uris[uri] = true
			agreed.ResourceSubscriptions = append(agreed.ResourceSubscriptions, uri)
		}
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	_, busy := ss.inflight[string(id)]
	if ss.listens[string(id)] != nil || busy {
		ss.answer(id, nil, errorf(mcp.CodeInvalidRequest, "invalid request: id %s is already in use", id))
		return
	}
	if ss.closed {
		return
	}
	ss.listens[string(id)] = l
	// Written under ss.mu, so that no update for it can go out before it: the spec wants
	// the acknowledgment first.
	_ = ss.notify(mcp.NotifySubscriptionsAcknowledged, struct {
		Meta          map[string]json.RawMessage `json:"_meta"`
		Notifications listenFilter               `json:"notifications"`
	}{subscriptionMeta(id), agreed})
}

// unlisten ends the subscription id names, reporting whether there was one.
func (ss *session) unlisten(id json.RawMessage) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.listens[string(id)] == nil {
		return false
	}
	delete(ss.listens, string(id))
	return true
}

// listening returns the ids of the subscriptions that asked for uri's updates, sorted, so
// that their updates go out in the same order each time.
func (ss *session) listening(uri string) []json.RawMessage {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	var ids []json.RawMessage
	for _, l := range ss.listens {
		if l.uris[uri] {
			ids = append(ids, l.id)
		}
	}
	slices.SortFunc(ids, func(a, b json.RawMessage) int { return slices.Compare(a, b) })
	return ids
}

// endListens answers every open subscription with the result that ends it gracefully, as
// the spec asks of a server that stops while clients listen.
func (ss *session) endListens() {
	ss.mu.Lock()
	ls := ss.listens
	ss.listens = map[string]*listen{}
	ss.mu.Unlock()
	for _, l := range ls {
		ss.answer(l.id, struct {
			ResultType string                     `json:"resultType"`
			Meta       map[string]json.RawMessage `json:"_meta"`
		}{mcp.ResultTypeComplete, subscriptionMeta(l.id)}, nil)
	}
}
