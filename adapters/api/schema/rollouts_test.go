package schema

import (
	"testing"

	"github.com/myriarch/myriarch/core/rollout"
)

// TestTargetCounts_AddOfTotal counts each status in its own field: the
// server fills the counts with Add, the client reads them with Of.
func TestTargetCounts_AddOfTotal(t *testing.T) {
	statuses := []rollout.TargetStatus{rollout.TargetPending, rollout.TargetWaitingWindow, rollout.TargetInProgress,
		rollout.TargetVerifying, rollout.TargetSucceeded, rollout.TargetFailed, rollout.TargetSkipped,
		rollout.TargetCancelled, rollout.TargetRolledBack}
	var c TargetCounts
	for i, s := range statuses {
		for range i + 1 {
			c.Add(s)
		}
	}
	c.Add("unknown") // not a target status: not counted
	for i, s := range statuses {
		if got := c.Of(s); got != i+1 {
			t.Errorf("Of(%s) = %d, want %d", s, got, i+1)
		}
	}
	if got := c.Of("unknown"); got != 0 {
		t.Errorf("Of(unknown) = %d, want 0", got)
	}
	if got := c.Total(); got != 45 { // 1+2+...+9
		t.Errorf("Total() = %d, want 45", got)
	}
}
