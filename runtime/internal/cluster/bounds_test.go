package cluster

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A heartbeat is checked as a node's own bundles are: over the bounds it is refused whole;
// a bundle named, seated or counted as no node's bundle can be is left out alone.
func TestHeartbeatsAreSifted(t *testing.T) {
	b := Bounds{Bundles: 3, Tools: 10}.withDefaults(1 << 20)
	ok := func(name string) Announcement { return Announcement{Name: name, Prefix: true, Tools: 1, Digest: "d"} }
	for _, tc := range []struct {
		name    string
		m       member
		kept    []string
		dropped string // the first reason a bundle was left out
		err     string // why the whole was refused
	}{
		{"valid", member{ID: "n", Bundles: []Announcement{ok("a"), ok("b-c_D9")}}, []string{"a", "b-c_D9"}, "", ""},
		{"a node id that is no name", member{ID: "a.b", Bundles: []Announcement{ok("a")}}, nil, "", `node id "a.b"`},
		{"an empty node id", member{Bundles: []Announcement{ok("a")}}, nil, "", `node id ""`},
		{"over the bundles bound", member{ID: "n", Bundles: []Announcement{ok("a"), ok("b"), ok("c"), ok("d")}}, nil, "", "4 bundles, over the bound of 3"},
		{"a dotted name", member{ID: "n", Bundles: []Announcement{ok("pub.x"), ok("a")}}, []string{"a"}, `bundle name "pub.x"`, ""},
		{"no name", member{ID: "n", Bundles: []Announcement{ok("")}}, []string{}, `bundle name ""`, ""},
		{"wildcards and spaces", member{ID: "n", Bundles: []Announcement{ok("x*"), ok("y>"), ok("a b")}}, []string{}, `bundle name "x*"`, ""},
		{"a name twice", member{ID: "n", Bundles: []Announcement{ok("a"), ok("a")}}, []string{"a"}, `bundle "a" announced twice`, ""},
		{"a seat that is no name", member{ID: "n", Bundles: []Announcement{{Name: "a", Seats: []string{"node.lamp"}}}}, []string{}, `seat "node.lamp"`, ""},
		{"too many tools", member{ID: "n", Bundles: []Announcement{{Name: "a", Tools: 11}}}, []string{}, "11 tools, over the bound of 10", ""},
		{"a long digest", member{ID: "n", Bundles: []Announcement{{Name: "a", Digest: strings.Repeat("d", 65)}}}, []string{}, "digest or era", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dropped, err := b.sift(&tc.m)
			if fmt.Sprint(err) != "<nil>" || tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || tc.err == "" {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			kept := []string{}
			for _, a := range tc.m.Bundles {
				kept = append(kept, a.Name)
			}
			if tc.kept == nil {
				tc.kept = []string{}
			}
			if diff := cmp.Diff(tc.kept, kept); diff != "" {
				t.Errorf("bundles kept (-want +got):\n%s", diff)
			}
			if (dropped == nil) != (tc.dropped == "") || dropped != nil && !strings.Contains(dropped.Error(), tc.dropped) {
				t.Errorf("left out because %v, want %q", dropped, tc.dropped)
			}
		})
	}
}
