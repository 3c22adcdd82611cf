package planner

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/audit"
	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/executorobject"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/selection"
)

var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

func edgeFleet() *fleet.Fleet {
	return &fleet.Fleet{Name: "edge", Collector: fleet.Collector{Version: "0.161.0"}, Config: fleet.Config{Hash: "h2"},
		Update:  fleet.Update{Executor: fleet.ExecutorUpdater, Selection: fleet.Frame{Enabled: true, VersionRange: ">=0.160.0, <=0.163.0"}},
		Rollout: fleet.RolloutPolicies{ConfigPolicy: "cfg", VersionPolicy: "ver"}}
}

// agents builds n agents on the old hash and version.
func agents(n int) []agent.Agent {
	out := make([]agent.Agent, n)
	for i := range out {
		out[i] = agent.Agent{ID: fmt.Sprintf("a%d", i), Fleet: "edge", Online: true, DesiredHash: "h1", ServiceVersion: "0.160.0", TargetVersion: "0.161.0"}
	}
	return out
}

func input(k policy.Kind, as []agent.Agent) Input {
	return Input{FleetName: "edge", Fleet: edgeFleet(), Kind: k, Commit: "c9", Agents: as, NewRolloutID: "r-new", Now: t0,
		Policies: map[string]policy.Policy{"cfg": {Name: "cfg"}, "ver": {Name: "ver"}, "ui": {Name: "ui"}}}
}

func targetIDs(ts []rollout.Target) []string {
	var ids []string
	for _, t := range ts {
		ids = append(ids, t.AgentID)
	}
	return ids
}

func TestDecide_CreatesConfigRolloutForRelevantAgents(t *testing.T) {
	as := agents(3)
	as[1].DesiredHash = "h2" // already on the assigned hash
	as[2].DesiredHash = ""   // no desired hash: bootstrap rule
	d := Decide(input(policy.KindConfig, as))
	if d.Created == nil {
		t.Fatalf("no rollout created: %s", d.Note)
	}
	r := d.Created.Rollout
	if r.ID != "r-new" || r.ToRef != "h2" || r.Origin != rollout.OriginGitOps || r.Policy.Name != "cfg" || r.Kind != policy.KindConfig {
		t.Fatalf("rollout %+v", r)
	}
	if ids := targetIDs(d.Created.Targets); len(ids) != 1 || ids[0] != "a0" || d.Created.Targets[0].FromRef != "h1" {
		t.Fatalf("targets %+v, want only a0 from h1", d.Created.Targets)
	}
	if len(d.Bootstrap) != 1 || d.Bootstrap[0] != "a2" {
		t.Fatalf("bootstrap %v, want [a2]", d.Bootstrap)
	}
	if len(d.Audit) != 1 || d.Audit[0].Action != audit.ActionRolloutCreate || d.Audit[0].Actor != audit.ActorGitOps {
		t.Fatalf("audit %+v, want rollout.create by gitops", d.Audit)
	}
}

func TestDecide_NoRelevantAgent_NoRollout(t *testing.T) {
	as := agents(2)
	for i := range as {
		as[i].DesiredHash = "h2"
	}
	if d := Decide(input(policy.KindConfig, as)); d.Created != nil {
		t.Fatal("a rollout without relevant agents must not be created")
	}
}

func TestDecide_VersionRelevance(t *testing.T) {
	cases := []struct {
		name string
		mut  func(*Input)
		want int // targets created
	}{
		{name: "git target differs", mut: func(in *Input) {}, want: 2},
		{name: "executor none", mut: func(in *Input) { in.Fleet.Update.Executor = fleet.ExecutorNone }, want: 0},
		{name: "no git target", mut: func(in *Input) { in.Fleet.Collector.Version = "" }, want: 0},
		{name: "hold", mut: func(in *Input) {
			in.Selection = &selection.Selection{Fleet: "edge", Version: "0.162.0", State: selection.Invalidated, GitVersion: "0.161.0"}
		}, want: 0},
		{name: "one agent already on target", mut: func(in *Input) { in.Agents[0].ServiceVersion = "0.161.0" }, want: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := input(policy.KindVersion, agents(2))
			c.mut(&in)
			d := Decide(in)
			got := 0
			if d.Created != nil {
				got = len(d.Created.Targets)
			}
			if got != c.want {
				t.Fatalf("created %d targets, want %d (%s)", got, c.want, d.Note)
			}
		})
	}
}

