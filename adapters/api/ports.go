package api

import (
	"context"
	"time"

	"github.com/myriarch/myriarch/adapters/enginetask"
	"github.com/myriarch/myriarch/adapters/plannertask"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/assignment"
	"github.com/myriarch/myriarch/core/audit"
	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/executorobject"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/notify"
	"github.com/myriarch/myriarch/core/page"
	"github.com/myriarch/myriarch/core/planner"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/revision"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/selection"
)

// What the API needs of the world, one capability per interface, in the
// DynamoDB store's own names and types: *store.Store (adapters/store) is a Store
// as it is, and local/store/memstore is its in-memory stand-in. A missing
// rollout is an error wrapping enginetask.ErrRolloutNotFound, a lost
// conditional write one wrapping rollout.ErrConflict, a page token the
// store did not issue one wrapping page.ErrBadToken.

// RolloutReader reads one rollout, alone or with all its targets.
type RolloutReader interface {
	GetRollout(ctx context.Context, id string) (rollout.Rollout, error)
	LoadRollout(ctx context.Context, id string) (rollout.Rollout, []rollout.Target, error)
}

// RolloutLister lists rollouts newest first; fleet "" means every fleet and
// kind "" both kinds.
type RolloutLister interface {
	RolloutsPage(ctx context.Context, fleet string, kind policy.Kind, token string, limit int) (page.Page[rollout.Rollout], error)
}

// TargetLister lists the targets of a rollout in wave order, then by agent
// id; wave rollout.AllWaves lists every wave.
type TargetLister interface {
	TargetsPage(ctx context.Context, rolloutID string, wave int, token string, limit int) (page.Page[rollout.Target], error)
}

// TaskTokens clears the task token of a parked execution after an action
// woke it, only while the stored token is still the one woken: a token the
// execution stored since (it parked again) must survive.
type TaskTokens interface {
	ClearTaskToken(ctx context.Context, rolloutID, token string) error
}

// FleetReader reads the fleets of the applied revision and their agents.
type FleetReader interface {
	Fleets(ctx context.Context) (fleets []fleet.Fleet, commit string, err error)
	Fleet(ctx context.Context, name string) (f *fleet.Fleet, commit string, err error)
	FleetAgents(ctx context.Context, fleet string) ([]agent.Agent, error)
}

// Selections stores UI selections with compare-and-set on their revision
// (planner.Store has the same two methods).
type Selections interface {
	Selection(ctx context.Context, fleet string) (*selection.Selection, error)
	SaveSelection(ctx context.Context, fleet string, s *selection.Selection, previousRevision int64) error
}

// AuditLog appends entries and lists those of one object, newest first.
type AuditLog interface {
	AppendAudit(ctx context.Context, es []audit.Entry) error
	AuditOf(ctx context.Context, targetType, targetID, token string, limit int) (page.Page[audit.Entry], error)
}

// Revisions stores the applied revision. PutRevision replaces the fleets,
// policies and configurations of the applied revision by those of rev; two
// concurrent applies: one wins, the other gets ErrConflict.
type Revisions interface {
	CurrentRevision(ctx context.Context) (*revision.Pointer, error) // nil before the first apply
	PutRevision(ctx context.Context, rev revision.Revision, appliedAt time.Time) error
	Policies(ctx context.Context) (map[string]policy.Policy, error)
	ExecutorObjects(ctx context.Context) (map[string]executorobject.Object, error)
}

// AgentAssigner lists every agent, assigned or not, and is the store of
// the assignment runner: applying a revision runs the revision's
// assignment sweep (assignment.Runner.Sweep) within AssignTimeout.
type AgentAssigner interface {
	AllAgents(ctx context.Context) ([]agent.Agent, error)
	assignment.Store
}

// AgentInventory reads the operators' inventory of agents. The three
// listings are the sources listAgents chooses from: every agent (in the
// store's order, each page by id), a fleet's agents by id, and the agents
// with an assignment error by id; a token of one listing given to another
// wraps page.ErrBadToken. AgentsByName returns the agents whose display name
// is name, by id, at most limit. AgentsByID leaves deleted agents out.
// LastTargets is the planner's read: per agent its target of kind k in the
// newest rollout, with that rollout's status.
type AgentInventory interface {
	GetAgent(ctx context.Context, id string) (a agent.Agent, found bool, err error)
	AgentsByName(ctx context.Context, name string, limit int) ([]agent.Agent, error)
	AgentsByID(ctx context.Context, ids []string) (map[string]agent.Agent, error)
	AgentsPage(ctx context.Context, token string, limit int) (page.Page[agent.Agent], error)
	AgentsOfFleet(ctx context.Context, fleet, token string, limit int) (page.Page[agent.Agent], error)
	AgentsWithAssignmentError(ctx context.Context, token string, limit int) (page.Page[agent.Agent], error)
	LastTargets(ctx context.Context, agentIDs []string, k policy.Kind) (map[string]planner.LastTarget, error)
}

// EventFeed reads the outbox of rollout notifications, a page at a time
// (notify.Query); a cursor it did not issue wraps page.ErrBadToken.
type EventFeed interface {
	EventsPage(ctx context.Context, q notify.Query) (notify.Page, error)
}

// Store is everything the API reads and writes.
type Store interface {
	RolloutReader
	RolloutLister
	TargetLister
	TaskTokens
	FleetReader
	Selections
	AuditLog
	Revisions
	AgentAssigner
	AgentInventory
	AgentCredentials
	ReleaseStore
	EventFeed
	PlanReader
}

// RolloutActor applies an operator action and evaluates the rollout at once
// (enginetask.Evaluator).
type RolloutActor interface {
	Act(ctx context.Context, rolloutID string, req engine.Request) (enginetask.Evaluated, error)
}

var _ RolloutActor = enginetask.Evaluator{}

// Planning plans one fleet and kind now: in-process locally
// (plannertask.Runner), by invoking the planner Lambda synchronously in the
// cloud (plannertask.Lambda). The API bounds each call with PlanTimeout.
type Planning interface {
	PlanFleet(ctx context.Context, fleet string, kind policy.Kind) (plannertask.Reply, error)
}

// Releases is what the release catalog knows of a distribution.
type Releases struct {
	Versions  []string // known releases, with or without a leading v
	Platforms []string // e.g. linux/amd64
}

// ReleaseCatalog lists the known releases of a collector distribution:
// the version options and select-version read it. The API's catalogue is a
// StoredCatalog: the releases stored per distribution with the configured
// ones (Deps.Catalog) merged in.
type ReleaseCatalog interface {
	Releases(ctx context.Context, distribution string) (Releases, error)
}

// StaticCatalog is a catalog from configuration (MYRIARCH_RELEASES and
// MYRIARCH_PLATFORMS): the same releases for every distribution.
type StaticCatalog Releases

// Releases returns the configured releases.
func (c StaticCatalog) Releases(context.Context, string) (Releases, error) { return Releases(c), nil }
