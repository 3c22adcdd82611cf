package api

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/myriarch/myriarch/adapters/api/schema"
	"github.com/myriarch/myriarch/core/audit"
	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/gate"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/progress"
	"github.com/myriarch/myriarch/core/rollout"
)

// The views are the wire shapes of api/openapi.yaml (package schema, which
// the client shares). They are built from the stored values and never carry
// what only the machinery needs (task tokens, the count of executions,
// health bookkeeping, followUntil). The current execution's ARN is shown:
// operators follow it into the Step Functions console.

// Aliases of the wire shapes for the handlers and tests that name them.
type (
	rolloutView = schema.Rollout
	targetView  = schema.Target
)

// newRolloutView is the rollout without target counts (listRollouts).
func newRolloutView(r rollout.Rollout, names Directory) rolloutView {
	actor := createdByActor(r)
	v := rolloutView{
		ID: r.ID, Fleet: r.Fleet, Kind: r.Kind, Status: r.Status, StatusReason: r.StatusReason, Origin: r.Origin,
		CreatedByActor: actor, CreatedBy: names.DisplayName(actor), RequestReason: r.RequestReason,
		ToRef: r.ToRef, Executor: r.Executor, Annotations: r.Annotations,
		CreatedAt: r.CreatedAt.UTC(), StartedAt: utcPtr(r.StartedAt), FinishedAt: utcPtr(r.FinishedAt),
		Policy: newPolicyView(r.Policy), Waves: make([]schema.Wave, len(r.Waves)), AckedFailures: ackedFailures(r.AckedFailures),
		FreezeOverride: newDecisionPtr(r.FreezeOverride, names), ExecutionArn: r.ExecutionArn,
	}
	if actor == "" {
		v.CreatedBy = ""
	}
	for i, w := range r.Waves {
		v.Waves[i] = newWaveView(r, w, names)
	}
	for _, st := range r.Stages {
		v.Stages = append(v.Stages, newStageView(st))
	}
	v.Progress = stageProgress(r)
	return v
}

// stageProgress is "passed/total" stages, e.g. "2/4"; empty for a rollout
// without stages.
func stageProgress(r rollout.Rollout) string {
	if len(r.Stages) == 0 {
		return ""
	}
	passed, total := r.StageProgress()
	return fmt.Sprintf("%d/%d", passed, total)
}

// newWaveView is a wave with its approvals: while it waits, when the
// approval expires (engine.ApprovalDeadline); with requireApproval, the
// distinct approvers it needs (at least 1, as the engine counts for
// rollouts stored before approvals.required existed).
func newWaveView(r rollout.Rollout, w rollout.Wave, names Directory) schema.Wave {
	v := schema.Wave{Index: w.Index, Name: w.Name, Percent: w.Percent, Selector: w.Selector,
		RequireApproval: w.RequireApproval, Implicit: w.Implicit, Status: w.Status, Approved: w.Approved,
		WaitingSince: utcPtr(w.WaitingSince), Rejected: newDecisionPtr(w.Rejected, names),
		StartedAt: utcPtr(w.StartedAt), FinishedAt: utcPtr(w.FinishedAt)}
	if w.RequireApproval {
		v.ApprovalsRequired = max(r.Policy.Approvals.Required, 1)
	}
	if w.Status == rollout.WaveWaitingApproval && !w.Approved {
		v.ApprovalExpiresAt = utcPtr(engine.ApprovalDeadline(r, w))
	}
	for _, a := range w.Approvals {
		v.Approvals = append(v.Approvals, newDecision(a, names))
	}
	return v
}

// newDecision shows the actor of a decision as createdBy shows the
// creator: the directory's display name of the actor reference, else the
// name stored with the decision (an actor the directory no longer knows,
// or "system" for an expiry).
func newDecision(d rollout.Decision, names Directory) schema.Decision {
	v := schema.Decision{By: d.By, ByActor: d.ActorID, At: d.At.UTC(), Reason: d.Reason}
	if n := names.DisplayName(d.ActorID); d.ActorID != "" && n != d.ActorID {
		v.By = n
	}
	return v
}

func newDecisionPtr(d *rollout.Decision, names Directory) *schema.Decision {
	if d == nil {
		return nil
	}
	v := newDecision(*d, names)
	return &v
}

