// Package predict tells when a rollout will finish. It runs the real
// planner (core/planner) and the real engine (core/engine) on a virtual
// clock: the planner decides the rollout a fleet would get, engine.Create
// lays it out, and engine.Evaluate is run pass after pass while the
// simulated agents do what the orders ask: an agent that got a start
// reports the change, healthy, one apply time later. Maintenance windows,
// maxConcurrent, health waits, stages, batches, bakes and freezes all come
// from the engine, so the prediction follows them exactly; what it cannot
// know it assumes and says so (Prediction.Assumptions): the apply time
// (the median of the fleet's history, and its 90th percentile for the
// pessimistic finish), green gates, and approvals given the moment they
// are asked for, after which every moment is an offset from the approval.
//
// Like the engine, the package performs no I/O and reads no clock: the
// caller passes the planner's input, or a rollout with its targets and
// agents, the apply times of the fleet's history, and now.
package predict

import (
	"fmt"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/planner"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

// Plan is what the planner would create for a fleet and kind now, with
// its predicted course (the schema Plan of the API).
type Plan struct {
	Fleet  string      `json:"fleet"`
	Kind   policy.Kind `json:"kind"`
	ToRef  string      `json:"toRef"`
	Commit string      `json:"commit"`
	// Planned is false when the planner would create no rollout; Note says
	// why (nothing relevant, the active rollout heads for the target
	// already, a policy that does not exist, ...).
	Planned bool      `json:"planned"`
	Note    string    `json:"note"`
	Policy  PolicyRef `json:"policy"`
	// Relevant counts the agents the change concerns; Excluded lists (at
	// most MaxExcluded of) those the planner keeps out, ExcludedCount all.
	Relevant      int        `json:"relevant"`
	Targets       int        `json:"targets"`
	Excluded      []Excluded `json:"excluded"`
	ExcludedCount int        `json:"excludedCount"`
	Waves         []WavePlan `json:"waves"`
	Stages        []Stage    `json:"stages"`
	// Supersedes is the active rollout the new one would replace;
	// ActiveRolloutID the active rollout that heads for the target already
	// (then nothing is planned: its own prediction is on the rollout).
	Supersedes      string      `json:"supersedes,omitempty"`
	ActiveRolloutID string      `json:"activeRolloutId,omitempty"`
	Prediction      *Prediction `json:"prediction,omitempty"`
}

// MaxExcluded bounds Plan.Excluded.
const MaxExcluded = 100

// PolicyRef names the policy of a plan and where it comes from (the
// source line of a rollout's policy snapshot).
type PolicyRef struct {
	Name   string `json:"name"`
	Source string `json:"source"`
}

// Excluded is a relevant agent the planner keeps out, and why.
type Excluded struct {
	AgentID     string `json:"agentId"`
	DisplayName string `json:"displayName"`
	Reason      string `json:"reason"`
	Code        string `json:"code"`
}

// WavePlan is a wave with its predicted start (its first target's) and end.
type WavePlan struct {
	Index            int    `json:"index"`
	Name             string `json:"name"`
	Size             int    `json:"size"`
	RequiresApproval bool   `json:"requiresApproval"`
	Start            *When  `json:"start,omitempty"`
	End              *When  `json:"end,omitempty"`
}

// Stage is a stage with its predicted start and end (after its bake).
type Stage struct {
	Name  string `json:"name"`
	Wave  int    `json:"wave"`
	Size  int    `json:"size"`
	Start *When  `json:"start,omitempty"`
	End   *When  `json:"end,omitempty"`
}

// Prediction is the predicted course of a rollout. Start is when its first
// target starts (a maintenance window may hold it), Finish when it
// completes with the median apply time, FinishPessimistic with the 90th
// percentile. Both finishes are absent when the simulation did not reach
// the end (Complete false, Reason says why).
type Prediction struct {
	Start             *When        `json:"start,omitempty"`
	Finish            *When        `json:"finish,omitempty"`
	FinishPessimistic *When        `json:"finishPessimistic,omitempty"`
	Approvals         []Approval   `json:"approvals"`
	ApplySeconds      ApplySeconds `json:"applySeconds"`
	Assumptions       []string     `json:"assumptions"`
	Complete          bool         `json:"complete"`
	Reason            string       `json:"reason,omitempty"`
	// Tolerance is how far off the finish may be; absent without one.
	Tolerance *Tolerance `json:"tolerance,omitempty"`
	// Waves and Stages are the course of a running rollout (a plan has
	// them beside the prediction).
	Waves  []WavePlan `json:"waves,omitempty"`
	Stages []Stage    `json:"stages,omitempty"`
}

// Tolerance is how far off the predicted finish may be while the
// assumptions hold. The actual finish is expected between Finish and
// FinishPessimistic: LaterSeconds after Finish at most, with the apply
// times at their 90th percentile and every evaluation of the rollout
// taking EvaluationSeconds (Evaluations of them, on the way to the
// pessimistic finish). It comes sooner than Finish when agents apply
// faster than the median; a red gate, a failure, an agent that joins or a
// late approval move it out of the range (the assumptions say which apply).
//
// Worked example: 20 agents 5 at a time, an apply time of 30s (median and
// 90th percentile), a health wait of 60s: 4 rounds of 90s finish at
// 12:06:00; with 0.25s for each of the 29 evaluations the pessimistic
// finish is 12:06:04.25, LaterSeconds 4.25 (the delays add up along the
// rounds, unevenly: a report pushed past a wake-up of the state machine
// costs a wake-up more).
type Tolerance struct {
	LaterSeconds      float64 `json:"laterSeconds"`
	EvaluationSeconds float64 `json:"evaluationSeconds"`
	Evaluations       int     `json:"evaluations"`
}

// Approval is an approval the rollout will wait for, and when it will ask.
type Approval struct {
	Wave        int    `json:"wave"`
	Name        string `json:"name"`
	RequestedAt When   `json:"requestedAt"`
}

// ApplySeconds is the apply time the prediction assumed, in seconds.
type ApplySeconds struct {
	Median  float64 `json:"median"`
	P90     float64 `json:"p90"`
	Source  string  `json:"source"`
	Samples int     `json:"samples"`
}

// PlanInput is what a plan needs: the planner's input (NewRolloutID names
// the simulated rollout), the fleet's apply times, and the deployment's
// default time zone.
type PlanInput struct {
	Planner        planner.Input
	Apply          ApplyTime
	ServerTimezone string
	// PolicySource writes where a policy comes from, for PolicyRef.Source
	// (nil leaves it empty).
	PolicySource func(policy.Snapshot) string
	// Evaluation is how long one evaluation of the rollout takes at most,
	// for the pessimistic finish (0: DefaultEvaluation; negative: none, the
	// pessimistic finish counts the apply times alone).
	Evaluation time.Duration
}

// DefaultEvaluation is how long the pessimistic finish gives each
// evaluation of a rollout: the state machine's wake-up, the engine's
// reads, decision and writes, and the orders it sends, before what it
// decided takes effect. On the local stack a pass takes tens of
// milliseconds; a Lambda function and DynamoDB in AWS take some more,
// a cold start far more, once.
const DefaultEvaluation = 250 * time.Millisecond

// Planned decides, with the planner, what rollout the fleet would get now,
// and predicts its course.
func Planned(in PlanInput) Plan {
	d := planner.Decide(in.Planner)
	pi := in.Planner
	p := Plan{Fleet: pi.FleetName, Kind: pi.Kind, ToRef: d.Target, Commit: pi.Commit, Note: d.Note, Relevant: d.Relevant,
		ExcludedCount: len(d.Excluded), Excluded: excluded(d.Excluded, pi.Agents), Waves: []WavePlan{}, Stages: []Stage{}}
	if d.Ended != nil {
		p.Supersedes = d.Ended.Rollout.ID
	}
	if d.Created == nil {
		p.Policy = policyRef(pi, in.PolicySource)
		if pi.Active != nil && d.Ended == nil && pi.Active.Rollout.ToRef == d.Target {
			p.ActiveRolloutID = pi.Active.Rollout.ID
			p.Note = fmt.Sprintf("no new rollout: rollout %s (%s) heads for this target already; it carries its own prediction", p.ActiveRolloutID, pi.Active.Rollout.Status)
		}
		if p.Note == "" {
			p.Note = "no rollout: nothing to change"
		}
		return p
	}
	r, ts := d.Created.Rollout, d.Created.Targets
	p.Planned, p.Targets, p.Policy.Name = true, len(ts), r.Policy.Name
	if in.PolicySource != nil {
		p.Policy.Source = in.PolicySource(r.Policy)
	}
	if p.Supersedes != "" {
		p.Note = fmt.Sprintf("supersedes rollout %s, which heads for %s", p.Supersedes, d.Ended.Rollout.ToRef)
	}
	agents := make(map[string]agent.Agent, len(pi.Agents))
	for _, a := range pi.Agents {
		a.Online, _ = pi.Liveness.Online(a, pi.Now)
		agents[a.ID] = a
	}
	var notes []string
	if hasPercentWave(r) && len(r.Policy.MaintenanceWindows) > 0 {
		notes = append(notes, "which agents fall into a percent wave is drawn from the rollout's id: the real rollout puts others into it (as many), whose time zones may differ")
	}
	pred, waves, stages := predict(r, ts, agents, pi.Now, in.ServerTimezone, in.Apply, in.Evaluation, notes)
	p.Prediction, p.Waves, p.Stages = &pred, waves, stages
	return p
}

// LiveInput is a rollout the engine evaluates, with its targets, the
// agents of its open targets (others may be left out), now, and the apply
// times: best the rollout's own (Samples of its targets), else its fleet's.
type LiveInput struct {
	Rollout        rollout.Rollout
	Targets        []rollout.Target
	Agents         map[string]agent.Agent
	Now            time.Time
	ServerTimezone string
	Liveness       agent.Liveness
	Apply          ApplyTime
	Evaluation     time.Duration // as PlanInput's
}

// Evaluated reports whether the engine evaluates rollouts in status s, so
// that their health waits count down: pending, running, waiting_approval,
// paused and frozen.
func Evaluated(s rollout.Status) bool {
	switch s {
	case rollout.Pending, rollout.Running, rollout.WaitingApproval, rollout.Paused, rollout.Frozen:
		return true
	}
	return false
}

// Live predicts the rest of a rollout from its live state; nil when the
// rollout ended or rolls back. A paused or a failed rollout gets no finish
// (stalled): nothing progresses until a person acts, and Reason says so.
// Only what remains is simulated: the targets of waves that completed are
// left out of every pass.
func Live(in LiveInput) *Prediction {
	if why := stalled(in.Rollout.Status); why != "" {
		return stalledPrediction(in, why)
	}
	if !Evaluated(in.Rollout.Status) {
		return nil
	}
	agents := make(map[string]agent.Agent, len(in.Agents))
	for id, a := range in.Agents {
		a.Online, _ = in.Liveness.Online(a, in.Now)
		agents[id] = a
	}
	pred, waves, stages := predict(in.Rollout, in.Targets, agents, in.Now, in.ServerTimezone, in.Apply, in.Evaluation, nil)
	pred.Waves, pred.Stages = waves, stages
	return &pred
}

// Predicted reports whether a rollout in status s has a prediction (Live
// is not nil): those the engine evaluates, and failed, whose prediction
// says why it has no finish.
func Predicted(s rollout.Status) bool {
	return Evaluated(s) || s == rollout.Failed
}

// stalled is why nothing of a rollout in status s progresses until a
// person acts; empty when it progresses on its own.
func stalled(s rollout.Status) string {
	switch s {
	case rollout.Paused:
		return "the rollout is paused: no target starts until it is resumed"
	case rollout.Failed:
		return "the rollout failed: no target starts until a person retries its failed targets, rolls it back or aborts it"
	}
	return ""
}

// stalledPrediction is the prediction of a stalled rollout: its start, the
// apply times it would assume, and why there is no finish.
func stalledPrediction(in LiveInput, why string) *Prediction {
	begin := in.Now
	if in.Rollout.StartedAt != nil {
		begin = *in.Rollout.StartedAt
	}
	a := in.Apply
	return &Prediction{Start: ptr(At(begin)), Approvals: []Approval{}, Assumptions: []string{}, Reason: why,
		ApplySeconds: ApplySeconds{Median: seconds(a.Median), P90: seconds(a.P90), Source: a.Source, Samples: a.Samples}}
}

// predict runs the simulation with the median apply time and, for the
// pessimistic finish, with the 90th percentile and every evaluation taking
// eval (DefaultEvaluation when 0, none when negative): what the engine
// decides takes effect that much after the moment it evaluates.
func predict(r rollout.Rollout, ts []rollout.Target, agents map[string]agent.Agent, now time.Time, tz string, apply ApplyTime, eval time.Duration, notes []string) (Prediction, []WavePlan, []Stage) {
	switch {
	case eval == 0:
		eval = DefaultEvaluation
	case eval < 0:
		eval = 0
	}
	median := newRun(r, ts, agents, now, tz, apply.Median).simulate()
	slow := newRun(r, ts, agents, now, tz, apply.P90)
	slow.evaluation, slow.clock.bound = eval, true
	pessimistic := slow.simulate()
	pred := Prediction{Start: median.start, Approvals: append([]Approval{}, median.approvals...), Complete: median.complete,
		Reason: median.reason, ApplySeconds: ApplySeconds{Median: seconds(apply.Median), P90: seconds(apply.P90), Source: apply.Source, Samples: apply.Samples}}
	if pred.Start == nil { // no target starts (all offline, say): the rollout's own start
		begin := now
		if r.StartedAt != nil {
			begin = *r.StartedAt
		}
		pred.Start = ptr(At(begin))
	}
	if median.complete {
		pred.Finish = median.finish
	}
	if median.complete && pessimistic.complete {
		pred.FinishPessimistic = pessimistic.finish
		pred.Tolerance = &Tolerance{LaterSeconds: later(*median.finish, *pessimistic.finish), EvaluationSeconds: seconds(eval),
			Evaluations: pessimistic.passes}
	}
	pred.Assumptions = append(assumptions(r, ts, agents, apply, median), notes...)
	return pred, wavePlans(r, ts, median), stagePlans(r, ts, median)
}

// later is how much later the pessimistic finish p is than the finish f,
// in seconds: instants, or offsets from the same approval (0 when they
// count from different approvals, which the run of the median and the
// pessimistic one ask for in the same order).
func later(f, p When) float64 {
	switch {
	case f.At != nil && p.At != nil:
		return max(p.At.Sub(*f.At), 0).Seconds()
	case f.AfterApprovalOf != nil && p.AfterApprovalOf != nil && *f.AfterApprovalOf == *p.AfterApprovalOf:
		return float64(max(*p.OffsetSeconds-*f.OffsetSeconds, 0))
	}
	return 0
}

func wavePlans(r rollout.Rollout, ts []rollout.Target, tr trace) []WavePlan {
	sizes := make([]int, len(r.Waves))
	for _, t := range ts {
		if t.Wave >= 0 && t.Wave < len(sizes) {
			sizes[t.Wave]++
		}
	}
	out := make([]WavePlan, len(r.Waves))
	for i, w := range r.Waves {
		out[i] = WavePlan{Index: i, Name: w.Name, Size: sizes[i], RequiresApproval: w.RequireApproval,
			Start: tr.waves[i].start(), End: tr.waves[i].end}
	}
	return out
}

func stagePlans(r rollout.Rollout, ts []rollout.Target, tr trace) []Stage {
	out := make([]Stage, len(r.Stages))
	for i, st := range r.Stages {
		size := 0
		for _, p := range st.Passes {
			size += p.Size
		}
		out[i] = Stage{Name: st.Name, Wave: st.Wave, Size: size, Start: tr.stages[i].start(), End: tr.stages[i].end}
	}
	return out
}

// excluded is the first MaxExcluded exclusions with their agents' names.
func excluded(es []planner.Exclusion, agents []agent.Agent) []Excluded {
	out := make([]Excluded, 0, min(len(es), MaxExcluded))
	at := make(map[string]int, cap(out))
	for _, e := range es[:cap(out)] {
		at[e.AgentID] = len(out)
		out = append(out, Excluded{AgentID: e.AgentID, Reason: e.Reason(), Code: e.Code})
	}
	for _, a := range agents {
		if i, ok := at[a.ID]; ok {
			out[i].DisplayName = a.DisplayName()
		}
	}
	return out
}

// policyRef names the policy the fleet's rollouts of the kind use, when
// the planner creates none (a version rollout of a UI choice uses the
// fleet's selection policy instead).
func policyRef(in planner.Input, source func(policy.Snapshot) string) PolicyRef {
	if in.Fleet == nil {
		return PolicyRef{}
	}
	name := in.Fleet.ConfigPolicyName()
	if in.Kind == policy.KindVersion {
		name = in.Fleet.VersionPolicyName()
	}
	ref := PolicyRef{Name: name}
	if source == nil {
		return ref
	}
	switch p, found := in.Policies[name]; {
	case found:
		ref.Source = source(p.Snapshot(in.Kind))
	case name == policy.DefaultName:
		ref.Source = source(policy.BuiltIn(in.Kind))
	}
	return ref
}