func TestDecide_Exclusions(t *testing.T) {
	fin := t0.Add(-time.Hour)
	last := func(k policy.Kind, st rollout.TargetStatus, rs rollout.Status, code, toRef string) *LastTarget {
		return &LastTarget{Target: rollout.Target{AgentID: "a0", Status: st, ReasonCode: code, ToRef: toRef, FinishedAt: &fin}, RolloutStatus: rs}
	}
	cases := []struct {
		name      string
		kind      policy.Kind
		last      *LastTarget
		connected time.Time
		included  bool
		catchUp   bool
	}{
		{name: "no last target", kind: policy.KindConfig, last: nil, connected: time.Time{}, included: true, catchUp: false},
		{name: "failed", kind: policy.KindConfig, last: last(policy.KindConfig, rollout.TargetFailed, rollout.Completed, "", "h2"), connected: time.Time{}, included: false, catchUp: false},
		{name: "rolled_back", kind: policy.KindVersion, last: last(policy.KindVersion, rollout.TargetRolledBack, rollout.RolledBack, "", "0.161.0"), connected: time.Time{}, included: false, catchUp: false},
		{name: "failed for another target", kind: policy.KindConfig, last: last(policy.KindConfig, rollout.TargetFailed, rollout.Completed, "", "h-older"), connected: time.Time{}, included: true, catchUp: false},
		{name: "cancelled in aborted", kind: policy.KindConfig, last: last(policy.KindConfig, rollout.TargetCancelled, rollout.Aborted, "", "h2"), connected: time.Time{}, included: false, catchUp: false},
		{name: "cancelled in rolling_back", kind: policy.KindConfig, last: last(policy.KindConfig, rollout.TargetCancelled, rollout.RollingBack, "", "h2"), connected: time.Time{}, included: false, catchUp: false},
		{name: "cancelled in rolled_back", kind: policy.KindVersion, last: last(policy.KindVersion, rollout.TargetCancelled, rollout.RolledBack, "", "0.161.0"), connected: time.Time{}, included: false, catchUp: false},
		{name: "cancelled by supersede", kind: policy.KindConfig, last: last(policy.KindConfig, rollout.TargetCancelled, rollout.Superseded, CodeSuperseded, "h2"), connected: time.Time{}, included: true, catchUp: false},
		{name: "config skipped in completed: catch-up", kind: policy.KindConfig, last: last(policy.KindConfig, rollout.TargetSkipped, rollout.Completed, engine.SkipOffline, "h2"), connected: time.Time{}, included: false, catchUp: true},
		{name: "version skipped otherwise: relevant", kind: policy.KindVersion, last: last(policy.KindVersion, rollout.TargetSkipped, rollout.Completed, engine.SkipLeftFleet, "0.161.0"), connected: time.Time{}, included: true, catchUp: false},
		{name: "version skipped offline, not back", kind: policy.KindVersion, last: last(policy.KindVersion, rollout.TargetSkipped, rollout.Completed, engine.SkipOffline, "0.161.0"), connected: fin.Add(-time.Minute), included: false, catchUp: false},
		{name: "version skipped offline, reconnected", kind: policy.KindVersion, last: last(policy.KindVersion, rollout.TargetSkipped, rollout.Completed, engine.SkipOffline, "0.161.0"), connected: fin.Add(time.Minute), included: true, catchUp: false},
		{name: "config skipped offline in rolled_back", kind: policy.KindConfig, last: last(policy.KindConfig, rollout.TargetSkipped, rollout.RolledBack, engine.SkipOffline, "h2"), connected: time.Time{}, included: false, catchUp: false},
		{name: "version skipped offline in rolled_back, reconnected", kind: policy.KindVersion, last: last(policy.KindVersion, rollout.TargetSkipped, rollout.RolledBack, engine.SkipOffline, "0.161.0"), connected: fin.Add(time.Minute), included: false, catchUp: false},
		{name: "version skipped offline in aborted", kind: policy.KindVersion, last: last(policy.KindVersion, rollout.TargetSkipped, rollout.Aborted, engine.SkipOffline, "0.161.0"), connected: fin.Add(time.Minute), included: false, catchUp: false},
		{name: "config skipped (left fleet) in rolling_back", kind: policy.KindConfig, last: last(policy.KindConfig, rollout.TargetSkipped, rollout.RollingBack, engine.SkipLeftFleet, "h2"), connected: time.Time{}, included: false, catchUp: false},
		{name: "succeeded earlier (agent drifted)", kind: policy.KindConfig, last: last(policy.KindConfig, rollout.TargetSucceeded, rollout.Completed, "", "h2"), connected: time.Time{}, included: true, catchUp: false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			as := agents(2)
			as[0].ConnectedAt = c.connected
			in := input(c.kind, as)
			if c.last != nil {
				in.LastTargets = map[string]LastTarget{"a0": *c.last}
			}
			d := Decide(in)
			got := false
			if d.Created != nil {
				for _, tg := range d.Created.Targets {
					got = got || tg.AgentID == "a0"
				}
			}
			if got != c.included {
				t.Fatalf("a0 included %v, want %v", got, c.included)
			}
			if gotCU := len(d.CatchUp) == 1 && d.CatchUp[0] == "a0"; gotCU != c.catchUp {
				t.Fatalf("catch-up %v, want a0 %v", d.CatchUp, c.catchUp)
			}
		})
	}
}

