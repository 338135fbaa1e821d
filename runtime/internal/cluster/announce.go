package cluster

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/toolnode/toolnode/runtime/internal/manifest"
)

// From announcement to manifest: what a node announces of its bundles, and how the others'
// announcements become bundles of this node whose connection is a link over NATS.

// Announcement is one bundle in a heartbeat: what a node serves.
type Announcement struct {
	Name   string   `json:"name"`
	Seats  []string `json:"seats,omitempty"`
	Prefix bool     `json:"prefix"`
	Era    string   `json:"era,omitempty"`
	Tools  int      `json:"tools"`
	Digest string   `json:"digest"`
}

var unsafe = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// SetLocal makes the node's own bundles those of ms (as n.Apply would), keeping the bundles
// of the other nodes listed beside them.
func (c *Cluster) SetLocal(ms []*manifest.Manifest) {
	c.mu.Lock()
	c.local = ms
	c.mu.Unlock()
	c.apply("this node now runs it itself")
}

// apply gives the node its own bundles and those only other nodes serve. A bundle of the
// same name here wins: calls go to the node's own first. why says why bundles of other
// nodes that leave the list do: the calls still waiting for them end with it.
func (c *Cluster) apply(why string) {
	c.applyMu.Lock()
	defer c.applyMu.Unlock()
	c.mu.Lock()
	own := map[string]bool{}
	for _, m := range c.local {
		own[m.Name] = true
	}
	want := map[string]Announcement{}
	servers := map[string][]string{}
	var left []string
	var replicas, sharedBundles []string // without a key: nodes serving bundles this node serves too
	for _, id := range sortedKeys(c.members) {
		for _, a := range c.members[id].Bundles {
			if own[a.Name] {
				if c.keys.key == nil {
					replicas = appendNew(replicas, id)
					sharedBundles = appendNew(sharedBundles, a.Name)
				}
				continue
			}
			if _, seen := want[a.Name]; !seen {
				if len(want) >= c.b.RemoteBundles {
					left = append(left, a.Name)
					continue
				}
				want[a.Name] = a
			}
			servers[a.Name] = append(servers[a.Name], a.Digest)
		}
	}
	if len(left) > 0 && !slices.Equal(left, c.left) {
		c.log.Warn("bundles of other nodes left out: this node lists at most Bounds.RemoteBundles of them",
			"bound", c.b.RemoteBundles, "left_out", len(left), "first", left[0])
	}
	c.left = left
	c.noteUnkeyed(replicas, sharedBundles)
	var relist, gone []*link
	for name := range c.remote {
		if _, ok := want[name]; !ok {
			delete(c.remote, name)
			delete(c.digests, name)
			for l := range c.links {
				if l.bundle == name {
					gone = append(gone, l)
				}
			}
		}
	}
	for name, a := range want {
		prefix := a.Prefix
		m := c.remote[name]
		if m == nil || !slices.Equal(m.Seats, a.Seats) || m.Prefixed() != prefix {
			m = c.remoteManifest(a)
			c.remote[name] = m
		}
		slices.Sort(servers[name])
		digest := strings.Join(slices.Compact(servers[name]), ",")
		if old, ok := c.digests[name]; ok && old != digest {
			for l := range c.links {
				if l.bundle == name {
					relist = append(relist, l)
				}
			}
		}
		c.digests[name] = digest
	}
	all := append([]*manifest.Manifest(nil), c.local...)
	for _, name := range sortedKeys(c.remote) {
		all = append(all, c.remote[name])
	}
	c.mu.Unlock()
	for _, l := range gone {
		l.leave(fmt.Sprintf("bundle %q left cluster %q: %s", l.bundle, c.cfg.Name, why))
	}
	c.n.Apply(all)
	for _, l := range relist {
		l.listChanged()
	}
}

// servers names the other nodes that announce bundle.
func (c *Cluster) servers(bundle string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ids []string
	for _, id := range sortedKeys(c.members) {
		if slices.ContainsFunc(c.members[id].Bundles, func(a Announcement) bool { return a.Name == bundle }) {
			ids = append(ids, id)
		}
	}
	return ids
}

// remoteManifest is the manifest of a bundle other nodes serve.
func (c *Cluster) remoteManifest(a Announcement) *manifest.Manifest {
	prefix := a.Prefix
	name := a.Name
	return &manifest.Manifest{
		Name:   name,
		Seats:  slices.Clone(a.Seats),
		Prefix: &prefix,
		Start:  manifest.StartEager,
		Timeouts: manifest.Timeouts{
			Start:    10 * time.Second,
			Call:     manifest.DefaultCallTimeout,
			CallMax:  manifest.DefaultCallMaxTimeout,
			Shutdown: time.Second,
		},
		Isolation: manifest.IsolationShared,
		Link:      func() (io.ReadWriteCloser, error) { return c.openLink(name) },
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
