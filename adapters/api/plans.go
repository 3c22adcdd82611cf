package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/myriarch/myriarch/adapters/api/schema"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/assignment"
	"github.com/myriarch/myriarch/core/executorobject"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/planner"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/predict"
	"github.com/myriarch/myriarch/core/revision"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/selection"
)

// PlanReader is what a plan reads beside the fleet operations: the active
// rollout of a fleet and kind, with its targets (planner.Store's method).
type PlanReader interface {
	ActiveRollout(ctx context.Context, fleet string, k policy.Kind) (*planner.Active, error)
}

// planRolloutID names the rollout a plan simulates; no stored rollout has
// it (stored ids start with r-).
const planRolloutID = "plan"

// History bounds of the apply times: the samples of at most
// historyRollouts recent rollouts of the fleet and kind, historyTargets
// targets of each (one page), and no more once historySamples are in.
const (
	historyRollouts = 3
	historyTargets  = 500
	historySamples  = 200
)

// createPlan answers what the planner would do for a fleet and kind now,
// and when the rollout would finish (core/predict). Nothing is stored: the
// planner decides over what it would read, and the rollout it would create
// runs on a virtual clock.
func (s *server) createPlan(_ http.ResponseWriter, r *http.Request, p Principal) (int, any, error) {
	if _, pr := newQuery(r); pr != nil {
		return 0, nil, pr
	}
	var req schema.PlanRequest
	if pr := decodeBody(r, &req, MaxRevisionBodyBytes, false); pr != nil {
		return 0, nil, pr
	}
	version, pr := checkPlanRequest(req)
	if pr != nil {
		return 0, nil, pr
	}
	ctx, now := r.Context(), s.Clock().UTC()
	in, pr, err := s.plannerInput(ctx, req, now)
	if pr != nil || err != nil {
		return 0, nil, firstError(pr, err)
	}
	if version != "" {
		in.Selection = proposedSelection(in, version, p, now)
	}
	plan := predict.Planned(predict.PlanInput{Planner: in, Apply: s.applyTimes(ctx, req.Fleet, req.Kind, "", nil),
		ServerTimezone: s.ServerTimezone, PolicySource: func(snap policy.Snapshot) string { return policySource(snap, healthWait(snap)) }})
	if version != "" && plan.ToRef != version {
		plan.Planned, plan.Prediction, plan.Waves, plan.Stages = false, nil, []predict.WavePlan{}, []predict.Stage{}
		plan.Note = fmt.Sprintf("version %s would not be the target (%s is): %s", version, orNoTarget(plan.ToRef), reconcileNote(in))
	}
	return http.StatusOK, plan, nil
}

func firstError(pr *Problem, err error) error {
	if pr != nil {
		return pr
	}
	return err
}

// checkPlanRequest refuses what no plan can answer; it returns the
// proposed version without a leading v.
func checkPlanRequest(req schema.PlanRequest) (string, *Problem) {
	switch {
	case req.Fleet == "":
		return "", badRequest("fleet is required")
	case !validKind(string(req.Kind)):
		return "", badRequest("kind must be config or version, not %q", req.Kind)
	case req.Version != "" && req.Kind != policy.KindVersion:
		return "", badRequest("version proposes a target version: it needs kind version")
	}
	v := strings.TrimPrefix(req.Version, "v")
	if _, err := semver.StrictNewVersion(v); req.Version != "" && err != nil {
		return "", badRequest("version %q is not a semantic version", clip(req.Version, 100))
	}
	return v, nil
}

// plannerInput reads what a planner run of the fleet and kind reads: from
// the applied revision, or with the fleets, policies and executors of a
// proposed one, whose assignment of agents to fleets it computes as an
// apply would.
func (s *server) plannerInput(ctx context.Context, req schema.PlanRequest, now time.Time) (planner.Input, *Problem, error) {
	live, err := s.liveness(ctx)
	if err != nil {
		return planner.Input{}, nil, err
	}
	in := planner.Input{FleetName: req.Fleet, Kind: req.Kind, NewRolloutID: planRolloutID, Now: now, Liveness: live}
	if !fleet.ValidName(req.Fleet) {
		return in, fleetMissing(req.Fleet), nil
	}
	if req.Revision == nil {
		err = s.appliedInput(ctx, &in)
	} else {
		var pr *Problem
		if pr, err = s.proposedInput(ctx, &in, *req.Revision); pr != nil {
			return in, pr, nil
		}
	}
	if err != nil {
		return in, nil, err
	}
	if in.Fleet == nil {
		return in, fleetMissing(req.Fleet), nil
	}
	if in.Selection, err = s.Store.Selection(ctx, req.Fleet); err != nil {
		return in, nil, err
	}
	if in.Active, err = s.Store.ActiveRollout(ctx, req.Fleet, req.Kind); err != nil {
		return in, nil, err
	}
	ids := make([]string, len(in.Agents))
	for i, a := range in.Agents {
		ids[i] = a.ID
	}
	in.LastTargets, err = s.Store.LastTargets(ctx, ids, req.Kind)
	return in, nil, err
}

func (s *server) appliedInput(ctx context.Context, in *planner.Input) error {
	var err error
	if in.Fleet, in.Commit, err = s.Store.Fleet(ctx, in.FleetName); err != nil || in.Fleet == nil {
		return err
	}
	if in.Policies, err = s.Store.Policies(ctx); err != nil {
		return err
	}
	if in.ExecutorObjects, err = s.Store.ExecutorObjects(ctx); err != nil {
		return err
	}
	in.Agents, err = s.Store.FleetAgents(ctx, in.FleetName)
	return err
}