// active builds an active rollout toward toRef with one target per agent in the given statuses.
func active(k policy.Kind, st rollout.Status, toRef string, statuses ...rollout.TargetStatus) *Active {
	a := &Active{Rollout: rollout.Rollout{ID: "r-old", Fleet: "edge", Kind: k, Status: st, ToRef: toRef,
		Waves: []rollout.Wave{{Name: "all", Status: rollout.WaveRunning}}}}
	for i, s := range statuses {
		a.Targets = append(a.Targets, rollout.Target{RolloutID: "r-old", AgentID: fmt.Sprintf("a%d", i), Status: s, ToRef: toRef, Attempt: 1})
	}
	return a
}

func TestDecide_Supersede(t *testing.T) {
	cases := []struct {
		name       string
		act        *Active
		superseded bool
	}{
		{name: "running, open target on old hash", act: active(policy.KindConfig, rollout.Running, "h1x", rollout.TargetInProgress), superseded: true},
		{name: "pending", act: active(policy.KindConfig, rollout.Pending, "h1x", rollout.TargetPending), superseded: true},
		{name: "waiting_approval", act: active(policy.KindConfig, rollout.WaitingApproval, "h1x", rollout.TargetPending), superseded: true},
		{name: "paused, only failed targets count", act: active(policy.KindConfig, rollout.Paused, "h1x", rollout.TargetFailed, rollout.TargetSucceeded), superseded: true},
		{name: "running, only failed targets: its toRef differs", act: active(policy.KindConfig, rollout.Running, "h1x", rollout.TargetFailed), superseded: true},
		{name: "paused with nothing open: its toRef differs", act: active(policy.KindConfig, rollout.Paused, "h1x", rollout.TargetSucceeded, rollout.TargetSucceeded), superseded: true},
		{name: "waiting_approval, nothing started yet in the next wave", act: active(policy.KindConfig, rollout.WaitingApproval, "h1x", rollout.TargetSucceeded), superseded: true},
		{name: "failed: never", act: active(policy.KindConfig, rollout.Failed, "h1x", rollout.TargetInProgress), superseded: false},
		{name: "rolling_back: never", act: active(policy.KindConfig, rollout.RollingBack, "h1x", rollout.TargetVerifying), superseded: false},
		{name: "same target", act: active(policy.KindConfig, rollout.Running, "h2", rollout.TargetInProgress), superseded: false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := input(policy.KindConfig, agents(2))
			in.Active = c.act
			d := Decide(in)
			got := d.Ended != nil && d.Ended.Rollout.Status == rollout.Superseded
			if got != c.superseded {
				t.Fatalf("superseded %v, want %v (%s)", got, c.superseded, d.Note)
			}
			if !c.superseded {
				if d.Created != nil {
					t.Fatal("no rollout may be created while one is active")
				}
				return
			}
			for _, tg := range d.Ended.Cancelled {
				if tg.Status != rollout.TargetCancelled || tg.ReasonCode != CodeSuperseded {
					t.Fatalf("cancelled target %+v", tg)
				}
			}
			if d.Created == nil || d.Created.Rollout.ToRef != "h2" {
				t.Fatal("a new rollout toward the current hash must replace the superseded one")
			}
			for _, w := range d.Ended.Rollout.Waves {
				if w.Status == rollout.WaveRunning || w.Status == rollout.WaveWaitingApproval {
					t.Fatalf("wave %q of the superseded rollout is still %s", w.Name, w.Status)
				}
			}
		})
	}
}

func TestDecide_SupersedeVersion_CancelsExecutor(t *testing.T) {
	in := input(policy.KindVersion, agents(2))
	in.Active = active(policy.KindVersion, rollout.Running, "0.162.0", rollout.TargetInProgress, rollout.TargetVerifying)
	d := Decide(in)
	if d.Ended == nil || len(d.Ended.Orders) != 1 || d.Ended.Orders[0].Kind != engine.OrderCancel || d.Ended.Orders[0].AgentID != "a0" {
		t.Fatalf("ended %+v, want one executor cancel for the in-progress target", d.Ended)
	}
	if len(d.Ended.Cancelled) != 2 {
		t.Fatalf("cancelled %d targets, want 2", len(d.Ended.Cancelled))
	}
}

