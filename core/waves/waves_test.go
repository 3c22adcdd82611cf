package waves

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/selector"
)

const canaryLabel = "labels.wave"

func pct(name string, percent int) policy.Wave { return policy.Wave{Name: name, Percent: percent} }

func sel(name, value string) policy.Wave {
	return policy.Wave{Name: name, Selector: &selector.Selector{MatchAttributes: map[string]string{canaryLabel: value}}}
}

// fleet makes agents agent-00, agent-01, ...; the first canaries carry the
// canary label.
func fleet(n, canaries int) []Candidate {
	out := make([]Candidate, n)
	for i := range out {
		attrs := selector.Map{"host.name": fmt.Sprintf("h%d", i)}
		if i < canaries {
			attrs[canaryLabel] = "canary"
		}
		out[i] = Candidate{AgentID: fmt.Sprintf("agent-%02d", i), Attributes: attrs}
	}
	return out
}

func ids(cs []Candidate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.AgentID
	}
	return out
}

// refOrder is the reference: sort the IDs by the sha256 of the plain string
// concatenation, compared bytewise.
func refOrder(rolloutID string, agentIDs []string) []string {
	out := slices.Clone(agentIDs)
	sort.Slice(out, func(i, j int) bool {
		a, b := sha256.Sum256([]byte(rolloutID+out[i])), sha256.Sum256([]byte(rolloutID+out[j]))
		return bytes.Compare(a[:], b[:]) < 0
	})
	return out
}

func sizes(p Plan) []int {
	out := make([]int, len(p.Members))
	for i, m := range p.Members {
		out[i] = len(m)
	}
	return out
}

func statuses(p Plan) []rollout.WaveStatus {
	out := make([]rollout.WaveStatus, len(p.Waves))
	for i, w := range p.Waves {
		out[i] = w.Status
	}
	return out
}

func names(p Plan) []string {
	out := make([]string, len(p.Waves))
	for i, w := range p.Waves {
		out[i] = w.Name
	}
	return out
}

