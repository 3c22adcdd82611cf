package api

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/myriarch/myriarch/adapters/api/schema"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/page"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/selector"
)

// The inventory of agents: listAgents and getAgent. Online and gone follow
// the liveness rule of rollouts (Deps.Liveness), so that the inventory and
// a rollout never disagree about an agent.

// ConfigDrifted is the configStatus filter value of agents whose reported
// configuration hash differs from the desired one.
const ConfigDrifted = "drifted"

var configStatuses = []string{agent.ConfigApplied, agent.ConfigApplying, agent.ConfigFailed, ConfigDrifted}

// agentFilter is what listAgents keeps of a page of its source: every
// condition that is set must hold. nil booleans do not filter.
type agentFilter struct {
	online, gone, assignmentError *bool
	assigned                      *bool    // a member of a fleet, or of none
	version                       string   // normalized, no leading v
	configStatuses                []string // any of them
	selector                      selector.Selector
}

func parseAgentFilter(q query) (agentFilter, *Problem) {
	var f agentFilter
	var p *Problem
	for _, b := range []struct {
		name string
		dst  **bool
	}{{"online", &f.online}, {"gone", &f.gone}, {"assignmentError", &f.assignmentError}, {"assigned", &f.assigned}} {
		if *b.dst, p = q.boolean(b.name); p != nil {
			return f, p
		}
	}
	f.version = fleet.NormalizeVersion(q.get("version"))
	if f.configStatuses, p = q.list("configStatus", func(v string) bool { return slices.Contains(configStatuses, v) }); p != nil {
		return f, p
	}
	f.selector, p = parseSelector(q.get("selector"))
	return f, p
}

// boolean reads a filter that is true or false; absent is nil.
func (q query) boolean(k string) (*bool, *Problem) {
	switch s := q.get(k); s {
	case "":
		return nil, nil
	case "true", "false":
		b := s == "true"
		return &b, nil
	default:
		return nil, badRequest("%s must be true or false, not %q", k, clip(s, 64))
	}
}

// parseSelector reads attribute conditions, comma-separated, in the forms
// of a policy's selector conditions (selector.ParseConditions): key=value,
// key!=value, key in (a, b), key notin (a, b); every one must hold
// ("labels.env=prod,canary!=true"). One more form than policies have:
// key= (an empty value) is an attribute that is there, empty. The same key
// in two equalities is refused rather than one of its values ignored.
func parseSelector(s string) (selector.Selector, *Problem) {
	if s == "" {
		return selector.Selector{}, nil
	}
	parts, err := selector.SplitConditions(s)
	if err != nil {
		return selector.Selector{}, badRequest("selector: %v", err)
	}
	var sel selector.Selector
	equal := map[string]bool{}
	for i, part := range parts {
		part = strings.TrimSpace(part)
		var key string
		if k, ok := strings.CutSuffix(part, "="); ok && !strings.ContainsAny(k, "!=()") {
			key = strings.TrimSpace(k)
			if key == "" {
				return selector.Selector{}, badRequest("selector: condition %d %q: the attribute name is empty", i+1, clip(part, 64))
			}
			if sel.MatchAttributes == nil {
				sel.MatchAttributes = map[string]string{}
			}
			sel.MatchAttributes[key] = ""
		} else {
			cs, err := selector.ParseConditions(part)
			if se, ok := errors.AsType[*selector.SyntaxError](err); ok {
				se.Condition = i + 1 // of the whole selector, not of the part
			}
			if err != nil {
				return selector.Selector{}, badRequest("selector: %v", err)
			}
			if cs[0].Op == selector.Equals {
				key = cs[0].Key
			}
			sel.MatchConditions = append(sel.MatchConditions, cs...)
		}
		if key != "" && equal[key] {
			return selector.Selector{}, badRequest("selector names the attribute %q twice", clip(key, 64))
		}
		equal[key] = key != ""
	}
	return sel, nil
}