func TestDecide_K2b_SupersedesWithSpecReason(t *testing.T) {
	in := input(policy.KindVersion, agents(1))
	in.Fleet.Update.Selection.VersionRange = ">=0.160.0, <=0.161.0" // 0.163.0 left the frame
	in.Selection = &selection.Selection{Fleet: "edge", Version: "0.163.0", State: selection.Active, GitVersion: "0.161.0", SelectedBy: "user:alice"}
	in.Active = active(policy.KindVersion, rollout.Running, "0.163.0", rollout.TargetInProgress)
	d := Decide(in)
	if d.Reconcile == nil || d.Reconcile.Rule != selection.RuleK2b {
		t.Fatalf("reconcile %+v, want K2b", d.Reconcile)
	}
	if d.Ended == nil || d.Ended.Rollout.Status != rollout.Superseded || d.Ended.Rollout.StatusReason != "the fleet no longer manages the collector version" {
		t.Fatalf("ended %+v", d.Ended)
	}
	if d.TargetSource != selection.SourceHold || d.Created != nil {
		t.Fatalf("hold must create nothing: source %s created %v", d.TargetSource, d.Created)
	}
	if d.AgentTargetVersions["a0"] != "" || len(d.AgentTargetVersions) != 1 {
		t.Fatalf("agent target versions %v, want a0 cleared", d.AgentTargetVersions)
	}
}

func TestDecide_Stragglers_JoinLastWave(t *testing.T) {
	in := input(policy.KindConfig, agents(3))
	in.Active = active(policy.KindConfig, rollout.Running, "h2", rollout.TargetInProgress)
	in.Active.Rollout.Waves = []rollout.Wave{{Name: "canary", Status: rollout.WaveCompleted}, {Name: "rest", Status: rollout.WaveRunning}}
	d := Decide(in)
	if d.Ended != nil || d.Created != nil {
		t.Fatal("an active rollout on the current target is neither superseded nor replaced")
	}
	if ids := targetIDs(d.Stragglers); len(ids) != 2 || ids[0] != "a1" || ids[1] != "a2" {
		t.Fatalf("stragglers %v, want a1 a2", ids)
	}
	for _, s := range d.Stragglers {
		if s.Wave != 1 || s.ToRef != "h2" || s.FromRef != "h1" || s.RolloutID != "r-old" {
			t.Fatalf("straggler %+v, want wave 1 of r-old from h1 to h2", s)
		}
	}
}

func TestDecide_FailedRollout_NoStragglersNoNewRollout(t *testing.T) {
	in := input(policy.KindConfig, agents(3))
	in.Active = active(policy.KindConfig, rollout.Failed, "h2", rollout.TargetFailed)
	d := Decide(in)
	if d.Ended != nil || d.Created != nil || len(d.Stragglers) != 0 {
		t.Fatalf("a failed rollout blocks: %+v", d)
	}
}

func TestDecide_FleetRemoved_ActiveRolloutFails(t *testing.T) {
	in := input(policy.KindConfig, agents(1))
	in.Fleet = nil
	in.Active = active(policy.KindConfig, rollout.Running, "h2", rollout.TargetInProgress)
	d := Decide(in)
	if d.Ended == nil || d.Ended.Rollout.Status != rollout.Failed || d.Ended.Rollout.StatusReason != ReasonFleetRemoved {
		t.Fatalf("ended %+v, want failed: %s", d.Ended, ReasonFleetRemoved)
	}
	if es := d.Ended.Events; len(es) != 1 || es[0].Type != "rollout.failed" || es[0].Reason != ReasonFleetRemoved {
		t.Fatalf("events %+v, want rollout.failed", es)
	}
}

func TestDecide_UIOrigin_UsesSelectionPolicyAndMarksPlanned(t *testing.T) {
	in := input(policy.KindVersion, agents(2))
	in.Fleet.Update.Selection.RolloutPolicy = "ui"
	in.Selection = &selection.Selection{Fleet: "edge", Version: "0.162.0", State: selection.Active, GitVersion: "0.161.0",
		SelectedBy: "user:alice", SelectedAt: t0.Add(-time.Minute), Reason: "CVE fix", Revision: 4}
	d := Decide(in)
	if d.Created == nil {
		t.Fatalf("no rollout: %s", d.Note)
	}
	r := d.Created.Rollout
	if r.Origin != rollout.OriginUI || r.CreatedBy != "user:alice" || r.RequestReason != "CVE fix" || r.Policy.Name != "ui" || r.ToRef != "0.162.0" || r.Executor != "updater" {
		t.Fatalf("rollout %+v", r)
	}
	if r.Annotations["selection"] == "" {
		t.Fatal("a ui rollout carries the selection annotation")
	}
	if d.Selection == nil || d.Selection.PlannedAt == nil || d.Selection.RolloutID != "r-new" || d.Selection.Revision != 5 {
		t.Fatalf("selection %+v, want plannedAt, rolloutId r-new, revision 5", d.Selection)
	}
	if d.Audit[len(d.Audit)-1].Actor != "user:alice" || d.Audit[len(d.Audit)-1].Details["origin"] != "ui" {
		t.Fatalf("audit %+v", d.Audit)
	}
}

