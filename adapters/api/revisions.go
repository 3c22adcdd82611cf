package api

import (
	"context"
	"errors"
	"fmt"
	"github.com/myriarch/myriarch/core/executorobject"
	"net/http"
	"sort"
	"time"
	"unicode/utf8"

	"github.com/myriarch/myriarch/adapters/api/schema"
	"github.com/myriarch/myriarch/core/assignment"
	"github.com/myriarch/myriarch/core/audit"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/issue"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/revision"
	"github.com/myriarch/myriarch/core/rollout"
)

// Audit of revisions.
const (
	TargetRevision      = "revision"
	ActionRevisionApply = "revision.apply"
)

// MaxCommitLength bounds the commit of a revision, which becomes part of
// the store's keys (and the audit target id): a Git commit id is 40 or 64
// hex digits, a content hash or a --commit label of myrctl a few more, and
// a longer value would be refused by DynamoDB as a key, a 500.
const MaxCommitLength = 128

// readRevision decodes {"commit": ..., "files": {path: text}} (6 MiB, and
// what fits the api Lambda's request in AWS).
func readRevision(r *http.Request) (string, map[string][]byte, *Problem) {
	if _, pr := newQuery(r); pr != nil {
		return "", nil, pr
	}
	var req struct {
		Commit *string            `json:"commit"`
		Files  *map[string]string `json:"files"`
	}
	if pr := decodeBody(r, &req, MaxRevisionBodyBytes, false); pr != nil {
		return "", nil, pr
	}
	return revisionFiles(req.Commit, req.Files)
}

// revisionFiles checks the commit and the files of a revision request
// (nil: absent) and returns the files as bytes.
func revisionFiles(commit *string, texts *map[string]string) (string, map[string][]byte, *Problem) {
	switch {
	case commit == nil || *commit == "":
		return "", nil, badRequest("commit is required: the Git commit of the snapshot")
	case utf8.RuneCountInString(*commit) > MaxCommitLength:
		return "", nil, badRequest("commit has %d characters, more than %d", utf8.RuneCountInString(*commit), MaxCommitLength)
	case texts == nil || *texts == nil:
		return "", nil, badRequest("files is required: the files of the revision by path")
	}
	files := make(map[string][]byte, len(*texts))
	for p, text := range *texts {
		files[p] = []byte(text)
	}
	return *commit, files, nil
}

func (s *server) validateRevision(_ http.ResponseWriter, r *http.Request, _ Principal) (int, any, error) {
	commit, files, pr := readRevision(r)
	if pr != nil {
		return 0, nil, pr
	}
	rev, issues := revision.Load(files, commit)
	return http.StatusOK, schema.Validation{Commit: commit, Valid: !issues.HasErrors(), Fleets: fleetNames(rev),
		Policies: policyNames(rev.Policies), Executors: executorNames(rev.Executors), Issues: nonNil(issues)}, nil
}

// applyRevision validates a snapshot and, without an error, stores it,
// assigns the agents to fleets (within AssignTimeout; the planner's minute
// assigns the rest) and plans every affected fleet for both
// kinds (bootstrap included: the planner gives agents without a desired
// hash the assigned one). With an error nothing is applied.
func (s *server) applyRevision(_ http.ResponseWriter, r *http.Request, p Principal) (int, any, error) {
	commit, files, pr := readRevision(r)
	if pr != nil {
		return 0, nil, pr
	}
	ctx, now := r.Context(), s.Clock().UTC()
	rev, issues := revision.Load(files, commit)
	if errs := issues.Errors(); len(errs) > 0 {
		pr := unprocessable(CodeRevisionInvalid, fmt.Sprintf("the revision has %d error(s); nothing was applied", len(errs)), issues)
		s.audit(ctx, revisionEntry(now, p, commit, audit.ResultFailure, map[string]any{"code": pr.Code, "error": pr.Detail, "errors": len(errs)}))
		return 0, nil, pr
	}
	before, _, err := s.Store.Fleets(ctx)
	if err != nil {
		return 0, nil, err
	}
	if err := s.Store.PutRevision(ctx, rev, now); err != nil {
		if errors.Is(err, rollout.ErrConflict) {
			// A refusal like the 422: audited, so that the log shows the
			// attempt that lost the race.
			pr := problem(http.StatusConflict, CodeConflict, "another revision was applied at the same time; apply again")
			s.audit(ctx, revisionEntry(now, p, commit, audit.ResultFailure, map[string]any{"code": pr.Code, "error": pr.Detail}))
			return 0, nil, pr
		}
		return 0, nil, err
	}
	agents, moved, bootstrapped := s.assign(ctx)
	out := schema.ApplyResult{Commit: commit, AppliedAt: now, Agents: agents, Issues: nonNil(issues)}
	out.Fleets = s.planAll(ctx, affected(rev, before, moved), rev, bootstrapped)
	s.audit(ctx, revisionEntry(now, p, commit, audit.ResultSuccess, map[string]any{
		"fleets": fleetNames(rev), "policies": policyNames(rev.Policies), "moved": agents.Moved, "assignmentComplete": agents.Complete, "warnings": len(issues)}))
	return http.StatusOK, out, nil
}