// newStageView is a stage with its passes, the freeze that holds it and
// the readings of its gates.
func newStageView(st rollout.Stage) schema.Stage {
	sv := schema.Stage{Name: st.Name, Wave: st.Wave, Status: st.Status, StartedAt: utcPtr(st.StartedAt),
		BakeUntil: utcPtr(st.BakeUntil), FinishedAt: utcPtr(st.FinishedAt), Passes: make([]schema.StagePass, len(st.Passes)),
		Held: st.Held, LastRed: st.LastRed, Gate: newGateView(st.Gate)}
	for j, p := range st.Passes {
		sv.Passes[j] = schema.StagePass{Name: p.Name, Region: p.Region, Zone: p.Zone, Targets: p.Size, BatchSize: p.BatchSize,
			Batches: p.Batches, Cleared: p.Cleared}
		if p.Gate != nil {
			sv.Passes[j].Gate = &schema.BatchGate{Batch: p.Gate.Batch, GateState: *newGateView(&p.Gate.State)}
		}
	}
	return sv
}

// newGateView is the gate's state with its times in UTC; nil stays nil.
func newGateView(g *gate.State) *schema.GateState {
	if g == nil {
		return nil
	}
	v := &schema.GateState{Since: g.Since.UTC(), Until: g.Until.UTC(), NextAt: utcPtr(g.NextAt), Readings: g.Readings,
		ConsecutiveRed: g.Consecutive, LastRed: g.LastRed}
	for _, rd := range g.Recent {
		v.Recent = append(v.Recent, schema.GateReading{At: rd.At.UTC(), Red: rd.Red, Checked: rd.Checked,
			Results: append([]gate.Result(nil), rd.Results...)})
	}
	return v
}

// batchesDone counts, per stage and pass, the batches whose targets are all
// final: a batch is done when every target of it is.
func batchesDone(r rollout.Rollout, ts []rollout.Target) map[[2]int]int {
	open := map[[3]int]bool{}
	for _, t := range ts {
		if !t.Status.Final() {
			open[[3]int{t.Stage, t.Pass, t.Batch}] = true
		}
	}
	done := map[[2]int]int{}
	for s, st := range r.Stages {
		for p, pass := range st.Passes {
			for b := 0; b < pass.Batches; b++ {
				if !open[[3]int{s, p, b}] {
					done[[2]int{s, p}]++
				}
			}
		}
	}
	return done
}

// newRolloutDetail adds what the rollout page shows per wave: the targets by
// status and the number in the health wait (verifying). The end of each
// wait is no field: the page adds policy.healthWait to verifiedAt. Per pass
// it adds the batches done and the first agents (passAgents).
func newRolloutDetail(r rollout.Rollout, ts []rollout.Target, names Directory) rolloutView {
	v := newRolloutView(r, names)
	all := schema.TargetCounts{}
	per := make([]schema.TargetCounts, len(v.Waves))
	for _, t := range ts {
		all.Add(t.Status)
		if t.Wave >= 0 && t.Wave < len(per) {
			per[t.Wave].Add(t.Status)
		}
	}
	for i := range v.Waves {
		c := per[i]
		total, wait := c.Total(), c.Verifying
		v.Waves[i].Counts, v.Waves[i].Total, v.Waves[i].InHealthWait = &c, &total, &wait
	}
	v.TargetCounts = &all
	if len(r.Stages) == 0 {
		return v
	}
	done, ids := batchesDone(r, ts), passAgents(ts)
	for s := range v.Stages {
		for p := range v.Stages[s].Passes {
			n := done[[2]int{s, p}]
			v.Stages[s].Passes[p].BatchesDone = &n
			v.Stages[s].Passes[p].Agents = ids[engine.PassKey{Stage: s, Pass: p}]
		}
	}
	return v
}

// createdByActor is the actor reference of the rollout: the stored one,
// else gitops or system after the origin.
func createdByActor(r rollout.Rollout) string {
	switch {
	case r.CreatedBy != "":
		return r.CreatedBy
	case r.Origin == rollout.OriginGitOps:
		return audit.ActorGitOps
	case r.Origin == rollout.OriginSystem:
		return string(rollout.OriginSystem)
	}
	return ""
}

