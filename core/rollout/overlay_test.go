package rollout

import (
	"reflect"
	"testing"
)

// Overlay puts each changed target in the place of its agent's, the last
// of an agent named twice winning, leaves out a changed target whose agent
// is not among all, and returns a copy: writing the result leaves all as
// it was.
func TestOverlay(t *testing.T) {
	all := []Target{{AgentID: "a", Status: TargetPending}, {AgentID: "b", Status: TargetPending}, {AgentID: "c", Status: TargetPending}}
	for _, tc := range []struct {
		name    string
		changed []Target
		want    []TargetStatus
	}{
		{name: "none", changed: nil, want: []TargetStatus{TargetPending, TargetPending, TargetPending}},
		{name: "one", changed: []Target{{AgentID: "b", Status: TargetInProgress}}, want: []TargetStatus{TargetPending, TargetInProgress, TargetPending}},
		{name: "an agent twice", changed: []Target{{AgentID: "c", Status: TargetInProgress}, {AgentID: "c", Status: TargetVerifying}},
			want: []TargetStatus{TargetPending, TargetPending, TargetVerifying}},
		{name: "an agent not among all", changed: []Target{{AgentID: "x", Status: TargetFailed}}, want: []TargetStatus{TargetPending, TargetPending, TargetPending}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := append([]Target(nil), all...)
			out := Overlay(all, tc.changed)
			var got []TargetStatus
			for _, o := range out {
				got = append(got, o.Status)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("statuses %v, want %v", got, tc.want)
			}
			out[0].Status = TargetFailed
			if !reflect.DeepEqual(all, before) {
				t.Fatalf("writing the result changed all: %v", all)
			}
		})
	}
}

// OverlayInto writes the changes over all itself, without a copy.
func TestOverlayInto(t *testing.T) {
	all := []Target{{AgentID: "a", Status: TargetPending}, {AgentID: "b", Status: TargetPending}}
	out := OverlayInto(all, []Target{{AgentID: "b", Status: TargetInProgress}, {AgentID: "x", Status: TargetFailed}})
	if &out[0] != &all[0] || len(out) != 2 {
		t.Fatal("OverlayInto copied all")
	}
	if all[0].Status != TargetPending || all[1].Status != TargetInProgress {
		t.Fatalf("all after: %+v", all)
	}
}