func TestDecide_PolicyResolution(t *testing.T) {
	cases := []struct {
		name     string
		ref      string
		policies map[string]policy.Policy
		want     string // policy name, "" = no rollout
		builtIn  bool
	}{
		{name: "named", ref: "cfg", policies: map[string]policy.Policy{"cfg": {Name: "cfg"}}, want: "cfg", builtIn: false},
		{name: "default object", ref: "", policies: map[string]policy.Policy{"default": {Name: "default"}}, want: "default", builtIn: false},
		{name: "built-in when default is missing", ref: "", policies: nil, want: "default", builtIn: true},
		{name: "missing named policy blocks", ref: "nope", policies: nil, want: "", builtIn: false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := input(policy.KindConfig, agents(1))
			in.Fleet.Rollout.ConfigPolicy = c.ref
			in.Policies = c.policies
			d := Decide(in)
			if c.want == "" {
				if d.Created != nil {
					t.Fatal("a missing named policy must not create a rollout")
				}
				return
			}
			if d.Created == nil || d.Created.Rollout.Policy.Name != c.want || d.Created.Rollout.Policy.BuiltIn != c.builtIn {
				t.Fatalf("created %+v", d.Created)
			}
		})
	}
}

func TestDecide_K1_GitChangeDeletesSelection(t *testing.T) {
	in := input(policy.KindVersion, agents(1))
	in.Fleet.Collector.Version = "0.162.0"
	in.Selection = &selection.Selection{Fleet: "edge", Version: "0.163.0", State: selection.Active, GitVersion: "0.161.0"}
	d := Decide(in)
	if d.Reconcile == nil || d.Reconcile.Rule != selection.RuleK1 || d.Reconcile.Effect != selection.Delete {
		t.Fatalf("reconcile %+v, want K1 delete", d.Reconcile)
	}
	if d.Target != "0.162.0" || d.TargetSource != selection.SourceGit || d.Created == nil || d.Created.Rollout.Origin != rollout.OriginGitOps {
		t.Fatalf("target %s %s created %+v", d.Target, d.TargetSource, d.Created)
	}
}

func TestDecide_Idempotent(t *testing.T) {
	in := input(policy.KindConfig, agents(2))
	d := Decide(in)
	in.Active = d.Created
	d2 := Decide(in)
	if d2.Created != nil || d2.Ended != nil || len(d2.Stragglers) != 0 {
		t.Fatalf("a second run over the result of the first must change nothing: %+v", d2)
	}
}

// An agent offline for longer than the retention is gone: it gets no target
// (a host switched off for good would otherwise be a target, then skipped,
// in every rollout); once it reports again it is relevant as before.
func TestDecide_GoneAgentsGetNoTarget(t *testing.T) {
	for _, k := range []policy.Kind{policy.KindConfig, policy.KindVersion} {
		as := agents(3)
		as[0].Online, as[0].LastSeen = false, t0.Add(-8*24*time.Hour)
		as[1].Online, as[1].LastSeen = false, t0.Add(-6*24*time.Hour) // offline, not gone yet
		in := input(k, as)
		in.Liveness = agent.Liveness{Silence: 90 * time.Second, Retention: 7 * 24 * time.Hour}
		d := Decide(in)
		var ids []string
		if d.Created != nil {
			ids = targetIDs(d.Created.Targets)
			sort.Strings(ids)
		}
		if strings.Join(ids, ",") != "a1,a2" {
			t.Fatalf("%s: created %+v, want targets a1 and a2 (a0 is gone)", k, d.Created)
		}
	}
}

