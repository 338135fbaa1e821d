package node

import (
	"encoding/json"
	"time"
)

// Approvals across the replicas of a cluster. Every request for approval, every decision
// and every request dropped (used, refused, withdrawn, expired) is told to the other
// replicas (SharedApproval, over the cluster, signed with its key), and each keeps what it
// is told: an approver may list and decide a request on any replica, and a call resumed,
// or made again, on any replica finds its approval. A replica that dies takes nothing with
// it but the calls waiting on it; one that joins is told what the others hold.
//
// What is shared only ever moves forward: a request told again after its decision keeps
// the decision, and a request dropped stays dropped until its expiry, however late a
// replica's word of it comes, so that an approval used is never used again. Two replicas
// given the same approved call at the same instant, before either heard of the other's
// use, may both run it: the window is the cluster's one-way latency.

// SharedApproval is a request for approval as the replicas of a cluster tell each other of
// it: the request whole, or its id and expiry once it is dropped.
type SharedApproval struct {
	// Dropped says the request is gone (used, refused, withdrawn or expired).
	Dropped bool `json:"dropped,omitempty"`
	// ID names the request.
	ID string `json:"id"`
	// Caller, Tool, Arguments, Digest and Version are the call's binding.
	Caller    string          `json:"caller,omitempty"`
	Tool      string          `json:"tool,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Digest    string          `json:"arguments_digest,omitempty"`
	Version   string          `json:"policy_version,omitempty"`
	// State is "waiting", "approved" or "refused"; By and Reason the decision's.
	State  string `json:"state,omitempty"`
	By     string `json:"by,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Expires is when the request, or the approval, lapses.
	Expires time.Time `json:"expires"`
	// Approvers and TTL are the rule's the request was made under.
	Approvers []string      `json:"approvers,omitempty"`
	TTL       time.Duration `json:"ttl,omitempty"`
}

// ShareApprovals has share told of every change of the node's requests for approval, for
// the other replicas of its cluster (which give it to ApplyApproval). share must not
// block: it is called with the store locked.
func (n *Node) ShareApprovals(share func(SharedApproval)) {
	n.approvals.mu.Lock()
	defer n.approvals.mu.Unlock()
	n.approvals.init()
	n.approvals.share = share
}

// put tells the other replicas of a, made or decided here; the caller holds s.mu.
func (s *approvals) put(a *approval) {
	if s.share == nil {
		return
	}
	s.share(SharedApproval{ID: a.ID, Caller: a.Caller, Tool: a.Tool, Arguments: a.Arguments, Digest: a.Digest, Version: a.Version,
		State: a.State, By: a.By, Reason: a.Reason, Expires: a.Expires, Approvers: a.approvers, TTL: a.ttl})
}

// ShareAll tells share of every request the node holds: for a replica that joined.
func (n *Node) ShareAll() {
	s := &n.approvals
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.byID {
		s.put(a)
	}
}

// ApplyApproval takes what another replica tells of a request for approval. It is not
// told again, nor written in this node's audit log: the replica where it happened did
// both.
func (n *Node) ApplyApproval(sa SharedApproval) {
	s := &n.approvals
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	now := s.clock()
	if sa.ID == "" || !now.Before(sa.Expires) {
		return
	}
	if _, gone := s.dropped[sa.ID]; gone {
		return
	}
	a := s.byID[sa.ID]
	if sa.Dropped {
		if a != nil {
			delete(s.byID, a.ID)
			if s.byCall[a.key()] == a {
				delete(s.byCall, a.key())
			}
			a.gone = "used, refused or withdrawn on another replica"
			a.settled()
		}
		if len(s.dropped) < 4*MaxApprovals {
			s.dropped[sa.ID] = sa.Expires
		}
		return
	}
	switch sa.State {
	case "waiting", "approved", "refused":
	default:
		return
	}
	if a == nil {
		if len(s.byID) >= MaxApprovals {
			s.sweep(now)
			if len(s.byID) >= MaxApprovals {
				return
			}
		}
		a = &approval{PendingApproval: PendingApproval{ID: sa.ID, Caller: sa.Caller, Tool: sa.Tool, Arguments: sa.Arguments,
			Digest: sa.Digest, Version: sa.Version, Expires: sa.Expires}, State: "waiting", approvers: sa.Approvers, ttl: sa.TTL, done: make(chan struct{})}
		s.byID[a.ID] = a
		if old := s.byCall[a.key()]; old == nil || old.State == "waiting" && a.State != "waiting" {
			s.byCall[a.key()] = a
		}
	}
	if a.State == "waiting" && sa.State != "waiting" { // only forward
		a.State, a.By, a.Reason, a.Expires = sa.State, sa.By, sa.Reason, sa.Expires
		s.byCall[a.key()] = a
		a.settled()
	}
}