func ackedFailures(m map[int][]string) []schema.AckedFailures {
	out := []schema.AckedFailures{}
	for w, as := range m {
		out = append(out, schema.AckedFailures{Wave: w, Attempts: append([]string{}, as...)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Wave < out[j].Wave })
	return out
}

func newPolicyView(s policy.Snapshot) schema.PolicySnapshot {
	hw := s.HealthWait
	if hw <= 0 {
		hw = policy.DefaultHealthWait // the rule for a snapshot without a value (docs/rollouts.md)
	}
	waves := s.Waves
	if waves == nil {
		waves = []policy.Wave{}
	}
	v := schema.PolicySnapshot{
		Name: s.Name, Path: s.Path, Commit: s.Commit, BuiltIn: s.BuiltIn, Kind: s.Kind, Waves: waves,
		MaxConcurrent: s.MaxConcurrent, HealthWait: hw.String(), HealthWaitSeconds: int64(hw / time.Second),
		ApplyTimeout: s.ApplyTimeout.String(), OfflineGracePeriod: s.OfflineGracePeriod.String(),
		FailureThreshold: s.FailureThreshold, OnFailure: s.OnFailure, TimezoneAttribute: s.TimezoneAttribute,
		DefaultTimezone: s.DefaultTimezone, MaintenanceWindows: s.MaintenanceWindows, Source: policySource(s, hw),
	}
	if t := s.Topology; t != (policy.Topology{}) {
		v.Topology = &t // a rollout in stages: the attributes of region, zone and host
	}
	if s.SplitsWaves() {
		v.Regions = s.Regions
	}
	if mu := s.MaxUnavailable; !mu.IsZero() {
		v.MaxUnavailable = &mu
	}
	v.Health, v.ApprovalsBetween, v.Freezes = s.Health, s.ApprovalsBetween, s.Freezes
	v.Approvals = policy.Approvals{Required: max(s.Approvals.Required, 1), Expiry: s.Approvals.Expiry}
	return v
}

// policySource is the line the rollout page shows where a health wait comes
// from (docs/ui.md, "Pages"):
//
//	Policy canary-then-all · healthWait 5m · policies/canary-then-all.yaml@9f3c2a17
//	Policy default · healthWait 1m · built-in policy
//
// A full commit id is shortened to its first 8 digits, as Git shows it.
func policySource(s policy.Snapshot, healthWait time.Duration) string {
	where := "built-in policy"
	if !s.BuiltIn {
		where = s.Path
		if s.Commit != "" {
			where += "@" + shortCommit(s.Commit)
		}
	}
	line := fmt.Sprintf("Policy %s · healthWait %s", s.Name, shortDuration(healthWait))
	if where != "" {
		line += " · " + where
	}
	return line
}

var fullCommit = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

func shortCommit(c string) string {
	if fullCommit.MatchString(c) {
		return c[:8]
	}
	return c
}

// shortDuration writes a duration as a person does: 5m, 30s, 1h30m, 90ms.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// newTargetView normalizes the progress for reading (a target ended from
// outside shows a consistent final picture), drops followUntil, which is
// the engine's bookkeeping and no part of the schema, and places the target
// in the stages of its rollout r.
func newTargetView(r rollout.Rollout, t rollout.Target) targetView {
	v := targetView{
		RolloutID: t.RolloutID, AgentID: t.AgentID, Wave: t.Wave, Status: t.Status, Reason: t.Reason, ReasonCode: t.ReasonCode,
		Attempt: t.Attempt, FromRef: t.FromRef, ToRef: t.ToRef, StartedAt: utcPtr(t.StartedAt), VerifiedAt: utcPtr(t.VerifiedAt),
		FinishedAt: utcPtr(t.FinishedAt), ExternalRef: t.ExternalRef,
	}
	if p := progress.Normalize(t.Progress, string(t.Status)); p != nil {
		q := *p
		q.FollowUntil = nil
		q.UpdatedAt = q.UpdatedAt.UTC()
		v.Progress = &q
	}
	withPlacement(&v, r, t)
	return v
}

func newSummary(r rollout.Rollout, names Directory) schema.RolloutSummary {
	v := schema.RolloutSummary{ID: r.ID, Fleet: r.Fleet, Kind: r.Kind, Status: r.Status, Origin: r.Origin, ToRef: r.ToRef, CreatedAt: r.CreatedAt.UTC(),
		Progress: stageProgress(r)}
	if a := createdByActor(r); a != "" {
		v.CreatedBy = names.DisplayName(a)
	}
	return v
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