// A gone agent that reconnects is back as itself at once: without an
// active rollout it is a target of the new one; with one, it joins its last
// wave as a straggler, like an agent that connected later.
func TestDecide_GoneAgentReconnecting_GetsTargetsAgain(t *testing.T) {
	back := t0.Add(time.Minute)
	for _, k := range []policy.Kind{policy.KindConfig, policy.KindVersion} {
		as := agents(3)
		as[0].Online, as[0].LastSeen = false, t0.Add(-8*24*time.Hour) // gone
		in := input(k, as)
		in.Liveness = agent.Liveness{Silence: 90 * time.Second, Retention: 7 * 24 * time.Hour}
		d := Decide(in)
		if d.Created == nil || slices.Contains(targetIDs(d.Created.Targets), "a0") {
			t.Fatalf("%s: created %+v, want a rollout without the gone a0", k, d.Created)
		}

		reconnected := slices.Clone(as)
		reconnected[0].Online, reconnected[0].LastSeen, reconnected[0].ConnectedAt = true, back, back
		in.Agents, in.Now = reconnected, back
		if fresh := Decide(in); fresh.Created == nil || !slices.Contains(targetIDs(fresh.Created.Targets), "a0") {
			t.Errorf("%s: without an active rollout, created %+v, want a0 among the targets", k, fresh.Created)
		}
		in.Active = d.Created
		d2 := Decide(in)
		if ids := targetIDs(d2.Stragglers); strings.Join(ids, ",") != "a0" || d2.Created != nil {
			t.Errorf("%s: stragglers %v (created %+v), want a0 in the active rollout", k, ids, d2.Created)
		}
		for _, e := range d2.Excluded {
			if e.AgentID == "a0" {
				t.Errorf("%s: the reconnected a0 is still excluded: %+v", k, e)
			}
		}
	}
}

// An agent that moved here while its target in its old fleet's rollout
// runs is relevant in its new fleet: its started target there, toward
// another hash, excludes nothing (the engine evaluates it to its end).
func TestDecide_MovedAgentWithAStartedTargetElsewhere_IsRelevant(t *testing.T) {
	in := input(policy.KindConfig, agents(1))
	in.LastTargets = map[string]LastTarget{"a0": {Target: rollout.Target{RolloutID: "r-old-fleet", AgentID: "a0", FromRef: "h0", ToRef: "h-core",
		Status: rollout.TargetInProgress}, RolloutStatus: rollout.Running}}
	d := Decide(in)
	if d.Created == nil || strings.Join(targetIDs(d.Created.Targets), ",") != "a0" || len(d.Excluded) != 0 {
		t.Fatalf("created %+v, excluded %+v; want a target for a0", d.Created, d.Excluded)
	}
}

// The decision counts the relevant agents and says why each one it keeps
// out gets no target, for a plan to show.
func TestDecide_ExclusionsAreRecorded(t *testing.T) {
	as := agents(5)
	as[0].Online, as[0].LastSeen = false, t0.Add(-8*24*time.Hour) // gone
	as[4].DesiredHash = "h2"                                      // not relevant
	in := input(policy.KindConfig, as)
	in.Liveness = agent.Liveness{Silence: 90 * time.Second, Retention: 7 * 24 * time.Hour}
	in.LastTargets = map[string]LastTarget{
		"a1": {Target: rollout.Target{RolloutID: "r-1", ToRef: "h2", Status: rollout.TargetFailed}, RolloutStatus: rollout.Paused},
		"a2": {Target: rollout.Target{RolloutID: "r-2", ToRef: "h2", Status: rollout.TargetSkipped}, RolloutStatus: rollout.Completed},
	}
	d := Decide(in)
	var got []string
	for _, e := range d.Excluded {
		got = append(got, e.AgentID+":"+e.Code+":"+e.RolloutID)
	}
	if want := "a0:gone: a1:failed:r-1 a2:catch_up:r-2"; strings.Join(got, " ") != want || d.Relevant != 4 {
		t.Fatalf("relevant %d, excluded %v; want 4 and %s", d.Relevant, got, want)
	}
	if d.Created == nil || len(d.Created.Targets) != 1 || !strings.Contains(d.Excluded[1].Reason(), "rollout r-1") {
		t.Fatalf("created %+v, reason %q", d.Created, d.Excluded[1].Reason())
	}
}

// Agents of a wave split by zone without the zone attribute block the plan
// with the reason: no rollout without them.
func TestDecide_TopologyMissingZone_Blocks(t *testing.T) {
	in := input(policy.KindConfig, agents(2))
	in.Policies["cfg"] = policy.Policy{Name: "cfg", Spec: policy.Spec{Waves: []policy.Wave{{Name: "all", Percent: 100, By: policy.SplitZone}}}}
	d := Decide(in)
	if d.Created != nil || !strings.Contains(d.Note, "topology_invalid") || !strings.Contains(d.Note, "cloud.availability_zone") {
		t.Fatalf("created %v note %q, want no rollout and a note naming the missing attribute", d.Created != nil, d.Note)
	}
}