// TestAssign_PinnedOrder fails when the hash input changes (a separator, the
// order of the two strings): sha256("r1a4") < "r1a3" < "r1a2" < "r1a1" < "r1a5".
func TestAssign_PinnedOrder(t *testing.T) {
	cs := []Candidate{{AgentID: "a1"}, {AgentID: "a2"}, {AgentID: "a3"}, {AgentID: "a4"}, {AgentID: "a5"}}
	got := Assign("r1", []policy.Wave{pct("one", 20), pct("three", 60), pct("all", 100)}, cs).Members
	want := [][]string{{"a4"}, {"a3", "a2"}, {"a1", "a5"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("members = %v, want %v", got, want)
	}
}

func TestAssign_PercentFollowsSha256(t *testing.T) {
	tests := []struct {
		rolloutID string
		n         int
		percents  []int
		sizes     []int
	}{
		{rolloutID: "r-1", n: 10, percents: []int{10, 50, 100}, sizes: []int{1, 4, 5}},     // the usual canary ladder
		{rolloutID: "r-2", n: 17, percents: []int{5, 34, 100}, sizes: []int{1, 5, 11}},     // 0.85 → 1; 5.78 → 6 cumulative
		{rolloutID: "01JABCDEF", n: 40, percents: []int{25, 75}, sizes: []int{10, 20, 10}}, // rest takes the last quarter
		{rolloutID: "x", n: 1, percents: []int{1, 2, 100}, sizes: []int{1, 0, 0}},          // one agent fills the first wave
	}
	for _, tt := range tests {
		t.Run(tt.rolloutID, func(t *testing.T) {
			var ws []policy.Wave
			for i, p := range tt.percents {
				ws = append(ws, pct(fmt.Sprint("w", i), p))
			}
			cs := fleet(tt.n, 0)
			plan := Assign(tt.rolloutID, ws, cs)
			order, start := refOrder(tt.rolloutID, ids(cs)), 0
			if !reflect.DeepEqual(sizes(plan), tt.sizes) {
				t.Fatalf("sizes = %v, want %v", sizes(plan), tt.sizes)
			}
			for i, size := range tt.sizes {
				if want := order[start : start+size]; !slices.Equal(plan.Members[i], want) {
					t.Errorf("wave %d = %v, want %v", i, plan.Members[i], want)
				}
				start += size
			}
		})
	}
}

func TestAssign_ShareBoundary(t *testing.T) {
	tests := []struct{ n, percent, want int }{
		{n: 10, percent: 25, want: 3},    // 2.5 → 3
		{n: 4, percent: 25, want: 1},     // exactly 1
		{n: 3, percent: 34, want: 2},     // 1.02 → 2
		{n: 3, percent: 33, want: 1},     // 0.99 → 1
		{n: 100, percent: 1, want: 1},    // exactly 1
		{n: 101, percent: 1, want: 2},    // 1.01 → 2
		{n: 1, percent: 1, want: 1},      // a single agent is never left out of a non-empty wave
		{n: 200, percent: 50, want: 100}, // exactly half
		{n: 201, percent: 50, want: 101}, // 100.5 → 101
		{n: 7, percent: 100, want: 7},    // everything, no rest wave
	}
	for _, tt := range tests {
		plan := Assign("r", []policy.Wave{pct("first", tt.percent)}, fleet(tt.n, 0))
		if got := len(plan.Members[0]); got != tt.want {
			t.Errorf("%d agents at %d%%: first wave has %d, want %d", tt.n, tt.percent, got, tt.want)
		}
	}
}

func TestAssign_RestWave(t *testing.T) {
	tests := []struct {
		name  string
		ws    []policy.Wave
		names []string
		sizes []int
	}{
		{name: "after percent below 100", ws: []policy.Wave{pct("half", 50)}, names: []string{"half", "rest"}, sizes: []int{2, 2}},
		{name: "after selector wave", ws: []policy.Wave{sel("canary", "canary")}, names: []string{"canary", "rest"}, sizes: []int{1, 3}},
		{name: "after selector wave that took all", ws: []policy.Wave{{Name: "all", Selector: &selector.Selector{}}}, names: []string{"all", "rest"}, sizes: []int{4, 0}},
		{name: "no waves at all", ws: nil, names: []string{"rest"}, sizes: []int{4}},
		{name: "not after 100 percent", ws: []policy.Wave{pct("few", 10), pct("all", 100)}, names: []string{"few", "all"}, sizes: []int{1, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := Assign("r", tt.ws, fleet(4, 1))
			if !slices.Equal(names(plan), tt.names) || !slices.Equal(sizes(plan), tt.sizes) {
				t.Fatalf("waves %v sizes %v, want %v %v", names(plan), sizes(plan), tt.names, tt.sizes)
			}
			last := plan.Waves[len(plan.Waves)-1]
			wantImplicit := len(tt.names) > len(tt.ws)
			if last.Implicit != wantImplicit {
				t.Fatalf("last wave implicit = %v, want %v", last.Implicit, wantImplicit)
			}
			if want := (rollout.Wave{Index: len(tt.ws), Name: "rest", Percent: 100, Implicit: true, Status: last.Status}); wantImplicit && !reflect.DeepEqual(last, want) {
				t.Errorf("rest wave = %+v, want %+v", last, want)
			}
		})
	}
}

func TestAssign_SelectorWaves(t *testing.T) {
	tests := []struct {
		name     string
		ws       []policy.Wave
		sizes    []int
		statuses []rollout.WaveStatus
	}{
		{name: "canaries count toward the later share", ws: []policy.Wave{sel("canary", "canary"), pct("p20", 20), pct("p50", 50), pct("all", 100)},
			sizes: []int{3, 0, 2, 5}, statuses: []rollout.WaveStatus{"pending", "skipped", "pending", "pending"}}, // 3 ≥ 2, then 5 - 3
		{name: "no match is skipped", ws: []policy.Wave{sel("none", "nobody"), pct("all", 100)},
			sizes: []int{0, 10}, statuses: []rollout.WaveStatus{"skipped", "pending"}}, // the label value matches nobody
		{name: "a selector wins over a percent", ws: []policy.Wave{{Name: "both", Selector: sel("", "canary").Selector, Percent: 100}},
			sizes: []int{3, 7}, statuses: []rollout.WaveStatus{"pending", "pending"}}, // the 3 canaries, then rest
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := Assign("r", tt.ws, fleet(10, 3))
			if !slices.Equal(sizes(plan), tt.sizes) || !slices.Equal(statuses(plan), tt.statuses) {
				t.Fatalf("sizes %v statuses %v, want %v %v", sizes(plan), statuses(plan), tt.sizes, tt.statuses)
			}
		})
	}
}

// TestAssign_SelectorAfterPercent: the canary wave takes the canaries the
// 50 % wave left, and the 50 % wave took exactly 5 whatever they were.
func TestAssign_SelectorAfterPercent(t *testing.T) {
	plan := Assign("r", []policy.Wave{pct("p50", 50), sel("canary", "canary"), pct("all", 100)}, fleet(10, 3))
	canaries := []string{"agent-00", "agent-01", "agent-02"}
	if len(plan.Members[0]) != 5 {
		t.Fatalf("p50 has %d, want 5", len(plan.Members[0]))
	}
	for _, id := range canaries {
		in50, inCanary := slices.Contains(plan.Members[0], id), slices.Contains(plan.Members[1], id)
		if in50 == inCanary {
			t.Errorf("%s: in p50 %v, in canary %v; want exactly one", id, in50, inCanary)
		}
	}
	if got := len(plan.Members[1]) + len(plan.Members[2]); got != 5 {
		t.Errorf("canary + rest = %d, want 5", got)
	}
}

