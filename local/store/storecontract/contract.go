// Package storecontract is the contract of a rollout store: the rules of
// the DynamoDB store (adapters/store) that callers rely on, as tests that run
// against both it (on DynamoDB Local) and its in-memory stand-in
// (local/store/memstore), so that the fake cannot drift from DynamoDB.
//
// The cases: version conditions (a stale rollout, target, selection or
// release version is rollout.ErrConflict and writes nothing), the
// active-rollout lock (one per fleet and kind, released when the rollout
// ends), paging (limits, tokens that follow to the end with no duplicates
// or omissions, a foreign token wrapping page.ErrBadToken), transactions (a
// failing condition in a write of several items changes none of them),
// selection compare-and-set, concurrent applies of a revision (no lost
// update of the pointer), and the gateway's side (GatewayStore): a report
// keeps the desired state, a disconnect yields to a newer connection, the
// lagging index lists exactly what is to deliver and an acknowledged push
// leaves it, credentials bind once and rotate by offer and promotion, and
// leases belong to the process that holds them.
package storecontract

import (
	"context"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/audit"
	"github.com/myriarch/myriarch/core/notify"
	"github.com/myriarch/myriarch/core/page"
	"github.com/myriarch/myriarch/core/planner"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/releases"
	"github.com/myriarch/myriarch/core/revision"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/selection"
)

// Store is what the contract exercises, in the DynamoDB store's names.
type Store interface {
	CreateRollout(ctx context.Context, r rollout.Rollout, ts []rollout.Target) error
	GetRollout(ctx context.Context, id string) (rollout.Rollout, error)
	LoadRollout(ctx context.Context, id string) (rollout.Rollout, []rollout.Target, error)
	ActiveRollout(ctx context.Context, fleet string, k policy.Kind) (*planner.Active, error)
	SaveEvaluation(ctx context.Context, r rollout.Rollout, changed []rollout.Target, events ...notify.Event) error
	RolloutsPage(ctx context.Context, fleet string, k policy.Kind, token string, limit int) (page.Page[rollout.Rollout], error)
	TargetsPage(ctx context.Context, rolloutID string, wave int, token string, limit int) (page.Page[rollout.Target], error)
	AppendAudit(ctx context.Context, es []audit.Entry) error
	AuditOf(ctx context.Context, targetType, targetID, token string, limit int) (page.Page[audit.Entry], error)
	Selection(ctx context.Context, fleet string) (*selection.Selection, error)
	SaveSelection(ctx context.Context, fleet string, s *selection.Selection, previousRevision int64) error
	CurrentRevision(ctx context.Context) (*revision.Pointer, error)
	PutRevision(ctx context.Context, rev revision.Revision, appliedAt time.Time) error
	GetRelease(ctx context.Context, distribution, version string) (*releases.Release, error)
	PutRelease(ctx context.Context, r releases.Release, previousRevision int64) error
	GatewayStore
}

// Run runs every case, each on a new, empty store from newStore.
func Run(t *testing.T, newStore func(t *testing.T) Store) {
	cases := []struct {
		name string
		run  func(t *testing.T, s Store)
	}{
		{"CreateRollout_StoresVersionOne", createStoresVersionOne},
		{"Lock_OneActiveRolloutPerFleetAndKind", oneActivePerFleetAndKind},
		{"Lock_ReleasedWhenTheRolloutEnds", lockReleasedAtTheEnd},
		{"Version_StaleRolloutIsConflictAndWritesNothing", staleRolloutWritesNothing},
		{"Transaction_StaleTargetWritesNothing", staleTargetWritesNothing},
		{"Paging_TargetsFollowToTheEnd", targetsFollowToTheEnd},
		{"Paging_RolloutsNewestFirst", rolloutsNewestFirst},
		{"Paging_AuditNewestFirst", auditNewestFirst},
		{"Paging_ForeignTokenIsBadToken", foreignTokenIsBadToken},
		{"Selection_CompareAndSet", selectionCompareAndSet},
		{"Revision_ConcurrentAppliesLoseNoUpdate", concurrentApplies},
		{"Release_StaleRevisionIsConflict", staleRelease},
		{"Agent_SaveKeepsTheDesiredState", saveKeepsTheDesiredState},
		{"Agent_DisconnectYieldsToANewerConnection", disconnectYieldsToANewerConnection},
		{"Lagging_ListsExactlyWhatIsToDeliver", laggingListsExactlyWhatIsToDeliver},
		{"Lagging_AckOfAPushTakesTheAgentOut", ackOfAPush},
		{"Credential_BindIsConditional", bindIsConditional},
		{"Credential_OfferAndPromote", offerAndPromote},
		{"Lease_RenewAndEndByTheProcessThatHoldsIt", leaseRenewAndEnd},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, newStore(t))
		})
	}
}
