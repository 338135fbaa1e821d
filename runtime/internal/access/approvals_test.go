package access

import (
	"strings"
	"testing"
	"time"
)

func TestApprovalRulesAreReadStrictly(t *testing.T) {
	p, err := Parse([]byte(`{"clients":[{"name":"ops","allow":["*"]}],"approvals":[{"tools":["bank.*"],"approvers":["ops","sub:alice","group:treasury"],"ttl":"10m"},{"tools":["db.drop"],"approvers":["ops"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	a, ok := p.Approval("bank.transfer")
	if !ok || a.TTL != 10*time.Minute || !a.Approves("ops", "", nil) || !a.Approves("", "alice", nil) || a.Approves("desk", "bob", []string{"ops"}) ||
		!a.Approves("", "bob", []string{"staff", "treasury"}) {
		t.Errorf("bank.transfer's rule: %+v %v", a, ok)
	}
	if a, ok := p.Approval("db.drop"); !ok || a.TTL != DefaultApprovalTTL {
		t.Errorf("db.drop's rule: %+v %v", a, ok)
	}
	if _, ok := p.Approval("bank"); ok {
		t.Error("an unguarded tool has a rule")
	}
	other, _ := Parse([]byte(`{"clients":[{"name":"ops","allow":["*"]}],"approvals":[{"tools":["bank.*"],"approvers":["ops"],"ttl":"11m"}]}`))
	if p.Version() == "" || p.Version() == other.Version() {
		t.Errorf("two files have the version %q", p.Version())
	}
	for file, want := range map[string]string{
		`{"clients":[{"name":"ops","allow":["*"]}],"approvals":[{"tools":["bank.*"],"approvers":["opz"]}]}`:             `approver "opz" is no client`,
		`{"clients":[{"name":"ops","allow":["*"]}],"approvals":[{"tools":["bank.*"]}]}`:                                 `"approvers" must list who approves`,
		`{"clients":[{"name":"ops","allow":["*"]}],"approvals":[{"approvers":["ops"]}]}`:                                `"tools" must list`,
		`{"clients":[{"name":"ops","allow":["*"]}],"approvals":[{"tools":["b"],"approvers":["ops"],"ttl":"soon"}]}`:     `ttl "soon"`,
		`{"clients":[{"name":"ops","allow":["*"]}],"approvals":[{"tools":["b"],"approvers":["ops"],"approver":["x"]}]}`: `unknown key "approver"`,
	} {
		if _, err := Parse([]byte(file)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %s", file, err, want)
		}
	}
}