func TestAssign_ZeroCandidates(t *testing.T) {
	plan := Assign("r", []policy.Wave{sel("canary", "canary"), pct("p10", 10), pct("p50", 50)}, nil)
	want := []rollout.WaveStatus{"skipped", "skipped", "skipped", "skipped"} // three waves and rest
	if !slices.Equal(statuses(plan), want) || !slices.Equal(sizes(plan), []int{0, 0, 0, 0}) {
		t.Fatalf("statuses %v sizes %v, want all skipped and empty", statuses(plan), sizes(plan))
	}
}

func TestAssign_CopiesWaveFields(t *testing.T) {
	ws := []policy.Wave{sel("canary", "canary"), {Name: "rest", Percent: 100, RequireApproval: true}}
	plan := Assign("r", ws, fleet(3, 1))
	want := []rollout.Wave{
		{Index: 0, Name: "canary", Selector: ws[0].Selector, Status: rollout.WavePending},
		{Index: 1, Name: "rest", Percent: 100, RequireApproval: true, Status: rollout.WavePending},
	}
	if !reflect.DeepEqual(plan.Waves, want) {
		t.Fatalf("waves = %+v, want %+v", plan.Waves, want)
	}
	if plan.Waves[0].Selector == ws[0].Selector {
		t.Error("the rollout wave shares its selector with the policy")
	}
}

func TestAssign_Deterministic(t *testing.T) {
	ws := []policy.Wave{sel("canary", "canary"), pct("p10", 10), pct("p50", 50)}
	cs := fleet(30, 2)
	first := Assign("r-1", ws, cs)
	if again := Assign("r-1", ws, cs); !reflect.DeepEqual(first, again) {
		t.Fatal("same input gave a different plan")
	}
	reversed := slices.Clone(cs)
	slices.Reverse(reversed)
	if other := Assign("r-1", ws, reversed); !reflect.DeepEqual(first, other) {
		t.Fatal("the order of the candidates changed the plan")
	}
	if other := Assign("r-2", ws, cs); reflect.DeepEqual(first.Members, other.Members) {
		t.Fatal("another rollout id gave the same order")
	}
}

func TestAssign_RepeatedAgentCountsOnce(t *testing.T) {
	cs := []Candidate{
		{AgentID: "a", Attributes: selector.Map{canaryLabel: "canary"}},
		{AgentID: "b"}, // no attributes at all: matches no non-empty selector
		{AgentID: "a"}, // repeated: ignored, the first one's attributes count
	}
	plan := Assign("r", []policy.Wave{sel("canary", "canary"), pct("all", 100)}, cs)
	if want := [][]string{{"a"}, {"b"}}; !reflect.DeepEqual(plan.Members, want) {
		t.Fatalf("members = %v, want %v", plan.Members, want)
	}
}

func TestLastWave(t *testing.T) {
	tests := []struct {
		ws   []policy.Wave
		want int
	}{
		{ws: []policy.Wave{pct("all", 100)}, want: 0},         // the policy's own last wave
		{ws: []policy.Wave{pct("few", 10)}, want: 1},          // the implicit rest wave
		{ws: []policy.Wave{sel("canary", "canary")}, want: 1}, // rest after a selector wave
		{ws: nil, want: 0}, // rest only
	}
	for _, tt := range tests {
		if got := LastWave(Assign("r", tt.ws, fleet(3, 1)).Waves); got != tt.want {
			t.Errorf("LastWave(%v) = %d, want %d", tt.ws, got, tt.want)
		}
	}
	if got := LastWave(nil); got != -1 {
		t.Errorf("LastWave(nil) = %d, want -1", got)
	}
}

func TestPlan_Targets(t *testing.T) {
	cs := []Candidate{{AgentID: "a1", Attributes: selector.Map{canaryLabel: "canary"}}, {AgentID: "a2"}}
	plan := Assign("r1", []policy.Wave{sel("canary", "canary")}, cs)
	got := plan.Targets("r1", func(id string) string { return "from-" + id }, "h2")
	want := []rollout.Target{
		{RolloutID: "r1", AgentID: "a1", Wave: 0, Status: rollout.TargetPending, Attempt: 1, FromRef: "from-a1", ToRef: "h2"},
		{RolloutID: "r1", AgentID: "a2", Wave: 1, Status: rollout.TargetPending, Attempt: 1, FromRef: "from-a2", ToRef: "h2"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("targets = %+v, want %+v", got, want)
	}
}