// keeps reports whether a passes every condition at now.
func (f agentFilter) keeps(a agent.Agent, live agent.Liveness, now time.Time) bool {
	online, _ := live.Online(a, now)
	switch {
	case f.online != nil && *f.online != online,
		f.gone != nil && *f.gone != live.Gone(a, now),
		f.assignmentError != nil && *f.assignmentError != (a.AssignmentError != ""),
		f.assigned != nil && *f.assigned != (a.Fleet != ""),
		f.version != "" && a.ServiceVersion != f.version,
		!f.selector.Matches(a):
		return false
	}
	if len(f.configStatuses) == 0 {
		return true
	}
	for _, st := range f.configStatuses {
		if st == ConfigDrifted && drifted(a) || st == a.RemoteConfig.Status {
			return true
		}
	}
	return false
}

// drifted: a desired configuration is set and the agent reports another
// (or none). A target just started is drifted until the agent applies it.
func drifted(a agent.Agent) bool {
	return a.DesiredHash != "" && a.RemoteConfig.Hash != a.DesiredHash
}

func (s *server) listAgents(_ http.ResponseWriter, r *http.Request, _ Principal) (int, any, error) {
	q, p := newQuery(r, "fleet", "online", "version", "configStatus", "assignmentError", "assigned", "selector", "gone", "limit", "pageToken")
	if p != nil {
		return 0, nil, p
	}
	f, p := parseAgentFilter(q)
	if p != nil {
		return 0, nil, p
	}
	limit, token, p := q.page()
	if p != nil {
		return 0, nil, p
	}
	out := page.Page[schema.Agent]{Items: []schema.Agent{}}
	fleetName := q.get("fleet")
	if fleetName != "" && !fleet.ValidName(fleetName) {
		return http.StatusOK, out, nil // no fleet has that name, so no agent either; the store would refuse it as a key
	}
	pg, err := s.agentSource(r.Context(), fleetName, f, token, limit)
	if err != nil {
		return 0, nil, pageError(err)
	}
	out.Next = pg.Next
	live, err := s.liveness(r.Context())
	if err != nil {
		return 0, nil, err
	}
	now := s.Clock()
	for _, a := range pg.Items {
		if f.keeps(a, live, now) {
			out.Items = append(out.Items, agentView(a, live, now))
		}
	}
	return http.StatusOK, out, nil
}

// agentSource reads one page of the narrowest listing that holds every
// agent the filter can keep: a fleet's agents (index byFleet), the agents
// with an assignment error (index assignment), else all of them (a Scan).
// The other conditions are applied to the page, which may then be short.
func (s *server) agentSource(ctx context.Context, fleetName string, f agentFilter, token string, limit int) (page.Page[agent.Agent], error) {
	switch {
	case fleetName != "":
		return s.Store.AgentsOfFleet(ctx, fleetName, token, limit)
	case f.assignmentError != nil && *f.assignmentError:
		return s.Store.AgentsWithAssignmentError(ctx, token, limit)
	}
	return s.Store.AgentsPage(ctx, token, limit)
}

func (s *server) getAgent(_ http.ResponseWriter, r *http.Request, _ Principal) (int, any, error) {
	if _, p := newQuery(r); p != nil {
		return 0, nil, p
	}
	ref, p := agentRef(r)
	if p != nil {
		return 0, nil, p
	}
	a, err := s.findAgent(r.Context(), ref)
	if err != nil {
		return 0, nil, err
	}
	targets, err := s.agentTargets(r.Context(), a.ID)
	if err != nil {
		return 0, nil, err
	}
	live, err := s.liveness(r.Context())
	if err != nil {
		return 0, nil, err
	}
	d := schema.AgentDetail{Agent: agentView(a, live, s.Clock()), Targets: targets}
	if d.Updater, d.Serves, err = s.agentLinks(r.Context(), a, live); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, d, nil
}

// linkedUpdaters is the store's lookup of myriarch-updaters (adapters/store);
// a store without it shows no links.
type linkedUpdaters interface {
	LinkedUpdaters(ctx context.Context, collectorIDs []string) (map[string]agent.Agent, error)
}

