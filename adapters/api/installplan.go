package api

import (
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/myriarch/myriarch/core/installplan"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/selection"
)

// getFleetInstallPlan answers which collector version a host that is not
// enrolled yet installs to join the fleet. The decision is
// installplan.Decide's; this gathers its input: the effective target over
// the reconciled selection, the target versions the planner wrote to the
// members (its record of a Git target), and the fleet's active version
// rollout with the from-versions of its targets. A plan that is not ready
// is a 200 with ready false, a reason and retryAfterSeconds (also as
// Retry-After); a fleet without a target is a 409 no_version_target.
func (s *server) getFleetInstallPlan(w http.ResponseWriter, r *http.Request, _ Principal) (int, any, error) {
	if _, pr := newQuery(r); pr != nil {
		return 0, nil, pr
	}
	ctx, name := r.Context(), chi.URLParam(r, "name")
	st, err := s.loadFleet(ctx, name)
	if err != nil {
		return 0, nil, err
	}
	if st.fleet == nil {
		return 0, nil, fleetMissing(name)
	}
	sel := selection.Reconciled(st.fleet, st.selection)
	in := installplan.Input{Fleet: name, Distribution: st.fleet.Collector.Distribution,
		Target: selection.ResolveVersionTarget(st.fleet, sel), Selection: sel}
	for _, a := range st.agents {
		in.RecordedVersions = append(in.RecordedVersions, a.TargetVersion)
	}
	if ar, ok := st.active[policy.KindVersion]; ok {
		in.Rollout = &installplan.Rollout{ID: ar.ID, Status: ar.Status, ToRef: ar.ToRef}
		if ar.ToRef == in.Target.Version { // only then can the plan be its from-version
			_, ts, err := s.Store.LoadRollout(ctx, ar.ID)
			if err != nil {
				return 0, nil, err
			}
			for _, t := range ts {
				in.Rollout.FromRefs = append(in.Rollout.FromRefs, t.FromRef)
			}
		}
	}
	plan := installplan.Decide(in)
	if plan.NoTarget {
		return 0, nil, problem(http.StatusConflict, CodeNoVersionTarget, plan.Detail)
	}
	if !plan.Ready {
		w.Header().Set("Retry-After", strconv.Itoa(plan.RetryAfterSeconds))
	}
	return http.StatusOK, plan, nil
}
