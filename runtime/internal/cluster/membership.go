package cluster

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/toolnode/toolnode/runtime/internal/clock"
	"github.com/toolnode/toolnode/runtime/internal/manifest"
)

// Membership: the heartbeats a node sends and hears, the members it keeps from them (each
// sifted against Bounds first), and their withdrawal when silent or gone.

// member is another node of the cluster, as its heartbeats describe it.
type member struct {
	ID      string         `json:"node"`
	Bundles []Announcement `json:"bundles"`
	// Tasks is the tag the ids of the node's tasks begin with (see node.TaskTag).
	Tasks string `json:"tasks,omitempty"`
	seen  time.Time
}

// loop announces the node's bundles, serves them, and withdraws the nodes gone silent.
func (c *Cluster) loop() {
	defer c.wg.Done()
	beat, stopBeat := clock.Tick(c.cfg.Clock, c.cfg.Heartbeat)
	defer stopBeat()
	check, stopCheck := clock.Tick(c.cfg.Clock, c.cfg.Silence/12)
	defer stopCheck()
	c.beat()
	for {
		select {
		case <-c.stop:
			return
		case <-beat:
			c.beat()
		case <-check:
			c.withdrawSilent()
			c.sweep()
		}
	}
}

// withdrawSilent withdraws the nodes not heard from for longer than Config.Silence.
func (c *Cluster) withdrawSilent() {
	now := c.cfg.Clock.Now()
	c.mu.Lock()
	var silent []string
	for id, m := range c.members {
		if now.Sub(m.seen) > c.cfg.Silence {
			silent = append(silent, id)
		}
	}
	c.mu.Unlock()
	for _, id := range silent {
		c.withdraw(id, fmt.Sprintf("it was not heard from for %s", c.cfg.Silence))
	}
}

// sweep drops the messages in parts whose next part stopped coming, and reports the bytes
// of parts held.
func (c *Cluster) sweep() int {
	now := time.Now()
	c.mu.Lock()
	links := make([]*link, 0, len(c.links))
	for l := range c.links {
		links = append(links, l)
	}
	served := make([]*served, 0, len(c.served))
	for _, s := range c.served {
		served = append(served, s)
	}
	c.mu.Unlock()
	held := 0
	for _, l := range links {
		held += l.sweep(now)
	}
	for _, s := range served {
		held += s.asm.sweep(now)
	}
	return held
}

// beat serves the node's own bundles on their subjects and announces them.
func (c *Cluster) beat() {
	shared := c.n.SharedBundles()
	out := member{ID: c.id, Tasks: c.n.TaskTag(), Bundles: make([]Announcement, 0, len(shared))}
	want := map[string]bool{}
	for _, b := range shared {
		want[b.Name] = true
		out.Bundles = append(out.Bundles, Announcement{Name: b.Name, Seats: b.Seats, Prefix: b.Prefix, Era: b.Era, Tools: len(b.Tools), Digest: b.Digest})
	}
	c.mu.Lock()
	for name, sub := range c.serving {
		if !want[name] {
			_ = sub.Unsubscribe()
			delete(c.serving, name)
		}
	}
	for name := range want {
		if c.serving[name] != nil {
			continue
		}
		g := c.bundleGuards[name]
		if g == nil {
			g = &guard{}
			c.bundleGuards[name] = g
		}
		sub, err := c.nc.QueueSubscribe(c.bundleSubject(name), "bundle."+name, func(m *nats.Msg) { c.serveBundle(name, g, m) })
		if err != nil {
			c.log.Warn("bundle not served to the cluster", "bundle", name, "error", err)
			continue
		}
		// Each call is one message, at most the server's max payload.
		_ = sub.SetPendingLimits(1<<16, 64<<20)
		c.serving[name] = sub
	}
	body, _ := json.Marshal(out)
	c.lastBeat = body
	c.mu.Unlock()
	if err := c.ctlOut.publish(&nats.Msg{Subject: c.subject("announce." + c.id), Data: body}); err != nil {
		c.log.Debug("heartbeat not sent", "error", err)
	}
}

// tail is the last token of a subject.
func tail(subject string) string { return subject[strings.LastIndexByte(subject, '.')+1:] }

// sender is the node a message on a subject ending in ".<node id>" comes from, once its
// signature, when the cluster has a key, says so; "" when it is refused.
func (c *Cluster) sender(msg *nats.Msg, g *guard, what string) string {
	id := tail(msg.Subject)
	signer, err := c.keys.check(msg, g)
	if err == nil && signer != "" && signer != id {
		err = errImposter
	}
	if err != nil {
		c.refusals.add(what, id, err)
		return ""
	}
	return id
}

// from is the other node a message comes from, once it is within bound bytes and its
// signature holds (see sender); "" when it is refused, the refusal counted as what, or when
// it is this node's own.
func (c *Cluster) from(msg *nats.Msg, bound int, g *guard, what string) string {
	if len(msg.Data) > bound {
		c.refusals.add(what, tail(msg.Subject), fmt.Errorf("%d bytes, over the bound of %d", len(msg.Data), bound))
		return ""
	}
	if id := c.sender(msg, g, what); id != c.id {
		return id
	}
	return ""
}

