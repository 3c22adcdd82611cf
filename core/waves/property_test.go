package waves

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/selector"
	"pgregory.net/rapid"
)

// drawWave is a selector wave on one of three label values or the empty
// selector ("*"), or a percent wave of 1 to 100 in any order.
func drawWave(t *rapid.T) policy.Wave {
	if rapid.Bool().Draw(t, "isSelector") {
		value := rapid.SampledFrom([]string{"a", "b", "c", "*"}).Draw(t, "value")
		if value == "*" {
			return policy.Wave{Name: "any", Selector: &selector.Selector{}}
		}
		return sel("sel-"+value, value)
	}
	return pct("pct", rapid.IntRange(1, 100).Draw(t, "percent"))
}

func TestAssign_Properties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 60).Draw(t, "agents")
		rolloutID := rapid.StringMatching(`[a-z0-9-]{1,12}`).Draw(t, "rolloutID")
		ws := rapid.SliceOfN(rapid.Custom(drawWave), 0, 5).Draw(t, "waves")
		cs, attrs := make([]Candidate, n), map[string]selector.Map{}
		for i := range cs {
			id := fmt.Sprintf("agent-%d", i)
			attrs[id] = selector.Map{canaryLabel: rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "label")}
			cs[i] = Candidate{AgentID: id, Attributes: attrs[id]}
		}
		plan := Assign(rolloutID, ws, cs)

		checkEachOnce(t, plan, n)
		checkCumulative(t, plan, n)
		checkSelectors(t, plan, attrs)
		checkHashOrder(t, plan, rolloutID)
	})
}

// checkEachOnce: every candidate is in exactly one wave, and a wave is
// skipped exactly when it has no member.
func checkEachOnce(t *rapid.T, plan Plan, n int) {
	seen := map[string]int{}
	for i, m := range plan.Members {
		for _, id := range m {
			if w, dup := seen[id]; dup {
				t.Fatalf("%s in waves %d and %d", id, w, i)
			}
			seen[id] = i
		}
		if skipped := plan.Waves[i].Status == "skipped"; skipped != (len(m) == 0) {
			t.Fatalf("wave %d: status %s with %d members", i, plan.Waves[i].Status, len(m))
		}
	}
	if len(seen) != n {
		t.Fatalf("%d of %d candidates assigned", len(seen), n)
	}
}

// checkCumulative: after a percent wave the cumulative count is exactly
// max(ceil(p×n/100), assigned before), bounded by n; the last wave has 100 %.
func checkCumulative(t *rapid.T, plan Plan, n int) {
	before := 0
	for i, w := range plan.Waves {
		after := before + len(plan.Members[i])
		if w.Selector == nil {
			goal := (w.Percent*n + 99) / 100
			if want := min(max(goal, before), n); after != want {
				t.Fatalf("wave %d (%d %%): cumulative %d, want %d", i, w.Percent, after, want)
			}
		}
		before = after
	}
	if last := plan.Waves[LastWave(plan.Waves)]; last.Selector != nil || last.Percent != 100 || before != n {
		t.Fatalf("last wave %+v ends at %d of %d", last, before, n)
	}
}

// checkSelectors: a selector wave holds only matching agents, and no agent
// that a later wave took matched it.
func checkSelectors(t *rapid.T, plan Plan, attrs map[string]selector.Map) {
	for i, w := range plan.Waves {
		if w.Selector == nil {
			continue
		}
		for j := i; j < len(plan.Members); j++ {
			for _, id := range plan.Members[j] {
				if matches := w.Selector.Matches(attrs[id]); matches != (j == i) {
					t.Fatalf("%s in wave %d, matches selector wave %d: %v", id, j, i, matches)
				}
			}
		}
	}
}

// checkHashOrder: the percent waves, read in wave order, list their members
// strictly ascending by sha256(rolloutID||agentID).
func checkHashOrder(t *rapid.T, plan Plan, rolloutID string) {
	var prev []byte
	for i, w := range plan.Waves {
		if w.Selector != nil {
			continue
		}
		for _, id := range plan.Members[i] {
			sum := sha256.Sum256([]byte(rolloutID + id))
			if prev != nil && bytes.Compare(prev, sum[:]) >= 0 {
				t.Fatalf("%s in wave %d breaks the hash order", id, i)
			}
			prev = sum[:]
		}
	}
}
