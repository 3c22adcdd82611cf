package selection

import (
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/myriarch/myriarch/core/audit"
	"github.com/myriarch/myriarch/core/fleet"
)

func TestResolveVersionTarget(t *testing.T) {
	tests := []struct {
		name string
		f    *fleet.Fleet
		s    *Selection
		want Target
	}{
		{name: "active selection", f: edge(), s: chosen("0.162.0"), want: Target{"0.162.0", SourceUI}},
		{name: "invalidated selection", f: edge(), s: chosen("0.162.0", held), want: Target{"", SourceHold}},
		{name: "no selection, Git target", f: edge(), s: nil, want: Target{"0.161.0", SourceGit}},
		{name: "no selection, Git target with v", f: edge(gitTarget("v0.161.0")), s: nil, want: Target{"0.161.0", SourceGit}}, // normalized
		{name: "no selection, no Git target", f: edge(gitTarget("")), s: nil, want: Target{"", SourceNone}},
		{name: "unknown state is a hold", f: edge(), s: chosen("0.162.0", func(s *Selection) { s.State = "" }), want: Target{"", SourceHold}}, // never rolls out by accident
		{name: "no fleet", f: nil, s: nil, want: Target{"", SourceNone}},
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
		{name: "K4 fleet gone", f: nil, s: chosen("0.162.0"), wantRule: RuleK4, wantEffect: Delete, wantAudit: &audit.Entry{At: t1, Actor: "gitops", Action: "fleet.version.removed", TargetType: "fleet", TargetID: "edge", Result: "success",
			Details: map[string]any{"version": "0.162.0", "commit": "c2", "reason": "fleet edge no longer exists in Git"}}},
		{name: "K4 before K1", f: nil, s: chosen("0.162.0", func(s *Selection) { s.GitVersion = "0.1.0" }), wantRule: RuleK4, wantEffect: Delete, wantAudit: &audit.Entry{At: t1, Actor: "gitops", Action: "fleet.version.removed", TargetType: "fleet", TargetID: "edge", Result: "success",
			Details: map[string]any{"version": "0.162.0", "commit": "c2", "reason": "fleet edge no longer exists in Git"}}},
		{name: "K1 Git target changed", f: edge(gitTarget("0.162.0")), s: chosen("0.163.0"), wantRule: RuleK1, wantEffect: Delete, wantAudit: superseded("0.163.0", "0.161.0", "0.162.0", "collector.version changed from 0.161.0 to 0.162.0 in Git")},
		{name: "K1 Git target newly set", f: edge(), s: chosen("0.163.0", func(s *Selection) { s.GitVersion = "" }), wantRule: RuleK1, wantEffect: Delete, wantAudit: superseded("0.163.0", "", "0.161.0", "collector.version was set to 0.161.0 in Git")},
		{name: "K1 Git target removed", f: edge(gitTarget("")), s: chosen("0.163.0"), wantRule: RuleK1, wantEffect: Delete, wantAudit: superseded("0.163.0", "0.161.0", "", "collector.version 0.161.0 was removed from Git")},
		{name: "K1 ends a hold", f: edge(gitTarget("0.162.0")), s: chosen("0.170.0", held), wantRule: RuleK1, wantEffect: Delete, wantAudit: superseded("0.170.0", "0.161.0", "0.162.0", "collector.version changed from 0.161.0 to 0.162.0 in Git")},
		{name: "K1 before K2a", f: edge(gitTarget("0.162.0"), disabled), s: chosen("0.163.0"), wantRule: RuleK1, wantEffect: Delete, wantAudit: superseded("0.163.0", "0.161.0", "0.162.0", "collector.version changed from 0.161.0 to 0.162.0 in Git")},
		{name: "K1 not for a v prefix", f: edge(gitTarget("v0.161.0")), s: chosen("0.162.0"), wantRule: RuleK5, wantEffect: Unchanged, wantAudit: nil}, // normalized Git targets are equal
		{name: "K2a frame disabled", f: edge(disabled), s: chosen("0.162.0"), wantRule: RuleK2a, wantEffect: Delete, wantAudit: superseded("0.162.0", "0.161.0", "0.161.0", "update.selection is disabled in Git")},
		{name: "K2a block missing", f: edge(noBlock), s: chosen("0.162.0"), wantRule: RuleK2a, wantEffect: Delete, wantAudit: superseded("0.162.0", "0.161.0", "0.161.0", "update.selection is disabled in Git")},
		{name: "K2a executor none", f: edge(executorNone), s: chosen("0.162.0"), wantRule: RuleK2a, wantEffect: Delete, wantAudit: superseded("0.162.0", "0.161.0", "0.161.0", "update.executor is none in Git")},
		{name: "K2a executor missing", f: edge(func(f *fleet.Fleet) { f.Update.Executor = "" }), s: chosen("0.162.0"), wantRule: RuleK2a, wantEffect: Delete, wantAudit: superseded("0.162.0", "0.161.0", "0.161.0", "update.executor is none in Git")},
		{name: "K2a deletes a hold", f: edge(disabled), s: chosen("0.170.0", held), wantRule: RuleK2a, wantEffect: Delete, wantAudit: superseded("0.170.0", "0.161.0", "0.161.0", "update.selection is disabled in Git")},
		{name: "K2a before K2b", f: edge(disabled, rangeFrame("<=0.161.0")), s: chosen("0.162.0"), wantRule: RuleK2a, wantEffect: Delete, wantAudit: superseded("0.162.0", "0.161.0", "0.161.0", "update.selection is disabled in Git")},
		{name: "K5 inside range", f: edge(), s: chosen("0.162.0"), wantRule: RuleK5, wantEffect: Unchanged, wantAudit: nil},
		{name: "K5 inside list", f: edge(listFrame("0.161.0", "0.162.0")), s: chosen("0.162.0"), wantRule: RuleK5, wantEffect: Unchanged, wantAudit: nil},
		{name: "K5 downgrade and no reason are not judged", f: edge(requireReason, rangeFrame(">=0.100.0")), s: chosen("0.150.0", func(s *Selection) { s.Reason = "" }), wantRule: RuleK5, wantEffect: Unchanged, wantAudit: nil}, // only checked when choosing
		{name: "K5 invalidated stays invalidated", f: edge(), s: chosen("0.170.0", held), wantRule: RuleK5, wantEffect: Unchanged, wantAudit: nil},
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
		{name: "range narrowed", frame: `versionRange "<=0.161.0"`, f: edge(rangeFrame("<=0.161.0"))},
		{name: "removed from list", frame: "versions [0.161.0]", f: edge(listFrame("0.161.0"))},
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
