package executor

import (
	"regexp"
	"testing"
)

func TestDeliveryID_DeterministicAndDistinct(t *testing.T) {
	base := DeliveryID("r-1", "a00", 1, OpStart)
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(base) {
		t.Fatalf("id %q, want a version 5 UUID", base)
	}
	if again := DeliveryID("r-1", "a00", 1, OpStart); again != base {
		t.Fatalf("a retry of the same call got %q, want %q", again, base)
	}
	for _, c := range []struct {
		name               string
		rolloutID, agentID string
		attempt            int
		operation          string
	}{
		{name: "another rollout", rolloutID: "r-2", agentID: "a00", attempt: 1, operation: OpStart},
		{name: "another agent", rolloutID: "r-1", agentID: "a01", attempt: 1, operation: OpStart},
		{name: "the next attempt", rolloutID: "r-1", agentID: "a00", attempt: 2, operation: OpStart},
		{name: "a reset", rolloutID: "r-1", agentID: "a00", attempt: 1, operation: OpReset},
		{name: "shifted boundary", rolloutID: "r-1a", agentID: "00", attempt: 1, operation: OpStart},
	} {
		if got := DeliveryID(c.rolloutID, c.agentID, c.attempt, c.operation); got == base {
			t.Errorf("%s: same id %q as the base call", c.name, got)
		}
	}
}