// heard takes another node's heartbeat. Its size, its signature and the names in it are
// checked before it is decoded or kept.
func (c *Cluster) heard(msg *nats.Msg) {
	id := c.from(msg, c.b.Announce, &c.announces, "heartbeat")
	if id == "" {
		return
	}
	var m member
	var dropped error
	err := json.Unmarshal(msg.Data, &m)
	switch {
	case err != nil:
	case m.ID != id:
		err = fmt.Errorf("it names node %q on the subject of node %q", m.ID, id)
	default:
		dropped, err = c.b.sift(&m)
	}
	if err != nil {
		c.refusals.add("heartbeat", id, err)
		return
	}
	if dropped != nil {
		c.refusals.add("bundle of a heartbeat", id, dropped)
	}
	if !validTag(m.Tasks) {
		m.Tasks = "" // routes no task
	}
	m.seen = c.cfg.Clock.Now()
	c.mu.Lock()
	old := c.members[m.ID]
	if old == nil && len(c.members) >= c.b.Nodes {
		c.mu.Unlock()
		c.refusals.add("heartbeat", id, fmt.Errorf("this node lists %d other nodes, the bound", c.b.Nodes))
		return
	}
	c.members[m.ID] = &m
	changed := old == nil || !reflect.DeepEqual(old.Bundles, m.Bundles)
	c.mu.Unlock()
	if old == nil {
		c.log.Info("node joined the cluster", "node", m.ID, "bundles", len(m.Bundles))
		c.wg.Add(1)
		go func() { // the requests for approval it has not heard of
			defer c.wg.Done()
			c.shareAll()
		}()
	}
	if changed {
		c.apply(fmt.Sprintf("node %q no longer serves it", m.ID))
	}
}

// maxSeats bounds the seats of one bundle in a heartbeat.
const maxSeats = 64

// sift checks a heartbeat as a node's own bundles would be checked. A heartbeat over the
// bounds is refused whole (err); a bundle whose name, seats or figures are not what a
// node announces is left out, the first reason why in dropped.
func (b Bounds) sift(m *member) (dropped, err error) {
	if !manifest.ValidName(m.ID) {
		return nil, fmt.Errorf("node id %q: use 1 to 64 of A-Z a-z 0-9 _ -", m.ID)
	}
	if len(m.Bundles) > b.Bundles {
		return nil, fmt.Errorf("%d bundles, over the bound of %d", len(m.Bundles), b.Bundles)
	}
	names := make(map[string]bool, len(m.Bundles))
	kept := m.Bundles[:0]
	for _, a := range m.Bundles {
		var why error
		switch {
		case !manifest.ValidName(a.Name):
			why = fmt.Errorf("bundle name %q: use 1 to 64 of A-Z a-z 0-9 _ - (no dots: a dot separates a bundle from its tool)", a.Name)
		case names[a.Name]:
			why = fmt.Errorf("bundle %q announced twice", a.Name)
		case len(a.Seats) > maxSeats:
			why = fmt.Errorf("bundle %q: %d seats, over the bound of %d", a.Name, len(a.Seats), maxSeats)
		case a.Tools < 0 || a.Tools > b.Tools:
			why = fmt.Errorf("bundle %q: %d tools, over the bound of %d", a.Name, a.Tools, b.Tools)
		case len(a.Digest) > 64 || len(a.Era) > 64:
			why = fmt.Errorf("bundle %q: digest or era over 64 bytes", a.Name)
		}
		for _, seat := range a.Seats {
			if why == nil && !manifest.ValidName(seat) {
				why = fmt.Errorf("bundle %q: seat %q: use 1 to 64 of A-Z a-z 0-9 _ -", a.Name, seat)
			}
		}
		if why != nil {
			if dropped == nil {
				dropped = why
			}
			continue
		}
		names[a.Name] = true
		kept = append(kept, a)
	}
	m.Bundles = kept
	return dropped, nil
}

// bye takes another node's goodbye.
func (c *Cluster) bye(msg *nats.Msg) {
	if id := c.sender(msg, &c.byes, "goodbye"); id != "" && id != c.id {
		c.withdraw(id, "it left the cluster")
	}
}

// withdraw forgets a node: the calls it holds fail at once, naming it, the calls it made
// here are cancelled, and its bundles leave the lists unless another node serves them.
func (c *Cluster) withdraw(id, why string) {
	c.mu.Lock()
	gone, known := c.members[id]
	delete(c.members, id)
	links := make([]*link, 0, len(c.links))
	for l := range c.links {
		links = append(links, l)
	}
	var orphans []*served
	for _, s := range c.served {
		if s.from == id {
			orphans = append(orphans, s)
		}
	}
	c.mu.Unlock()
	if !known {
		return
	}
	c.log.Warn("node withdrawn from the cluster", "node", id, "why", why)
	for _, l := range links {
		l.failWhere(id, func(cl *call) string {
			return fmt.Sprintf("node %q of cluster %q, which was serving this call to bundle %q, is gone (%s)", id, c.cfg.Name, l.bundle, why)
		})
		// A call no node took although it was sent well before the node fell silent went
		// to it: the server gives new calls only to nodes still connected.
		if slices.ContainsFunc(gone.Bundles, func(a Announcement) bool { return a.Name == l.bundle }) {
			l.failUntaken(c.cfg.Clock.Now().Add(-c.cfg.Silence/3), fmt.Sprintf(
				"node %q of cluster %q, which was given this call to bundle %q, is gone (%s) without taking it", id, c.cfg.Name, l.bundle, why))
		}
	}
	for _, s := range orphans {
		s.cancel(fmt.Errorf("node %q, which made the call, is gone (%s)", id, why))
	}
	c.forwardsLost(id, why)
	c.apply(fmt.Sprintf("node %q, which served it, is gone (%s)", id, why))
}