// A webhook or awx version rollout keeps a snapshot of its fleet's executor
// object; a missing one, or one of another type, blocks the rollout.
func TestDecide_ExecutorObjectSnapshot(t *testing.T) {
	hook := executorobject.Object{Name: "edge-hook", Commit: "c9", Type: executorobject.TypeWebhook,
		Webhook: &executorobject.Webhook{URL: "https://deploy.example.com/x", SecretRef: "edge-hook"}}
	awx := executorobject.Object{Name: "edge-hook", Type: executorobject.TypeAWX, AWX: &executorobject.AWX{URL: "https://awx.example.com"}}
	cases := []struct {
		name     string
		executor fleet.Executor
		objects  map[string]executorobject.Object
		want     *executorobject.Object // nil: none on the rollout
		blocked  string                 // the note's code when no rollout is created
	}{
		{name: "webhook", executor: fleet.ExecutorWebhook, objects: map[string]executorobject.Object{"edge-hook": hook}, want: &hook, blocked: ""},
		{name: "updater has none", executor: fleet.ExecutorUpdater, objects: map[string]executorobject.Object{"edge-hook": hook}, want: nil, blocked: ""},
		{name: "missing object blocks", executor: fleet.ExecutorWebhook, objects: nil, want: nil, blocked: "executor_invalid"},
		{name: "object of another type blocks", executor: fleet.ExecutorWebhook, objects: map[string]executorobject.Object{"edge-hook": awx}, want: nil, blocked: "executor_invalid"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := input(policy.KindVersion, agents(2))
			in.Fleet.Update.Executor, in.Fleet.Update.ExecutorRef = c.executor, "edge-hook"
			in.Fleet.Collector.Version = "0.162.0"
			in.ExecutorObjects = c.objects
			d := Decide(in)
			if c.blocked != "" {
				if d.Created != nil || !strings.Contains(d.Note, c.blocked) {
					t.Fatalf("created %v, note %q; want no rollout (%s)", d.Created != nil, d.Note, c.blocked)
				}
				return
			}
			if d.Created == nil {
				t.Fatalf("no rollout: %s", d.Note)
			}
			r := d.Created.Rollout
			if r.Executor != string(c.executor) || !reflect.DeepEqual(r.ExecutorObject, c.want) {
				t.Fatalf("rollout executor %q object %+v, want %s with %+v", r.Executor, r.ExecutorObject, c.executor, c.want)
			}
		})
	}
	// A configuration rollout of the same fleet neither needs nor keeps it.
	in := input(policy.KindConfig, agents(1))
	in.Fleet.Update.Executor, in.Fleet.Update.ExecutorRef = fleet.ExecutorWebhook, "edge-hook"
	if d := Decide(in); d.Created == nil || d.Created.Rollout.ExecutorObject != nil {
		t.Fatalf("config rollout %+v: %s", d.Created, d.Note)
	}
}

// After onFailure rollback-wave the rollout is rolled_back: the canary's
// stage passed and stays on h2 (not relevant), the failed stage's started
// agent was rolled back to h1, the agents of the stages that never ran were
// cancelled. The next plan for the same hash creates no rollout, and
// records why each of them is left out; only a new target would reach them.
// An agent that joins later with no target for h2 gets a rollout alone.
func TestDecide_AfterRollbackWave_NoNewRolloutForTheSameTarget(t *testing.T) {
	fin := t0.Add(-time.Hour)
	as := agents(4)
	as[0].DesiredHash = "h2" // the canary's stage passed: it stays on the new hash
	last := func(id string, st rollout.TargetStatus) LastTarget {
		return LastTarget{Target: rollout.Target{RolloutID: "r-zones", AgentID: id, ToRef: "h2", Status: st, FinishedAt: &fin}, RolloutStatus: rollout.RolledBack}
	}
	in := input(policy.KindConfig, as)
	in.LastTargets = map[string]LastTarget{
		"a0": last("a0", rollout.TargetSucceeded),
		"a1": last("a1", rollout.TargetRolledBack), // the failed stage, returned to h1
		"a2": last("a2", rollout.TargetCancelled),  // its batch never started
		"a3": last("a3", rollout.TargetCancelled),  // the next stage never ran
	}
	d := Decide(in)
	if d.Created != nil {
		t.Fatalf("created %v for the rolled-back hash, want no rollout", targetIDs(d.Created.Targets))
	}
	var got []string
	for _, e := range d.Excluded {
		got = append(got, e.AgentID+":"+e.Code+":"+e.RolloutID)
	}
	if want := "a1:failed:r-zones a2:stopped:r-zones a3:stopped:r-zones"; strings.Join(got, " ") != want {
		t.Fatalf("excluded %v, want %s", got, want)
	}

	in.Agents = append(in.Agents, agent.Agent{ID: "a4", Fleet: "edge", Online: true, DesiredHash: "h1"})
	d = Decide(in)
	if d.Created == nil || strings.Join(targetIDs(d.Created.Targets), ",") != "a4" {
		t.Fatalf("created %+v, want a rollout for the new agent a4 alone", d.Created)
	}
}

