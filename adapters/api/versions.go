package api

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/myriarch/myriarch/core/audit"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/selection"
)

// selectAttempts bounds the decisions of one select or clear whose
// compare-and-set lost a race; each attempt reads and decides again.
const selectAttempts = 3

// selectResponse is the schema SelectFleetVersionResponse.
type selectResponse struct {
	Target    selection.Target `json:"target"`
	Planned   bool             `json:"planned"`
	RolloutID string           `json:"rolloutId,omitempty"`
	Targets   int              `json:"targets"`
	Message   string           `json:"message"`
}

// selectFleetVersion stores an operator's choice, audits it and asks the
// planner to plan the fleet (docs/version-selection.md, "Choosing a
// version"). The decision is core/selection's; this carries it out.
func (s *server) selectFleetVersion(_ http.ResponseWriter, r *http.Request, p Principal) (int, any, error) {
	if _, pr := newQuery(r); pr != nil {
		return 0, nil, pr
	}
	var req selection.SelectRequest
	if pr := decodeBody(r, &req, MaxBodyBytes, false); pr != nil {
		return 0, nil, pr
	}
	ctx, name := r.Context(), chi.URLParam(r, "name")
	var d selection.SelectDecision
	for attempt := 0; attempt < selectAttempts; attempt++ {
		st, err := s.loadFleet(ctx, name)
		if err != nil {
			return 0, nil, err
		}
		var rel Releases
		if st.fleet != nil {
			if rel, err = s.catalogue().Releases(ctx, st.fleet.Collector.Distribution); err != nil {
				return 0, nil, err
			}
		}
		d = selection.DecideSelect(selection.SelectInput{
			Input:   selection.Input{FleetName: name, Fleet: st.fleet, Selection: st.selection, Actor: p.Actor, MemberVersions: st.memberVersions(), Now: s.Clock().UTC()},
			Request: req, GitCommit: st.commit, Releases: rel.Versions, ActiveVersionRollout: st.activeVersion(),
		})
		if d.Status != http.StatusOK {
			return 0, nil, s.refuseSelection(r, d.Decision)
		}
		if d.Store != nil {
			err := s.Store.SaveSelection(ctx, name, d.Store, d.Store.Revision-1)
			if errors.Is(err, rollout.ErrConflict) {
				continue
			}
			if err != nil {
				return 0, nil, err
			}
		}
		out := selectResponse{Target: d.Target, Message: d.Message}
		if !d.Noop {
			res := s.planNow(ctx, name, policy.KindVersion)
			out.Planned, out.RolloutID, out.Targets = res.Planned, res.RolloutID, res.targets
			if res.RolloutID != "" {
				d.Audit.Details["rolloutId"] = res.RolloutID
			}
		}
		s.audit(ctx, d.Audit)
		return http.StatusOK, out, nil
	}
	return 0, nil, s.lostRace(r, d.Decision, name)
}

// refuseSelection audits a refused attempt on a fleet and returns its
// problem: every decided refusal (400 for the version or the reason, 409,
// 412, 422) is an attempt an auditor wants to see. A 404 is not audited:
// there is no fleet whose history it would belong to, and anyone could
// fill the log with names that do not exist. A body that could not be read
// as the request (decodeBody) never reaches this: nothing says what was
// attempted.
func (s *server) refuseSelection(r *http.Request, d selection.Decision) *Problem {
	if d.Status != http.StatusNotFound {
		if d.Status == http.StatusBadRequest {
			clipDetails(d.Audit.Details, "version", "reason", "error") // error quotes the version
		}
		s.audit(r.Context(), d.Audit)
	}
	if d.Status == http.StatusUnprocessableEntity {
		return unprocessable(d.Code, d.Detail, d.Issues)
	}
	return problem(d.Status, d.Code, d.Detail)
}

// maxAuditedChars bounds a value of the request in the details of a
// refused attempt. A 400 may be about the length itself (a reason of 1 MiB
// fits the body limit), and an audit entry must stay readable and within
// the store's item size (400 KB in DynamoDB).
const maxAuditedChars = selection.MaxReasonChars

// clipDetails cuts the named string details to maxAuditedChars characters.
func clipDetails(details map[string]any, keys ...string) {
	for _, k := range keys {
		if v, ok := details[k].(string); ok {
			details[k] = clip(v, maxAuditedChars)
		}
	}
}

// lostRace answers a compare-and-set that lost every attempt, audited as a
// refusal with the code conflict.
func (s *server) lostRace(r *http.Request, d selection.Decision, fleetName string) *Problem {
	pr := problem(http.StatusConflict, CodeConflict,
		fmt.Sprintf("the version selection of fleet %s kept changing; read it again and retry", fleetName))
	e := d.Audit
	e.Result = audit.ResultFailure
	e.Details["code"], e.Details["error"] = pr.Code, pr.Detail
	s.audit(r.Context(), e)
	return pr
}

// clearResponse is the schema FleetVersionTarget with possibleDowngrade.
type clearResponse struct {
	selection.Target
	PossibleDowngrade bool `json:"possibleDowngrade"`
}

// clearFleetVersionSelection takes the choice back: the Git target applies
// again, and the planner plans the fleet.
func (s *server) clearFleetVersionSelection(_ http.ResponseWriter, r *http.Request, p Principal) (int, any, error) {
	if _, pr := newQuery(r); pr != nil {
		return 0, nil, pr
	}
	var req struct {
		Reason string `json:"reason"`
	}
	if pr := decodeBody(r, &req, MaxBodyBytes, true); pr != nil {
		return 0, nil, pr
	}
	ctx, name := r.Context(), chi.URLParam(r, "name")
	var d selection.ClearDecision
	for attempt := 0; attempt < selectAttempts; attempt++ {
		st, err := s.loadFleet(ctx, name)
		if err != nil {
			return 0, nil, err
		}
		d = selection.DecideClear(selection.ClearInput{
			Input:  selection.Input{FleetName: name, Fleet: st.fleet, Selection: st.selection, Actor: p.Actor, MemberVersions: st.memberVersions(), Now: s.Clock().UTC()},
			Reason: req.Reason,
		})
		if d.Status != http.StatusOK {
			return 0, nil, s.refuseSelection(r, d.Decision)
		}
		if d.Delete != nil {
			err := s.Store.SaveSelection(ctx, name, nil, d.Delete.Revision)
			if errors.Is(err, rollout.ErrConflict) {
				continue
			}
			if err != nil {
				return 0, nil, err
			}
			s.planNow(ctx, name, policy.KindVersion)
		}
		s.audit(ctx, d.Audit)
		return http.StatusOK, clearResponse{Target: d.Target, PossibleDowngrade: d.PossibleDowngrade}, nil
	}
	return 0, nil, s.lostRace(r, d.Decision, name)
}
