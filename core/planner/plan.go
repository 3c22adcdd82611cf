package planner

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/myriarch/myriarch/core/audit"
	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/executorobject"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/notify"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/selection"
)

// NoteNoneRelevant is the note of a run that found no agent of the fleet
// whose configuration or version differs from the target: every agent has
// it already (the bootstrapped ones included), or the fleet has none.
const NoteNoneRelevant = "no rollout: no agent is relevant"

// Reasons the planner writes on rollouts it ends.
const (
	ReasonFleetRemoved = "the fleet no longer exists in Git"
	CodeSuperseded     = "superseded"
)

// Decide runs the planner for one fleet and kind (docs/rollouts.md, "A run,
// step by step"):
//  1. reconcile the UI selection with Git (version runs) and write the
//     effective target version to the member agents;
//  2. supersede an active rollout whose open targets have another target
//     than their agents' current one;
//  3. else add relevant agents without a target (stragglers) to the last
//     wave of the active rollout;
//  4. else create a rollout with every relevant, not excluded agent.
func Decide(in Input) Decision {
	var d Decision
	sel := d.reconcile(in)
	if in.Fleet == nil {
		d.fleetGone(in)
		return d
	}
	d.Target, d.TargetSource = currentTarget(in, sel)
	if in.Kind == policy.KindVersion {
		d.writeTargetVersions(in)
	} else {
		d.bootstrap(in)
	}
	active := in.Active
	if active != nil && supersedable(active.Rollout.Status) && (stale(*active, d.Target) || d.reconcileSupersedes()) {
		d.supersede(in, *active)
		active = nil
	}
	if !rolloutsEnabled(in, d.Target) {
		d.Note = "no rollout: nothing to roll out to for this fleet and kind"
		return d
	}
	cands := d.candidates(in)
	switch {
	case active != nil:
		d.addStragglers(*active, cands)
	case len(cands) == 0:
		d.Note = NoteNoneRelevant
	default:
		if !d.create(in, sel, cands) {
			return d // blocked: the selection stays unplanned
		}
	}
	d.markPlanned(in, sel)
	return d
}

// LastTargetsNeeded are the agents of in whose last target Decide reads:
// the relevant, not gone agents of a fleet and kind that has something to
// roll out to (candidates). A run reads no other: a last target is a query
// per agent, and a fleet of 1,000 agents with no version to roll out to
// read 1,000 of them for nothing, on every plan of its version kind. It
// reads all of in but LastTargets.
func LastTargetsNeeded(in Input) []string {
	if in.Fleet == nil {
		return nil
	}
	var d Decision
	target, _ := currentTarget(in, d.reconcile(in))
	if !rolloutsEnabled(in, target) {
		return nil
	}
	var ids []string
	for _, a := range in.Agents {
		if relevant(in.Kind, a, target) && !in.Liveness.Gone(a, in.Now) {
			ids = append(ids, a.ID)
		}
	}
	return ids
}

// reconcile applies the conflict rules (version runs) and returns the
// selection as they leave it.
func (d *Decision) reconcile(in Input) *selection.Selection {
	if in.Kind != policy.KindVersion || in.Selection == nil {
		return in.Selection
	}
	o := selection.Reconcile(in.Fleet, *in.Selection, in.Commit, in.Now)
	d.Reconcile = &o
	if o.Audit != nil {
		d.Audit = append(d.Audit, *o.Audit)
	}
	switch o.Effect {
	case selection.Delete:
		return nil
	case selection.Invalidate:
		return &o.Selection
	}
	return in.Selection
}

func (d *Decision) reconcileSupersedes() bool {
	return d.Reconcile != nil && d.Reconcile.SupersedeVersionRollout
}

func currentTarget(in Input, sel *selection.Selection) (string, selection.Source) {
	if in.Kind == policy.KindVersion {
		t := selection.ResolveVersionTarget(in.Fleet, sel)
		return t.Version, t.Source
	}
	return in.Fleet.Config.Hash, selection.SourceGit
}

func rolloutsEnabled(in Input, target string) bool {
	if target == "" {
		return false
	}
	return in.Kind != policy.KindVersion || in.Fleet.UpdateExecutor() != fleet.ExecutorNone
}

func (d *Decision) writeTargetVersions(in Input) {
	for _, a := range in.Agents {
		if a.TargetVersion != d.Target {
			if d.AgentTargetVersions == nil {
				d.AgentTargetVersions = map[string]string{}
			}
			d.AgentTargetVersions[a.ID] = d.Target
		}
	}
}

func (d *Decision) bootstrap(in Input) {
	if d.Target == "" {
		return
	}
	for _, a := range in.Agents {
		if a.DesiredHash == "" {
			d.Bootstrap = append(d.Bootstrap, a.ID)
		}
	}
}