// agentLinks is the other end of an updater's link: of a collector that
// takes no packages itself, its updater; of an updater, its collector.
func (s *server) agentLinks(ctx context.Context, a agent.Agent, live agent.Liveness) (updater, serves *schema.AgentLink, err error) {
	link := func(b agent.Agent, known bool) *schema.AgentLink {
		online, _ := live.Online(b, s.Clock())
		return &schema.AgentLink{ID: b.ID, DisplayName: b.DisplayName(), Online: known && online, Known: known}
	}
	if c := a.LinkedCollector(); c != "" {
		col, found, err := s.Store.GetAgent(ctx, c)
		if err != nil {
			return nil, nil, err
		}
		if !found {
			col = agent.Agent{ID: c}
		}
		return nil, link(col, found), nil
	}
	l, ok := s.Store.(linkedUpdaters)
	if !ok || a.InstallsOwnPackages() {
		return nil, nil, nil
	}
	us, err := l.LinkedUpdaters(ctx, []string{a.ID})
	if err != nil {
		return nil, nil, err
	}
	if u, ok := us[a.ID]; ok {
		return link(u, true), nil, nil
	}
	return nil, nil, nil
}

// agentRef is the agent of the path, unescaped: chi matches the escaped
// path when the request has one (a name with a '/' arrives as %2F), and
// then hands over the escaped segment. checkPath judged that segment; the
// unescaped value must pass the same rule.
func agentRef(r *http.Request) (string, *Problem) {
	v := chi.URLParam(r, "id")
	if r.URL.RawPath == "" {
		return v, nil
	}
	u, err := url.PathUnescape(v)
	if err != nil || u == "" || !validAgentRef(u) {
		rule := routeParams["agents/{id}"]
		pr := rule.notFound(v)
		pr.Detail += "; " + rule.shape
		return "", pr
	}
	return u, nil
}

// findAgent reads the agent that ref names: the agent with that instance
// UID (one strongly consistent read), else the one agent with that display
// name. Several agents with the name are a 409 listing their ids (the
// first schema.MaxCandidates); none is a 404.
func (s *server) findAgent(ctx context.Context, ref string) (agent.Agent, error) {
	a, found, err := s.Store.GetAgent(ctx, ref)
	if err != nil || found {
		return a, err
	}
	named, err := s.Store.AgentsByName(ctx, ref, schema.MaxCandidates+1)
	switch {
	case err != nil:
		return agent.Agent{}, err
	case len(named) == 0:
		return agent.Agent{}, problem(http.StatusNotFound, CodeAgentNotFound, "no agent has the id or display name "+shorten(ref))
	case len(named) == 1:
		return named[0], nil
	}
	live, err := s.liveness(ctx)
	if err != nil {
		return agent.Agent{}, err
	}
	return agent.Agent{}, ambiguous(ref, named, live, s.Clock())
}

// ambiguous is the 409 of a display name that several agents share: the
// detail lists their ids (the first schema.MaxCandidates) with what tells them
// apart (fleet, state, the attributes whose values differ among them), and
// Candidates carries the same as data. Example detail:
//
//	the display name "vm" names 2 agents: 0192…0d (fleet edge, online,
//	host.id=i-1), 0192…11 (no fleet, offline, host.id=i-2); ask for one of
//	them by its id
func ambiguous(ref string, named []agent.Agent, live agent.Liveness, now time.Time) *Problem {
	more := len(named) > schema.MaxCandidates
	named = named[:min(len(named), schema.MaxCandidates)]
	keys := differingKeys(named)
	cands := make([]schema.AgentCandidate, 0, len(named))
	texts := make([]string, 0, len(named))
	for _, a := range named {
		v := agentView(a, live, now)
		c := schema.AgentCandidate{ID: a.ID, DisplayName: v.DisplayName, Fleet: a.Fleet, Online: v.Online, Gone: v.Gone, LastSeen: v.LastSeen}
		facts := []string{"no fleet"}
		if a.Fleet != "" {
			facts[0] = "fleet " + a.Fleet
		}
		facts = append(facts, c.State())
		for _, k := range keys {
			if c.DifferingAttributes == nil {
				c.DifferingAttributes = map[string]string{}
			}
			c.DifferingAttributes[k] = a.Attributes[k]
			if v := a.Attributes[k]; v != "" {
				facts = append(facts, k+"="+clip(v, 64))
			} else {
				facts = append(facts, "no "+k)
			}
		}
		cands = append(cands, c)
		texts = append(texts, a.ID+" ("+strings.Join(facts, ", ")+")")
	}
	count := fmt.Sprintf("%d agents", len(named))
	if more {
		count = fmt.Sprintf("more than %d agents, among them", schema.MaxCandidates)
	}
	p := problem(http.StatusConflict, CodeAgentAmbiguous, fmt.Sprintf(
		"the display name %s names %s: %s; ask for one of them by its id", shorten(ref), count, strings.Join(texts, ", ")))
	p.Candidates = cands
	return p
}

