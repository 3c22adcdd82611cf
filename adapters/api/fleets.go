package api

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"sort"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/myriarch/myriarch/adapters/api/schema"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/page"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/selection"
)

// fleetState is what the fleet operations know of one fleet.
type fleetState struct {
	name      string
	fleet     *fleet.Fleet // nil: not in the applied revision
	commit    string
	selection *selection.Selection
	agents    []agent.Agent
	errored   []agent.Agent                   // agents with an assignment error, for the counts
	active    map[policy.Kind]rollout.Rollout // the active rollout of each kind
}

func (s *server) loadFleet(ctx context.Context, name string) (fleetState, error) {
	st := fleetState{name: name, active: map[policy.Kind]rollout.Rollout{}}
	var err error
	if st.fleet, st.commit, err = s.Store.Fleet(ctx, name); err != nil || st.fleet == nil {
		return st, err
	}
	return st, s.loadFleetDetails(ctx, &st)
}

func (s *server) loadFleetDetails(ctx context.Context, st *fleetState) error {
	var err error
	if st.selection, err = s.Store.Selection(ctx, st.name); err != nil {
		return err
	}
	if st.agents, err = s.Store.FleetAgents(ctx, st.name); err != nil {
		return err
	}
	if st.errored, err = s.agentsWithAssignmentErrors(ctx); err != nil {
		return err
	}
	for _, k := range []policy.Kind{policy.KindConfig, policy.KindVersion} {
		// At most one rollout of a fleet and kind is active, and a new one
		// is created only when none is: the newest is the only candidate.
		pg, err := s.Store.RolloutsPage(ctx, st.name, k, "", 1)
		if err != nil {
			return err
		}
		if len(pg.Items) > 0 && pg.Items[0].Status.Active() {
			st.active[k] = pg.Items[0]
		}
	}
	return nil
}

// agentsWithAssignmentErrors reads every agent that has an assignment
// error: a sparse index, few agents (a fixed fleet selector or attribute
// clears them).
func (s *server) agentsWithAssignmentErrors(ctx context.Context) ([]agent.Agent, error) {
	var out []agent.Agent
	token := ""
	for {
		p, err := s.Store.AgentsWithAssignmentError(ctx, token, 1000)
		if err != nil {
			return nil, err
		}
		out = append(out, p.Items...)
		if token = p.Next; token == "" {
			return out, nil
		}
	}
}

func fleetMissing(name string) *Problem {
	return problem(http.StatusNotFound, CodeFleetNotFound, fmt.Sprintf("fleet %s does not exist", name))
}

func (st fleetState) memberVersions() []string {
	var out []string
	for _, a := range st.agents {
		if a.ServiceVersion != "" {
			out = append(out, a.ServiceVersion)
		}
	}
	return out
}

// activeVersion is the fleet's active version rollout as the selection
// decisions need it.
func (st fleetState) activeVersion() *selection.RolloutSummary {
	r, ok := st.active[policy.KindVersion]
	if !ok {
		return nil
	}
	return &selection.RolloutSummary{ID: r.ID, Status: r.Status, Origin: r.Origin, ToRef: r.ToRef, CreatedBy: r.CreatedBy}
}

func (s *server) fleetView(st fleetState, live agent.Liveness) schema.Fleet {
	f := st.fleet
	target := selection.ResolveVersionTarget(f, selection.Reconciled(f, st.selection))
	v := schema.Fleet{
		Name: f.Name, Commit: st.commit, Distribution: f.Collector.Distribution, GitVersion: f.GitTarget(),
		Executor: f.UpdateExecutor(), ConfigPolicy: f.ConfigPolicyName(), VersionPolicy: f.VersionPolicyName(),
		ConfigHash: f.Config.Hash, Selector: f.Selector, Selection: f.Update.Selection, VersionTarget: target,
		ActiveRollouts: []schema.RolloutSummary{},
	}
	if sel := st.selection; sel != nil {
		v.UISelection = &schema.FleetSelection{
			Version: sel.Version, State: sel.State, StateReason: sel.StateReason, GitVersion: sel.GitVersion, GitCommit: sel.GitCommit,
			SelectedBy: s.Names.DisplayName(sel.SelectedBy), SelectedByActor: sel.SelectedBy, SelectedAt: sel.SelectedAt.UTC(),
			Reason: sel.Reason, RolloutID: sel.RolloutID, PlannedAt: utcPtr(sel.PlannedAt), UpdatedAt: sel.UpdatedAt.UTC(),
		}
	}
	c := fleet.Count(*f, st.agents, st.errored, target.Version, live, s.Clock().UTC())
	v.Agents = schema.AgentCounts{Total: c.Total, Online: c.Online, OnTargetVersion: c.OnTargetVersion, OnConfigHash: c.OnConfigHash,
		Drifted: c.Drifted, Gone: c.Gone, AssignmentErrors: c.AssignmentErrors}
	for _, k := range []policy.Kind{policy.KindConfig, policy.KindVersion} {
		if r, ok := st.active[k]; ok {
			v.ActiveRollouts = append(v.ActiveRollouts, newSummary(r, s.Names))
		}
	}
	return v
}