// fleetGone: an active rollout of a fleet removed from Git cannot continue
// and becomes failed; a person confirms with abort. A rollback runs to its end.
func (d *Decision) fleetGone(in Input) {
	if in.Active == nil || !supersedable(in.Active.Rollout.Status) {
		return
	}
	r := in.Active.Rollout
	r.Status = rollout.Failed
	r.StatusReason = ReasonFleetRemoved
	d.Ended = &Ended{Rollout: r, Events: []engine.Event{{Type: notify.TypeFailed, Reason: ReasonFleetRemoved}}}
	d.Note = ReasonFleetRemoved
}

// supersedable: pending, running, waiting_approval, paused and frozen rollouts are
// replaced when the target changes; failed and rolling_back never are.
func supersedable(s rollout.Status) bool {
	switch s {
	case rollout.Pending, rollout.Running, rollout.WaitingApproval, rollout.Paused, rollout.Frozen:
		return true
	}
	return false
}

// stale reports whether the rollout runs toward another target than now:
// its toRef differs (whatever its open targets are: a paused rollout whose
// targets all finished must not block a new commit), or an open target (for
// a paused rollout also a failed one, so that a fix in Git replaces it) has
// another target.
func stale(a Active, target string) bool {
	if a.Rollout.ToRef != target {
		return true
	}
	for _, t := range a.Targets {
		counts := t.Status.Open() || (a.Rollout.Status == rollout.Paused && t.Status == rollout.TargetFailed)
		if counts && t.ToRef != target {
			return true
		}
	}
	return false
}

func (d *Decision) supersede(in Input, a Active) {
	r := a.Rollout
	r.Status = rollout.Superseded
	r.StatusReason = fmt.Sprintf("superseded: the target changed from %s to %s", orNone(r.ToRef), orNone(d.Target))
	if d.reconcileSupersedes() {
		r.StatusReason = d.Reconcile.SupersedeReason
	}
	r.FinishedAt = timePtr(in.Now)
	r.EndPasses(a.Targets, in.Now)
	r.EndOpenWaves(in.Now)
	e := &Ended{Before: a.Rollout, Rollout: r, Events: []engine.Event{{Type: notify.TypeSuperseded, Reason: r.StatusReason}}}
	for _, t := range a.Targets {
		if !t.Status.Open() {
			continue
		}
		if r.Kind == policy.KindVersion && t.Status == rollout.TargetInProgress {
			e.Orders = append(e.Orders, engine.Order{Kind: engine.OrderCancel, AgentID: t.AgentID, Ref: t.ToRef, Attempt: t.Attempt})
		}
		t.Status, t.ReasonCode, t.Reason = rollout.TargetCancelled, CodeSuperseded, "cancelled: the rollout was superseded"
		t.FinishedAt = timePtr(in.Now)
		e.Cancelled = append(e.Cancelled, t)
	}
	d.Ended = e
}

func orNone(s string) string {
	if s == "" {
		return "no target"
	}
	return s
}

func timePtr(t time.Time) *time.Time { return &t }

// candidates are the relevant agents that no exclusion rule keeps out; the
// others are recorded in Excluded with the rule that keeps them out.
func (d *Decision) candidates(in Input) []engine.Candidate {
	var out []engine.Candidate
	d.Relevant, d.Excluded = 0, nil
	for i := range in.Agents {
		a := &in.Agents[i]
		if !relevant(in.Kind, *a, d.Target) {
			continue
		}
		d.Relevant++
		if in.Liveness.Gone(*a, in.Now) {
			// a gone agent is a host switched off for good: no target until it is back
			d.Excluded = append(d.Excluded, Exclusion{AgentID: a.ID, Code: ExcludedGone})
			continue
		}
		var last *LastTarget
		if lt, ok := in.LastTargets[a.ID]; ok {
			last = &lt
		}
		e := exclude(in.Kind, *a, last, d.Target)
		switch e {
		case included:
			out = append(out, engine.Candidate{AgentID: a.ID, Attributes: a, FromRef: fromRef(in.Kind, *a)})
			continue
		case excludedCatchUp:
			d.CatchUp = append(d.CatchUp, a.ID)
		}
		d.Excluded = append(d.Excluded, Exclusion{AgentID: a.ID, Code: e.code(), RolloutID: last.Target.RolloutID})
	}
	return out
}

// addStragglers adds candidates without a target in the active rollout to
// its last wave, if the rollout still runs toward the current target.
func (d *Decision) addStragglers(a Active, cands []engine.Candidate) {
	if !supersedable(a.Rollout.Status) || a.Rollout.ToRef != d.Target {
		d.Note = fmt.Sprintf("no change: rollout %s is %s", a.Rollout.ID, a.Rollout.Status)
		return
	}
	has := make(map[string]bool, len(a.Targets))
	for _, t := range a.Targets {
		has[t.AgentID] = true
	}
	var late []engine.Candidate
	for _, c := range cands {
		if !has[c.AgentID] {
			late = append(late, c)
		}
	}
	if len(late) == 0 {
		return
	}
	r, ts := engine.AddStragglers(a.Rollout, late)
	d.Updated, d.Stragglers = &r, ts
}