func revisionEntry(now time.Time, p Principal, commit, result string, details map[string]any) audit.Entry {
	return audit.Entry{At: now, Actor: p.Actor, Action: ActionRevisionApply, TargetType: TargetRevision, TargetID: commit,
		Result: result, Details: details}
}

// assign runs the assignment sweep that applying the revision recorded
// (assignment.Runner.Sweep): every agent is moved to the fleet the
// revision assigns it, assignment errors are recorded, and agents without
// a desired hash get their fleet's configuration; only agents that change
// are written, with the revision pointer's counter, so that an assignment
// computed by the agent-event path against the revision before is never
// written over this one. The sweep runs within AssignTimeout; what is left
// (or what an error stopped) the planner's minute continues, and the
// summary says it is partial (complete false). It returns the fleets
// agents left or joined, and the agents bootstrapped by fleet.
func (s *server) assign(ctx context.Context) (schema.AgentAssignment, map[string]bool, map[string]int) {
	runner := assignment.Runner{Store: s.Store, Log: s.Log, Clock: s.Clock}
	res, err := runner.Sweep(ctx, s.Clock().Add(s.AssignTimeout))
	if err != nil {
		s.Log.WarnContext(ctx, "assignment sweep of the applied revision stopped; the planner's minute continues it",
			append(res.Fields(), "error", err.Error())...)
	}
	out := schema.AgentAssignment{Total: res.Scanned, Assigned: res.Assigned, Moved: res.Moved, Unassigned: res.Unassigned,
		Complete: err == nil && res.Done && res.Whole}
	for _, c := range res.Conflicts {
		out.Conflicts = append(out.Conflicts, schema.AgentConflict{AgentID: c.AgentID, Error: c.Error})
	}
	moved := map[string]bool{}
	for _, f := range res.Touched {
		moved[f] = true
	}
	return out, moved, res.Bootstrapped
}

