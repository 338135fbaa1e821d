package front

import (
	"strings"
	"testing"
)

// The pool of kept results (MaxBytes) counts each client's up to its share
// (MaxClientBytes): a client past its share leaves the rest of the pool to the others, and
// the pool refuses a task only once the clients' shares fill it, until results are given
// back.
func TestTaskResultsCountAgainstThePoolUpToEachClientsShare(t *testing.T) {
	s := newTaskStore(nil, TaskOptions{MaxClientBytes: 100, MaxBytes: 150})
	admit := func(bound string) string {
		t.Helper()
		if err := s.reserve(bound, true); err != nil {
			return err.Message
		}
		return ""
	}
	if why := admit("a"); why != "" {
		t.Fatal(why)
	}
	s.charge("a", 300) // a's tasks working when it reached its share
	if why := admit("a"); !strings.Contains(why, "--max-client-task-bytes") {
		t.Errorf("client a past its share: %q, want refused by its share", why)
	}
	if why := admit("b"); why != "" {
		t.Fatalf("client b beside a past its share: %s", why)
	}
	s.charge("b", 60) // the shares now take 160 of 150
	if why := admit("c"); !strings.Contains(why, "--max-task-bytes") {
		t.Errorf("client c with the pool full: %q, want refused by the pool", why)
	}
	s.release("b", 60)
	if why := admit("c"); why != "" {
		t.Errorf("client c once b gave its results back: %s", why)
	}
	s.release("a", 300)
	s.release("c", 0)
	if s.bytes != 0 || s.shared != 0 || len(s.kept) != 0 || len(s.held) != 0 {
		t.Errorf("all given back: %d bytes, %d shared, kept %v, held %v", s.bytes, s.shared, s.kept, s.held)
	}
}
