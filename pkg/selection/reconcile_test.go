package selection

import (
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/myriarch/myriarch/pkg/audit"
	"github.com/myriarch/myriarch/pkg/fleet"
)

func TestResolveVersionTarget(t *testing.T) {
	tests := []struct {
		name string
		f    *fleet.Fleet
		s    *Selection
		want Target
	}{
		{"active selection", edge(), chosen("0.162.0"), Target{"0.162.0", SourceUI}},
		{"invalidated selection", edge(), chosen("0.162.0", held), Target{"", SourceHold}},
		{"no selection, Git target", edge(), nil, Target{"0.161.0", SourceGit}},
		{"no selection, Git target with v", edge(gitTarget("v0.161.0")), nil, Target{"0.161.0", SourceGit}}, // normalized
		{"no selection, no Git target", edge(gitTarget("")), nil, Target{"", SourceNone}},
		{"unknown state is a hold", edge(), chosen("0.162.0", func(s *Selection) { s.State = "" }), Target{"", SourceHold}}, // never rolls out by accident
		{"no fleet", nil, nil, Target{"", SourceNone}},
	}
	for _, tt := range tests {
		if got := ResolveVersionTarget(tt.f, tt.s); got != tt.want {
			t.Errorf("%s: ResolveVersionTarget = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func superseded(version, before, now, reason string) *audit.Entry {
	return &audit.Entry{At: t1, Actor: "gitops", Action: "fleet.version.superseded", TargetType: "fleet", TargetID: "edge", Result: "success",
		Details: map[string]any{"version": version, "gitVersionBefore": before, "gitVersionNow": now, "commit": "c2", "reason": reason}}
}

func TestReconcile_Rules(t *testing.T) {
	tests := []struct {
		name       string
		f          *fleet.Fleet
		s          *Selection
		wantRule   Rule
		wantEffect Effect
		wantAudit  *audit.Entry
	}{
		{"K4 fleet gone", nil, chosen("0.162.0"), RuleK4, Delete, &audit.Entry{At: t1, Actor: "gitops", Action: "fleet.version.removed", TargetType: "fleet", TargetID: "edge", Result: "success",
			Details: map[string]any{"version": "0.162.0", "commit": "c2", "reason": "fleet edge no longer exists in Git"}}},
		{"K4 before K1", nil, chosen("0.162.0", func(s *Selection) { s.GitVersion = "0.1.0" }), RuleK4, Delete, &audit.Entry{At: t1, Actor: "gitops", Action: "fleet.version.removed", TargetType: "fleet", TargetID: "edge", Result: "success",
			Details: map[string]any{"version": "0.162.0", "commit": "c2", "reason": "fleet edge no longer exists in Git"}}},
		{"K1 Git target changed", edge(gitTarget("0.162.0")), chosen("0.163.0"), RuleK1, Delete, superseded("0.163.0", "0.161.0", "0.162.0", "collector.version changed from 0.161.0 to 0.162.0 in Git")},
		{"K1 Git target newly set", edge(), chosen("0.163.0", func(s *Selection) { s.GitVersion = "" }), RuleK1, Delete, superseded("0.163.0", "", "0.161.0", "collector.version was set to 0.161.0 in Git")},
		{"K1 Git target removed", edge(gitTarget("")), chosen("0.163.0"), RuleK1, Delete, superseded("0.163.0", "0.161.0", "", "collector.version 0.161.0 was removed from Git")},
		{"K1 ends a hold", edge(gitTarget("0.162.0")), chosen("0.170.0", held), RuleK1, Delete, superseded("0.170.0", "0.161.0", "0.162.0", "collector.version changed from 0.161.0 to 0.162.0 in Git")},
		{"K1 before K2a", edge(gitTarget("0.162.0"), disabled), chosen("0.163.0"), RuleK1, Delete, superseded("0.163.0", "0.161.0", "0.162.0", "collector.version changed from 0.161.0 to 0.162.0 in Git")},
		{"K1 not for a v prefix", edge(gitTarget("v0.161.0")), chosen("0.162.0"), RuleK5, Unchanged, nil}, // normalized Git targets are equal
		{"K2a frame disabled", edge(disabled), chosen("0.162.0"), RuleK2a, Delete, superseded("0.162.0", "0.161.0", "0.161.0", "update.selection is disabled in Git")},
		{"K2a block missing", edge(noBlock), chosen("0.162.0"), RuleK2a, Delete, superseded("0.162.0", "0.161.0", "0.161.0", "update.selection is disabled in Git")},
		{"K2a executor none", edge(executorNone), chosen("0.162.0"), RuleK2a, Delete, superseded("0.162.0", "0.161.0", "0.161.0", "update.executor is none in Git")},
		{"K2a executor missing", edge(func(f *fleet.Fleet) { f.Update.Executor = "" }), chosen("0.162.0"), RuleK2a, Delete, superseded("0.162.0", "0.161.0", "0.161.0", "update.executor is none in Git")},
		{"K2a deletes a hold", edge(disabled), chosen("0.170.0", held), RuleK2a, Delete, superseded("0.170.0", "0.161.0", "0.161.0", "update.selection is disabled in Git")},
		{"K2a before K2b", edge(disabled, rangeFrame("<=0.161.0")), chosen("0.162.0"), RuleK2a, Delete, superseded("0.162.0", "0.161.0", "0.161.0", "update.selection is disabled in Git")},
		{"K5 inside range", edge(), chosen("0.162.0"), RuleK5, Unchanged, nil},
		{"K5 inside list", edge(listFrame("0.161.0", "0.162.0")), chosen("0.162.0"), RuleK5, Unchanged, nil},
		{"K5 downgrade and no reason are not judged", edge(requireReason, rangeFrame(">=0.100.0")), chosen("0.150.0", func(s *Selection) { s.Reason = "" }), RuleK5, Unchanged, nil}, // only checked when choosing
		{"K5 invalidated stays invalidated", edge(), chosen("0.170.0", held), RuleK5, Unchanged, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Reconcile(tt.f, *tt.s, "c2", t1)
			if got.Rule != tt.wantRule || got.Effect != tt.wantEffect || !reflect.DeepEqual(got.Audit, tt.wantAudit) {
				t.Errorf("Reconcile = %s %s %+v\nwant %s %s %+v", got.Rule, got.Effect, got.Audit, tt.wantRule, tt.wantEffect, tt.wantAudit)
			}
			if got.Effect != Invalidate && !reflect.DeepEqual(got.Selection, *tt.s) {
				t.Errorf("Selection changed without an invalidation: %+v", got.Selection)
			}
			if got.SupersedeVersionRollout {
				t.Errorf("SupersedeVersionRollout set for %s, want only for K2b", got.Rule)
			}
		})
	}
}

func TestReconcile_K2bInvalidates(t *testing.T) {
	tests := []struct {
		name, frame string
		f           *fleet.Fleet
	}{
		{"range narrowed", `versionRange "<=0.161.0"`, edge(rangeFrame("<=0.161.0"))},
		{"removed from list", "versions [0.161.0]", edge(listFrame("0.161.0"))},
	}
	for _, tt := range tests {
		got := Reconcile(tt.f, *chosen("0.162.0"), "c2", t1)
		reason := "version 0.162.0 is outside update.selection (" + tt.frame + ") as of commit c2"
		want := *chosen("0.162.0", func(s *Selection) { s.State, s.StateReason, s.UpdatedAt, s.Revision = Invalidated, reason, t1, 4 })
		wantAudit := &audit.Entry{At: t1, Actor: "gitops", Action: "fleet.version.invalidated", TargetType: "fleet", TargetID: "edge", Result: "success",
			Details: map[string]any{"version": "0.162.0", "frame": tt.frame, "commit": "c2", "reason": reason}}
		if got.Rule != RuleK2b || got.Effect != Invalidate || !reflect.DeepEqual(got.Selection, want) || !reflect.DeepEqual(got.Audit, wantAudit) {
			t.Errorf("%s: Reconcile =\n%+v\nwant selection %+v\naudit %+v", tt.name, got, want, wantAudit)
		}
		if !got.SupersedeVersionRollout || got.SupersedeReason != "the fleet no longer manages the collector version" {
			t.Errorf("%s: supersede = %v %q", tt.name, got.SupersedeVersionRollout, got.SupersedeReason)
		}
		if tgt := ResolveVersionTarget(tt.f, &got.Selection); tgt != (Target{"", SourceHold}) {
			t.Errorf("%s: target after K2b = %+v, want hold", tt.name, tgt)
		}
	}
}

func TestReconcile_WideningTheFrameDoesNotReactivate(t *testing.T) {
	narrowed := Reconcile(edge(rangeFrame("<=0.161.0")), *chosen("0.162.0"), "c2", t1)
	widened := Reconcile(edge(rangeFrame(">=0.161.0")), narrowed.Selection, "c3", t1)
	if widened.Rule != RuleK5 || widened.Selection.State != Invalidated || widened.Audit != nil {
		t.Errorf("after widening: %s %s state %s, want K5 and still invalidated", widened.Rule, widened.Effect, widened.Selection.State)
	}
}

// Reconciling the outcome again changes nothing: an invalidation is
// followed by K5 and an unchanged selection stays unchanged.
func TestReconcile_Idempotent(t *testing.T) {
	versions := []string{"", "0.160.0", "0.161.0", "0.162.0", "0.163.0-rc.1", "v0.162.0"}
	rapid.Check(t, func(t *rapid.T) {
		pick := func(label string) string { return rapid.SampledFrom(versions).Draw(t, label) }
		f := &fleet.Fleet{Name: "edge", Collector: fleet.Collector{Version: fleet.NormalizeVersion(pick("git"))},
			Update: fleet.Update{
				Executor: rapid.SampledFrom(fleet.Executors).Draw(t, "executor"),
				Selection: fleet.Frame{Enabled: rapid.Bool().Draw(t, "enabled"),
					VersionRange: rapid.SampledFrom([]string{"", ">=0.161.0", "<=0.161.0", "<<"}).Draw(t, "range"),
					Versions:     rapid.SliceOfN(rapid.SampledFrom(versions), 0, 3).Draw(t, "versions")},
			}}
		s := Selection{Fleet: "edge", Version: pick("selected"), GitVersion: pick("gitBefore"),
			State: rapid.SampledFrom([]State{Active, Invalidated}).Draw(t, "state")}
		first := Reconcile(f, s, "c", t1)
		if first.Effect == Delete {
			return
		}
		second := Reconcile(f, first.Selection, "c", t1)
		if second.Effect != Unchanged || second.Audit != nil || !reflect.DeepEqual(second.Selection, first.Selection) {
			t.Fatalf("second Reconcile = %+v after %+v", second, first)
		}
	})
}

func TestReconciled(t *testing.T) {
	if got := Reconciled(edge(disabled), chosen("0.162.0")); got != nil {
		t.Errorf("Reconciled under K2a = %+v, want nil", got)
	}
	if got := Reconciled(edge(rangeFrame("<=0.161.0")), chosen("0.162.0")); got == nil || got.State != Invalidated {
		t.Errorf("Reconciled under K2b = %+v, want invalidated", got)
	}
	if s := chosen("0.162.0"); Reconciled(edge(), s) != s {
		t.Errorf("Reconciled under K5 is not the stored selection")
	}
}