// create builds the new rollout with the policy of its origin.
func (d *Decision) create(in Input, sel *selection.Selection, cands []engine.Candidate) bool {
	origin, createdBy, reason := rollout.OriginGitOps, "", ""
	policyName := in.Fleet.ConfigPolicyName()
	var ann map[string]string
	if in.Kind == policy.KindVersion {
		policyName = in.Fleet.VersionPolicyName()
		if d.TargetSource == selection.SourceUI && sel != nil {
			origin, createdBy, reason = rollout.OriginUI, sel.SelectedBy, sel.Reason
			policyName = in.Fleet.SelectionPolicyName()
			ann = map[string]string{"selection": selectionAnnotation(*sel)}
		}
	}
	snap, ok := snapshot(in.Policies, policyName, in.Kind)
	if !ok {
		d.Note = fmt.Sprintf("no rollout: policy %q does not exist (policy_not_found)", policyName)
		return false
	}
	var exObj *executorobject.Object
	if in.Kind == policy.KindVersion {
		var note string
		if exObj, note = executorSnapshot(in); note != "" {
			d.Note = note
			return false
		}
	}
	r, ts, err := engine.Create(engine.NewRollout{
		ID: in.NewRolloutID, Fleet: in.FleetName, Kind: in.Kind, Policy: snap, ToRef: d.Target,
		Origin: origin, CreatedBy: createdBy, RequestReason: reason, Annotations: ann,
		Candidates: cands, Now: in.Now,
	})
	if err != nil {
		// Agents of a wave split by region or zone lack the attribute: the
		// plan is blocked with the reason, never a rollout without them.
		d.Note = fmt.Sprintf("no rollout: %v (topology_invalid)", err)
		return false
	}
	if in.Kind == policy.KindVersion {
		r.Executor, r.ExecutorObject = string(in.Fleet.UpdateExecutor()), exObj
	}
	d.Created = &Active{Rollout: r, Targets: ts}
	actor := audit.ActorGitOps
	if origin == rollout.OriginUI {
		actor = createdBy
	}
	d.Audit = append(d.Audit, audit.Entry{At: in.Now, Actor: actor, Action: audit.ActionRolloutCreate,
		TargetType: "rollout", TargetID: r.ID, Result: audit.ResultSuccess,
		Details: map[string]any{"fleet": in.FleetName, "kind": string(in.Kind), "toRef": d.Target, "targets": len(ts),
			"policy": snap.Name, "origin": string(origin), "selectedBy": createdBy, "reason": reason}})
	return true
}

// snapshot resolves a policy name: the named policy, else the built-in
// policy when the name is "default"; any other missing name blocks.
func snapshot(ps map[string]policy.Policy, name string, k policy.Kind) (policy.Snapshot, bool) {
	if p, ok := ps[name]; ok {
		return p.Snapshot(k), true
	}
	if name == policy.DefaultName {
		return policy.BuiltIn(k), true
	}
	return policy.Snapshot{}, false
}

// executorSnapshot resolves the fleet's executor object for a version
// rollout: nil for the built-in executors, else a copy of the object its
// update.executorRef names. A missing object or one of another type blocks
// the rollout with the note (revision validation refuses both; a store read
// across an apply may still see them).
func executorSnapshot(in Input) (*executorobject.Object, string) {
	e, ref := in.Fleet.UpdateExecutor(), in.Fleet.Update.ExecutorRef
	if !e.NeedsRef() {
		return nil, ""
	}
	o, ok := in.ExecutorObjects[ref]
	switch {
	case !ok:
		return nil, fmt.Sprintf("no rollout: executor object %q does not exist (executor_invalid)", ref)
	case o.Type != string(e):
		return nil, fmt.Sprintf("no rollout: executor object %q is of type %q, not %s (executor_invalid)", ref, o.Type, e)
	}
	return &o, ""
}

func selectionAnnotation(s selection.Selection) string {
	b, _ := json.Marshal(map[string]any{"version": s.Version, "selectedBy": s.SelectedBy, "selectedAt": s.SelectedAt, "reason": s.Reason})
	return string(b)
}

// markPlanned records on an active UI selection that the planner handled it.
func (d *Decision) markPlanned(in Input, sel *selection.Selection) {
	if in.Kind != policy.KindVersion || sel == nil || sel.State != selection.Active || sel.PlannedAt != nil {
		return
	}
	s := *sel
	s.PlannedAt = timePtr(in.Now)
	s.UpdatedAt = in.Now
	s.Revision++
	if d.Created != nil {
		s.RolloutID = d.Created.Rollout.ID
	}
	d.Selection = &s
}