// A run reads the last targets of the agents Decide reads them for, and no
// other: none for a kind with nothing to roll out to, none of an agent
// already on the target or gone. Deciding over those alone decides as over
// every agent's.
func TestLastTargetsNeeded_AreThoseDecideReads(t *testing.T) {
	fin := t0.Add(-time.Hour)
	failed := LastTarget{Target: rollout.Target{Status: rollout.TargetFailed, ToRef: "h2", FinishedAt: &fin}, RolloutStatus: rollout.Completed}
	onTarget, gone := agents(4), agents(4)
	onTarget[1].DesiredHash, onTarget[2].DesiredHash = "h2", "h2"
	gone[3].Online, gone[3].LastSeen = false, t0.Add(-30*24*time.Hour)
	noExecutor := input(policy.KindVersion, agents(3))
	noExecutor.Fleet.Update.Executor = fleet.ExecutorNone
	noVersion := input(policy.KindVersion, agents(3))
	noVersion.Fleet.Collector.Version = ""
	withGone := input(policy.KindConfig, gone)
	withGone.Liveness = agent.Liveness{Retention: 7 * 24 * time.Hour}
	for _, c := range []struct {
		name string
		in   Input
		want []string
	}{
		{name: "config: the agents not on the target", in: input(policy.KindConfig, onTarget), want: []string{"a0", "a3"}},
		{name: "config: a gone agent is not read", in: withGone, want: []string{"a0", "a1", "a2"}},
		{name: "version toward the fleet's version", in: input(policy.KindVersion, agents(3)), want: []string{"a0", "a1", "a2"}},
		{name: "version without an executor: nothing", in: noExecutor, want: nil},
		{name: "version with no version to roll out to: nothing", in: noVersion, want: nil},
		{name: "a fleet removed from Git: nothing", in: Input{FleetName: "edge", Kind: policy.KindConfig, Agents: agents(2), Now: t0}, want: nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := LastTargetsNeeded(c.in)
			if !slices.Equal(got, c.want) {
				t.Fatalf("needed %v, want %v", got, c.want)
			}
			all := c.in
			all.LastTargets = map[string]LastTarget{}
			toRef := "h2" // failed toward the target: excluded wherever it is read
			if c.in.Kind == policy.KindVersion {
				toRef = "0.161.0"
			}
			for _, a := range c.in.Agents {
				lt := failed
				lt.Target.AgentID, lt.Target.ToRef = a.ID, toRef
				all.LastTargets[a.ID] = lt
			}
			some := all
			some.LastTargets = map[string]LastTarget{}
			for _, id := range got {
				some.LastTargets[id] = all.LastTargets[id]
			}
			if a, b := Decide(all), Decide(some); !reflect.DeepEqual(a, b) {
				t.Fatalf("decided otherwise over the needed last targets alone:\n%+v\n%+v", a, b)
			}
		})
	}
}

// A supersede ends the passes of the stage that was running: each gains
// an outcome (cancelled, or failed with a failed target), and the decision
// keeps the rollout as it was, so that those passes are counted.
func TestDecide_Supersede_EndsThePassesOfTheRunningStage(t *testing.T) {
	act := active(policy.KindConfig, rollout.Running, "h1x", rollout.TargetInProgress, rollout.TargetFailed)
	act.Rollout.Stages = []rollout.Stage{{Name: "all", Status: rollout.StageRunning, Passes: []rollout.Pass{{Name: "eu"}, {Name: "us"}}}}
	act.Targets[1].Pass = 1
	in := input(policy.KindConfig, agents(2))
	in.Active = act
	d := Decide(in)
	if d.Ended == nil {
		t.Fatalf("not superseded: %s", d.Note)
	}
	ps := d.Ended.Rollout.Stages[0].Passes
	if ps[0].Outcome != rollout.PassCancelled || ps[1].Outcome != rollout.StageFailed {
		t.Fatalf("pass outcomes %q, %q; want cancelled, failed", ps[0].Outcome, ps[1].Outcome)
	}
	if o := d.Ended.Before.Stages[0].Passes[0].Outcome; o != "" {
		t.Fatalf("the rollout before the supersede has outcome %q", o)
	}
}
