package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/go-chi/chi/v5"

	"github.com/myriarch/myriarch/adapters/enginetask"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/page"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/predict"
	"github.com/myriarch/myriarch/core/rollout"
)

var (
	rolloutStatuses = rollout.Statuses
	targetStatuses  = []rollout.TargetStatus{rollout.TargetPending, rollout.TargetWaitingWindow, rollout.TargetInProgress,
		rollout.TargetVerifying, rollout.TargetSucceeded, rollout.TargetFailed, rollout.TargetSkipped,
		rollout.TargetCancelled, rollout.TargetRolledBack}
)

func validKind(s string) bool {
	return s == string(policy.KindConfig) || s == string(policy.KindVersion)
}

func (s *server) listRollouts(_ http.ResponseWriter, r *http.Request, _ Principal) (int, any, error) {
	q, p := newQuery(r, "fleet", "kind", "status", "limit", "pageToken")
	if p != nil {
		return 0, nil, p
	}
	kind := q.get("kind")
	if kind != "" && !validKind(kind) {
		return 0, nil, badRequest("kind must be config or version, not %q", kind)
	}
	statuses, p := q.list("status", func(v string) bool { return slices.Contains(rolloutStatuses, rollout.Status(v)) })
	if p != nil {
		return 0, nil, p
	}
	limit, token, p := q.page()
	if p != nil {
		return 0, nil, p
	}
	out := page.Page[rolloutView]{Items: []rolloutView{}}
	if f := q.get("fleet"); f != "" && !fleet.ValidName(f) {
		return http.StatusOK, out, nil // no fleet has that name, so no rollout either; the store would refuse it as a key
	}
	pg, err := s.Store.RolloutsPage(r.Context(), q.get("fleet"), policy.Kind(kind), token, limit)
	if err != nil {
		return 0, nil, pageError(err)
	}
	out.Next = pg.Next
	for _, ro := range pg.Items {
		if len(statuses) == 0 || slices.Contains(statuses, string(ro.Status)) {
			out.Items = append(out.Items, newRolloutView(ro, s.Names))
		}
	}
	return http.StatusOK, out, nil
}

func (s *server) getRollout(_ http.ResponseWriter, r *http.Request, _ Principal) (int, any, error) {
	if _, p := newQuery(r); p != nil {
		return 0, nil, p
	}
	ro, ts, err := s.loadRollout(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return 0, nil, err
	}
	v := newRolloutDetail(ro, ts, s.Names)
	agents := s.detailAgents(r.Context(), ro, ts)
	withPassScopes(&v, engine.PassScopes(ro, ts, agents, nil))
	v.Prediction = s.livePrediction(r.Context(), ro, ts, agents)
	v.AppliedBy = s.rolloutAppliers(r.Context(), ro)
	return http.StatusOK, v, nil
}

// detailAgents reads in one call the agents the detail needs: those of the
// open targets for the prediction (a rollout the engine evaluates), and
// those of the passes whose regions or zones come from their agents
// (scopedByAgents). Nil when they cannot be read (logged: the detail is
// shown without the prediction, and those passes without the regions or
// zones of their agents).
func (s *server) detailAgents(ctx context.Context, r rollout.Rollout, ts []rollout.Target) map[string]agent.Agent {
	evaluated := predict.Evaluated(r.Status)
	scoped := scopedByAgents(r)
	var ids []string
	for _, t := range ts {
		if evaluated && !t.Status.Final() || scoped[engine.PassKey{Stage: t.Stage, Pass: t.Pass}] {
			ids = append(ids, t.AgentID)
		}
	}
	if len(ids) == 0 {
		return map[string]agent.Agent{}
	}
	agents, err := s.Store.AgentsByID(ctx, ids)
	if err != nil {
		s.Log.WarnContext(ctx, "read the agents of a rollout for its detail", "rollout", r.ID, "error", err.Error())
		return nil
	}
	return agents
}

// loadRollout reads a rollout with its targets; a missing one is a 404.
func (s *server) loadRollout(ctx context.Context, id string) (rollout.Rollout, []rollout.Target, error) {
	ro, ts, err := s.Store.LoadRollout(ctx, id)
	return ro, ts, rolloutError(id, err)
}

func rolloutError(id string, err error) error {
	if errors.Is(err, enginetask.ErrRolloutNotFound) {
		return problem(http.StatusNotFound, CodeRolloutNotFound, fmt.Sprintf("rollout %s does not exist", id))
	}
	return err
}

// targetsScope resolves ?wave= (ref, nil when absent) and ?stage= against
// the rollout: the wave the store reads (rollout.AllWaves, the wave asked for, or
// the stage's) and the stage the targets must be in (nil: any). none: the
// stage is in another wave than the one asked for, so nothing is listed.
func targetsScope(ro rollout.Rollout, ref *waveRef, stageName string) (wave int, stage *stageFilter, none bool, p *Problem) {
	wave = rollout.AllWaves
	if ref != nil {
		if wave, p = ref.resolve(ro); p != nil {
			return 0, nil, false, p
		}
	}
	if stageName == "" {
		return wave, nil, false, nil
	}
	f, p := resolveStage(ro, stageName)
	switch {
	case p != nil:
		return 0, nil, false, p
	case ref == nil:
		return f.wave, &f, false, nil
	case f.wave != rollout.AllWaves && f.wave != wave:
		return 0, nil, true, nil
	}
	return wave, &f, false, nil
}

func (s *server) listRolloutTargets(_ http.ResponseWriter, r *http.Request, _ Principal) (int, any, error) {
	q, p := newQuery(r, "wave", "stage", "status", "limit", "pageToken")
	if p != nil {
		return 0, nil, p
	}
	var ref *waveRef
	if s := q.get("wave"); s != "" {
		w, p := parseWaveText("wave", s)
		if p != nil {
			return 0, nil, p
		}
		ref = &w
	}
	statuses, p := q.list("status", func(v string) bool { return slices.Contains(targetStatuses, rollout.TargetStatus(v)) })
	if p != nil {
		return 0, nil, p
	}
	limit, token, p := q.page()
	if p != nil {
		return 0, nil, p
	}
	id := chi.URLParam(r, "id")
	ro, err := s.Store.GetRollout(r.Context(), id)
	if err != nil {
		return 0, nil, rolloutError(id, err)
	}
	wave, stage, none, p := targetsScope(ro, ref, q.get("stage"))
	if p != nil {
		return 0, nil, p
	}
	if none {
		return http.StatusOK, page.Page[targetView]{Items: []targetView{}}, nil
	}
	pg, err := s.Store.TargetsPage(r.Context(), id, wave, token, limit)
	if err != nil {
		return 0, nil, pageError(err)
	}
	var kept []rollout.Target
	for _, t := range pg.Items {
		if (len(statuses) == 0 || slices.Contains(statuses, string(t.Status))) && (stage == nil || stage.keeps(t)) {
			kept = append(kept, t)
		}
	}
	ids := make([]string, len(kept))
	for i, t := range kept {
		ids[i] = t.AgentID
	}
	names, err := s.displayNames(r.Context(), ids)
	if err != nil {
		return 0, nil, err
	}
	out := page.Page[targetView]{Items: []targetView{}, Next: pg.Next}
	for _, t := range kept {
		v := newTargetView(ro, t)
		v.DisplayName = names[t.AgentID]
		out.Items = append(out.Items, v)
	}
	return http.StatusOK, out, nil
}