func (s *server) listFleets(_ http.ResponseWriter, r *http.Request, _ Principal) (int, any, error) {
	q, p := newQuery(r, "limit", "pageToken")
	if p != nil {
		return 0, nil, p
	}
	limit, token, p := q.page()
	if p != nil {
		return 0, nil, p
	}
	from, ok := decodeOffset(token)
	if !ok {
		return 0, nil, pageError(page.ErrBadToken)
	}
	fleets, commit, err := s.Store.Fleets(r.Context())
	if err != nil {
		return 0, nil, err
	}
	sort.Slice(fleets, func(i, j int) bool { return fleets[i].Name < fleets[j].Name })
	live, err := s.liveness(r.Context())
	if err != nil {
		return 0, nil, err
	}
	out := page.Page[schema.Fleet]{Items: []schema.Fleet{}}
	for i := from; i < len(fleets) && i < from+limit; i++ {
		st := fleetState{name: fleets[i].Name, fleet: &fleets[i], commit: commit, active: map[policy.Kind]rollout.Rollout{}}
		if err := s.loadFleetDetails(r.Context(), &st); err != nil {
			return 0, nil, err
		}
		out.Items = append(out.Items, s.fleetView(st, live))
	}
	if from+limit < len(fleets) {
		out.Next = encodeOffset(from + limit)
	}
	return http.StatusOK, out, nil
}

// Offsets are the page tokens of lists the API pages itself.
func encodeOffset(n int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("o:" + strconv.Itoa(n)))
}

func decodeOffset(token string) (int, bool) {
	if token == "" {
		return 0, true
	}
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(b) < 3 || string(b[:2]) != "o:" {
		return 0, false
	}
	n, err := strconv.Atoi(string(b[2:]))
	return n, err == nil && n >= 0
}

func (s *server) getFleet(_ http.ResponseWriter, r *http.Request, _ Principal) (int, any, error) {
	if _, p := newQuery(r); p != nil {
		return 0, nil, p
	}
	name := chi.URLParam(r, "name")
	st, err := s.loadFleet(r.Context(), name)
	if err != nil {
		return 0, nil, err
	}
	if st.fleet == nil {
		return 0, nil, fleetMissing(name)
	}
	live, err := s.liveness(r.Context())
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, s.fleetView(st, live), nil
}

func (s *server) getFleetVersionOptions(_ http.ResponseWriter, r *http.Request, _ Principal) (int, any, error) {
	if _, p := newQuery(r); p != nil {
		return 0, nil, p
	}
	name := chi.URLParam(r, "name")
	st, err := s.loadFleet(r.Context(), name)
	if err != nil {
		return 0, nil, err
	}
	if st.fleet == nil {
		return 0, nil, fleetMissing(name)
	}
	rel, err := s.catalogue().Releases(r.Context(), st.fleet.Collector.Distribution)
	if err != nil {
		return 0, nil, err
	}
	o := selection.Options(selection.OptionsInput{
		Fleet: st.fleet, Selection: st.selection, Releases: rel.Versions, MemberVersions: st.memberVersions(),
		ActiveVersionRollout: st.activeVersion(),
	})
	v := schema.VersionOptions{Allowed: o.Allowed, NotAllowedCode: o.NotAllowedCode, Target: o.Target, Executor: o.Executor,
		VersionPolicy: o.VersionPolicy, Options: o.Options, Platforms: append([]string{}, rel.Platforms...)}
	if ar, ok := st.active[policy.KindVersion]; ok {
		sum := newSummary(ar, s.Names)
		v.ActiveRollout = &sum
	}
	return http.StatusOK, v, nil
}