// affected are the fleets to plan: those of the revision, those it
// removed, and those agents left or joined; sorted by name.
func affected(rev revision.Revision, before []fleet.Fleet, moved map[string]bool) []string {
	set := map[string]bool{}
	for _, f := range rev.Fleets {
		set[f.Name] = true
	}
	for _, f := range before {
		set[f.Name] = true
	}
	for name := range moved {
		set[name] = true
	}
	out := make([]string, 0, len(set))
	for name := range set {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// planAll plans the fleets for both kinds within one PlanTimeout; fleets
// left when it is spent are planned by the scheduled planner run. The
// agents the assignment bootstrapped count with the configuration plan of
// their fleet, beside those its planner run bootstrapped: either way they
// got the configuration without a rollout.
func (s *server) planAll(ctx context.Context, names []string, rev revision.Revision, bootstrapped map[string]int) []schema.FleetPlan {
	budget, cancel := context.WithTimeout(ctx, s.PlanTimeout)
	defer cancel()
	out := make([]schema.FleetPlan, 0, len(names))
	for _, name := range names {
		_, kept := rev.Fleet(name)
		fp := schema.FleetPlan{Fleet: name, Removed: !kept}
		for _, k := range []policy.Kind{policy.KindConfig, policy.KindVersion} {
			if budget.Err() != nil {
				res := schema.PlanResult{Kind: k, Note: "not planned now: the scheduled planner run plans it"}
				if k == policy.KindConfig {
					res.Bootstrapped = bootstrapped[name]
				}
				fp.Plans = append(fp.Plans, res)
				continue
			}
			res := s.plan(ctx, budget, name, k)
			if k == policy.KindConfig {
				res.Bootstrapped += bootstrapped[name]
			}
			fp.Plans = append(fp.Plans, res.wire())
		}
		out = append(out, fp)
	}
	return out
}

// wire is the schema PlanResult: the result without what only the handler
// needs (the number of targets of a created rollout).
func (p planResult) wire() schema.PlanResult {
	return schema.PlanResult{Kind: p.Kind, Planned: p.Planned, RolloutID: p.RolloutID, Created: p.Created,
		EndedRolloutID: p.EndedRolloutID, Stragglers: p.Stragglers, Bootstrapped: p.Bootstrapped, Note: p.Note, Error: p.Error}
}

// applyResult is named by the tests.
type applyResult = schema.ApplyResult

func fleetNames(rev revision.Revision) []string {
	out := []string{}
	for _, f := range rev.Fleets {
		if f.Name != "" {
			out = append(out, f.Name)
		}
	}
	sort.Strings(out)
	return out
}

func policyNames(ps []policy.Policy) []string {
	out := []string{}
	for _, p := range ps {
		if p.Name != "" {
			out = append(out, p.Name)
		}
	}
	sort.Strings(out)
	return out
}

func nonNil(l issue.List) issue.List {
	if l == nil {
		return issue.List{}
	}
	return l
}

func (s *server) getCurrentRevision(_ http.ResponseWriter, r *http.Request, _ Principal) (int, any, error) {
	if _, pr := newQuery(r); pr != nil {
		return 0, nil, pr
	}
	ctx := r.Context()
	cur, err := s.Store.CurrentRevision(ctx)
	if err != nil {
		return 0, nil, err
	}
	if cur == nil {
		return 0, nil, problem(http.StatusNotFound, CodeRevisionNotFound, "no revision has been applied yet")
	}
	fleets, _, err := s.Store.Fleets(ctx)
	if err != nil {
		return 0, nil, err
	}
	policies, err := s.Store.Policies(ctx)
	if err != nil {
		return 0, nil, err
	}
	executors, err := s.Store.ExecutorObjects(ctx)
	if err != nil {
		return 0, nil, err
	}
	v := schema.Revision{Commit: cur.Commit, AppliedAt: cur.AppliedAt.UTC(), Fleets: []string{}, Policies: []string{}, Executors: []string{},
		Configs: map[string]string{}}
	for name := range executors {
		v.Executors = append(v.Executors, name)
	}
	sort.Strings(v.Executors)
	for _, f := range fleets {
		v.Fleets = append(v.Fleets, f.Name)
		if f.Config.Hash != "" {
			v.Configs[f.Name] = f.Config.Hash
		}
	}
	for name := range policies {
		v.Policies = append(v.Policies, name)
	}
	sort.Strings(v.Fleets)
	sort.Strings(v.Policies)
	v.AppliedBy = s.appliedBy(ctx, cur.Commit)
	return http.StatusOK, v, nil
}

// appliedBy names who applied a commit, from the audit log: the newest
// successful revision.apply of it ("" when it was not applied through the
// API).
func (s *server) appliedBy(ctx context.Context, commit string) string {
	if as := s.appliers(ctx, commit); len(as) > 0 {
		return s.Names.DisplayName(as[0])
	}
	return ""
}

// appliers are the actors of the successful revision.apply entries of a
// commit, newest first (the audit log's last page of them).
func (s *server) appliers(ctx context.Context, commit string) []string {
	var out []string
	for _, e := range s.applications(ctx, commit) {
		out = append(out, e.Actor)
	}
	return out
}

// applications are the newest successful revision.apply entry of each
// actor who applied the commit, newest first (from the audit log's last
// page of them; none when it cannot be read, logged).
func (s *server) applications(ctx context.Context, commit string) []audit.Entry {
	pg, err := s.Store.AuditOf(ctx, TargetRevision, commit, "", 50)
	if err != nil {
		s.Log.WarnContext(ctx, "read who applied the revision", "commit", commit, "error", err.Error())
		return nil
	}
	var out []audit.Entry
	seen := map[string]bool{}
	for _, e := range pg.Items {
		if e.Action == ActionRevisionApply && e.Result == audit.ResultSuccess && !seen[e.Actor] {
			seen[e.Actor] = true
			out = append(out, e)
		}
	}
	return out
}

// executorNames are the names of the executor objects of a revision.
func executorNames(os []executorobject.Object) []string {
	out := []string{}
	for _, o := range os {
		out = append(out, o.Name)
	}
	return out
}