// differingKeys are the attributes whose values are not the same on every
// agent (a missing one counts as ""), by name, at most
// schema.MaxDifferingAttributes.
func differingKeys(as []agent.Agent) []string {
	seen := map[string]bool{}
	for _, a := range as {
		for k := range a.Attributes {
			seen[k] = true
		}
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(seen)) {
		for _, a := range as[1:] {
			if a.Attributes[k] != as[0].Attributes[k] {
				out = append(out, k)
				break
			}
		}
		if len(out) == schema.MaxDifferingAttributes {
			break
		}
	}
	return out
}

// agentTargets is the agent's last target of each kind, configuration
// first: what it is being rolled to, or was last.
func (s *server) agentTargets(ctx context.Context, id string) ([]schema.AgentTarget, error) {
	out := []schema.AgentTarget{}
	for _, k := range []policy.Kind{policy.KindConfig, policy.KindVersion} {
		last, err := s.Store.LastTargets(ctx, []string{id}, k)
		if err != nil {
			return nil, err
		}
		lt, ok := last[id]
		if !ok {
			continue
		}
		t := lt.Target
		out = append(out, schema.AgentTarget{RolloutID: t.RolloutID, Kind: k, Wave: t.Wave, Status: t.Status, Reason: t.Reason,
			ToRef: t.ToRef, RolloutStatus: lt.RolloutStatus, Active: lt.RolloutStatus.Active()})
	}
	return out, nil
}

// liveness is the rule of rollouts with the gateway tasks' leases as they
// are now (read at most every few seconds: Deps.Liveness.Source caches).
func (s *server) liveness(ctx context.Context) (agent.Liveness, error) {
	return s.Liveness.Snapshot(ctx)
}

// agentView is the agent as the inventory shows it at now by the rule live.
// An agent whose connection is open (not merely in its reconnect grace) was
// heard from within the liveness timeout, or its task would have closed the
// connection: its last seen is now. Otherwise it is the stored lastSeen:
// when the connection closed, or the last stored change.
func agentView(a agent.Agent, live agent.Liveness, now time.Time) schema.Agent {
	online, graceEnd := live.Online(a, now)
	lastSeen := a.LastSeen
	if online && graceEnd.IsZero() && a.Online && a.Task != "" && live.Leases != nil {
		lastSeen = now
	}
	v := schema.Agent{
		ID: a.ID, DisplayName: a.DisplayName(), HostName: a.Attributes[agent.AttrHostName], Fleet: a.Fleet,
		AssignmentError: a.AssignmentError, Attributes: make(map[string]string, len(a.Attributes)),
		Version: a.ServiceVersion, TargetVersion: a.TargetVersion,
		Config: schema.AgentConfig{DesiredHash: a.DesiredHash, ReportedHash: a.RemoteConfig.Hash, EffectiveHash: a.EffectiveHash, Status: a.RemoteConfig.Status,
			Error: a.RemoteConfig.Error, Drifted: drifted(a)},
		Health:   schema.AgentHealth{Reported: a.ReportsHealth(), Healthy: a.Health.Healthy, Status: a.Health.Status, LastError: a.Health.LastError},
		Online:   online,
		Gone:     live.Gone(a, now),
		LastSeen: timeOrNil(lastSeen), ConnectedAt: timeOrNil(a.ConnectedAt),
	}
	for k, val := range a.Attributes {
		v.Attributes[k] = val
	}
	if c := a.Health.Components; c != nil {
		v.Health.Components = &schema.AgentComponents{Total: c.Total, UnhealthyCount: c.UnhealthyCount,
			Unhealthy: append([]string{}, c.Unhealthy...)}
	}
	return v
}

// timeOrNil is t in UTC, nil for the zero time (never reported).
func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// displayNames names the agents of a page of targets by one batch read:
// each agent's display name, its id when it was deleted since.
func (s *server) displayNames(ctx context.Context, ids []string) (map[string]string, error) {
	agents, err := s.Store.AgentsByID(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(ids))
	for _, id := range ids {
		out[id] = id
		if a, ok := agents[id]; ok {
			out[id] = a.DisplayName()
		}
	}
	return out, nil
}
