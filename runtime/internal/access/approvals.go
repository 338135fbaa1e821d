package access

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// DefaultApprovalTTL is how long an approval, and a request for one, stands when its rule
// does not say.
const DefaultApprovalTTL = 15 * time.Minute

// Approval is a rule of the access file's "approvals" list: calls to the tools it names
// run only once an approver has approved that exact call.
//
//	{"approvals": [{"tools": ["bank.transfer", "db.drop_*"], "approvers": ["ops", "sub:alice"], "ttl": "10m"}]}
type Approval struct {
	// Tools are the patterns of the tools guarded, as written.
	Tools []string
	// Approvers are who may approve: an access file client's name, "sub:<subject>" for the
	// OAuth subject of the approver's token, or "group:<name>" for a group its `groups`
	// claim names.
	Approvers []string
	// TTL is how long a request waits for a decision, and how long an approval stands once
	// given. Default DefaultApprovalTTL.
	TTL time.Duration

	tools []Pattern
}

// Approves reports whether the caller, by its client name, OAuth subject and groups, is one
// of the rule's approvers.
func (a *Approval) Approves(client, subject string, groups []string) bool {
	if client != "" && slices.Contains(a.Approvers, client) || subject != "" && slices.Contains(a.Approvers, "sub:"+subject) {
		return true
	}
	for _, g := range groups {
		if g != "" && slices.Contains(a.Approvers, "group:"+g) {
			return true
		}
	}
	return false
}

// Approval returns the first rule guarding the tool with the exposed name; false when its
// calls need no approval.
func (p *Policy) Approval(tool string) (*Approval, bool) {
	for _, a := range p.approvals {
		for _, pat := range a.tools {
			if pat.Match(tool) {
				return a, true
			}
		}
	}
	return nil, false
}

// Approvals are the file's approval rules, in the order written.
func (p *Policy) Approvals() []*Approval { return p.approvals }

// Version names the file's content: an approval given under one version does not stand
// under another, since the rules it was given under may have changed.
func (p *Policy) Version() string { return p.version }

// version is what Policy.Version returns for a file's content.
func version(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// parseApprovals reads the file's "approvals" list, when there is one.
func parseApprovals(raw json.RawMessage, known func(string) bool, fail func(string, ...any)) []*Approval {
	var raws []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &raws); err != nil {
		fail("\"approvals\" must be a list of rules, each {\"tools\": [...], \"approvers\": [...], \"ttl\": \"15m\"}")
		return nil
	}
	keys := []string{"tools", "approvers", "ttl"}
	var out []*Approval
	for i, m := range raws {
		where := fmt.Sprintf("approvals[%d]", i)
		for _, k := range unknownKeys(m, keys) {
			fail("%s: unknown key %q%s; a rule has %s", where, k, suggest(k, keys), strings.Join(keys, ", "))
		}
		a := &Approval{TTL: DefaultApprovalTTL}
		a.tools, a.Tools = patterns(m, "tools", func(f string, args ...any) { fail(where+": "+f, args...) })
		if len(a.tools) == 0 {
			fail("%s: \"tools\" must list the patterns of the tools whose calls need approval", where)
		}
		if !field(m, "approvers", &a.Approvers) || len(a.Approvers) == 0 {
			fail("%s: \"approvers\" must list who approves: client names, \"sub:<subject>\" for an OAuth subject, or \"group:<name>\" for an OAuth group", where)
		}
		for _, who := range a.Approvers {
			if !strings.HasPrefix(who, "sub:") && !strings.HasPrefix(who, "group:") && !known(who) {
				fail("%s: approver %q is no client of the file; name a client, or write \"sub:<subject>\" for an OAuth subject or \"group:<name>\" for an OAuth group", where, who)
			}
		}
		if _, ok := m["ttl"]; ok {
			var s string
			if !field(m, "ttl", &s) {
				fail("%s: \"ttl\" must be a duration such as \"15m\"", where)
			} else if d, err := time.ParseDuration(s); err != nil || d <= 0 {
				fail("%s: ttl %q is not a positive duration such as \"15m\"", where, s)
			} else {
				a.TTL = d
			}
		}
		out = append(out, a)
	}
	return out
}