// proposedInput validates the revision as validateRevision does (an error
// is a 422 revision_invalid with every issue) and reads the fleet's agents
// as the revision would assign them.
func (s *server) proposedInput(ctx context.Context, in *planner.Input, req schema.RevisionRequest) (*Problem, error) {
	commit, files, pr := revisionFiles(&req.Commit, &req.Files)
	if pr != nil {
		return pr, nil
	}
	rev, issues := revision.Load(files, commit)
	if errs := issues.Errors(); len(errs) > 0 {
		return unprocessable(CodeRevisionInvalid, fmt.Sprintf("the revision has %d error(s); nothing can be planned from it", len(errs)), issues), nil
	}
	f, ok := rev.Fleet(in.FleetName)
	if !ok {
		return problem(http.StatusNotFound, CodeFleetNotFound, fmt.Sprintf("fleet %s is not in revision %s", in.FleetName, commit)), nil
	}
	in.Fleet, in.Commit = &f, commit
	in.Policies = make(map[string]policy.Policy, len(rev.Policies))
	for _, p := range rev.Policies {
		in.Policies[p.Name] = p
	}
	in.ExecutorObjects = make(map[string]executorobject.Object, len(rev.Executors))
	for _, o := range rev.Executors {
		in.ExecutorObjects[o.Name] = o
	}
	all, err := s.Store.AllAgents(ctx)
	if err != nil {
		return nil, err
	}
	for _, a := range all {
		assignment.Decide(rev.Fleets, a).Apply(&a)
		if a.Fleet == in.FleetName {
			in.Agents = append(in.Agents, a)
		}
	}
	return nil, nil
}

// proposedSelection is the UI choice of version as select-version would
// store it: the plan of a proposed version is the plan of that choice.
func proposedSelection(in planner.Input, version string, p Principal, now time.Time) *selection.Selection {
	sel := &selection.Selection{Fleet: in.FleetName, Version: version, State: selection.Active, GitVersion: in.Fleet.GitTarget(),
		GitCommit: in.Commit, SelectedBy: p.Actor, SelectedAt: now, UpdatedAt: now, Reason: "plan"}
	if in.Selection != nil {
		sel.Revision = in.Selection.Revision
	}
	return sel
}

// reconcileNote says why a proposed version is not the target: the
// frame's rules remove or hold it.
func reconcileNote(in planner.Input) string {
	switch {
	case in.Fleet.UpdateExecutor() == fleet.ExecutorNone:
		return "the fleet's update executor is none"
	case in.Selection == nil:
		return "the fleet's frame does not admit it"
	}
	if o := selection.Reconcile(in.Fleet, *in.Selection, in.Commit, in.Now); o.Audit != nil {
		if reason, ok := o.Audit.Details["reason"].(string); ok {
			return reason
		}
	}
	return "the fleet's frame does not admit it"
}

func orNoTarget(v string) string {
	if v == "" {
		return "nothing"
	}
	return v
}

func healthWait(snap policy.Snapshot) time.Duration {
	if snap.HealthWait <= 0 {
		return policy.DefaultHealthWait
	}
	return snap.HealthWait
}

// applyTimes draws the apply times from own (the targets of the rollout
// being predicted) and, while they are too few, from the fleet's recent
// rollouts of the kind other than skip. A failed read is logged: a
// prediction with the defaults is better than none.
func (s *server) applyTimes(ctx context.Context, fleetName string, k policy.Kind, skip string, own []rollout.Target) predict.ApplyTime {
	samples := predict.Samples(own)
	if len(samples) >= predict.MinSamples {
		return predict.ApplyTimes(k, samples)
	}
	pg, err := s.Store.RolloutsPage(ctx, fleetName, k, "", historyRollouts+1)
	if err != nil {
		s.Log.WarnContext(ctx, "read the apply times of the fleet's rollouts", "fleet", fleetName, "error", err.Error())
		return predict.ApplyTimes(k, samples)
	}
	read := 0
	for _, ro := range pg.Items {
		if ro.ID == skip || ro.StartedAt == nil || read == historyRollouts || len(samples) >= historySamples {
			continue
		}
		read++
		ts, err := s.Store.TargetsPage(ctx, ro.ID, rollout.AllWaves, "", historyTargets)
		if err != nil {
			s.Log.WarnContext(ctx, "read the apply times of a rollout", "rollout", ro.ID, "error", err.Error())
			continue
		}
		samples = append(samples, predict.Samples(ts.Items)...)
	}
	return predict.ApplyTimes(k, samples)
}

// livePrediction is the predicted rest of a rollout the engine evaluates,
// or why a paused or failed one has no finish, from agents, which holds at least those of its open targets
// (detailAgents); nil for the others, when the agents could not be read
// (agents nil) or the stored state is one the engine cannot evaluate
// (logged: the rollout is shown without it).
func (s *server) livePrediction(ctx context.Context, r rollout.Rollout, ts []rollout.Target, agents map[string]agent.Agent) (pred *predict.Prediction) {
	if !predict.Predicted(r.Status) || agents == nil {
		return nil
	}
	defer func() {
		if v := recover(); v != nil {
			s.Log.ErrorContext(ctx, "predict a rollout", "rollout", r.ID, "panic", fmt.Sprint(v))
			pred = nil
		}
	}()
	live, err := s.liveness(ctx)
	if err != nil {
		s.Log.WarnContext(ctx, "read gateway leases for a prediction", "rollout", r.ID, "error", err.Error())
		return nil
	}
	return predict.Live(predict.LiveInput{Rollout: r, Targets: ts, Agents: agents, Now: s.Clock().UTC(),
		ServerTimezone: s.ServerTimezone, Liveness: live, Apply: s.applyTimes(ctx, r.Fleet, r.Kind, r.ID, ts)})
}
