// Package store keeps Myriarch's state in DynamoDB: agents, rollouts and
// their targets, the applied revision (fleets, policies, configurations),
// the UI selections and the audit log. It implements the stores of the
// planner, the engine tasks and the executors on aws-sdk-go-v2.
//
// Every read-modify-write is conditional: items carry a write counter (v) or
// a revision, and a write states the value it read. A lost race returns an
// error wrapping rollout.ErrConflict; the caller re-reads and decides again
// (RetryOnConflict), it never overwrites. Where two items must change
// together (a rollout and its active-rollout lock) one TransactWriteItems
// carries both. Tables, keys, indexes and every access pattern with its
// cost are in ACCESS_PATTERNS.md beside this file.
//
// The store reads no clock: times come from the values it stores (an
// agent's lastSeen, an audit entry's at, a revision's appliedAt).
package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/adapters/store/tables"
	"github.com/myriarch/myriarch/adapters/usage"
	"github.com/myriarch/myriarch/core/rollout"
)

// Tables are the deployed table names.
type Tables = tables.Names

// TablesWithPrefix names the tables prefix + base name.
func TablesWithPrefix(prefix string) Tables { return tables.WithPrefix(prefix) }

// DefaultLastSeenEvery is how far an agent's lastSeen may move before a
// heartbeat that changes nothing else is written (see RecordAgent).
const DefaultLastSeenEvery = 30 * time.Second

// Store is the DynamoDB store. Its methods may be called concurrently.
type Store struct {
	db    *dynamodb.Client
	names Tables
	// LastSeenEvery coalesces heartbeats: lastSeen alone is written only
	// when it moved at least this far (zero: DefaultLastSeenEvery).
	LastSeenEvery time.Duration
	meter         usage.Meter
}

// New returns a store on the given client and tables.
func New(client *dynamodb.Client, t Tables) *Store {
	return &Store{db: client, names: t, LastSeenEvery: DefaultLastSeenEvery}
}

// conflictError wraps rollout.ErrConflict with what lost the race.
func conflictf(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), rollout.ErrConflict)
}

// classify turns a failed condition or a transaction conflict into
// ErrConflict and leaves every other error as it is, with context.
func classify(err error, what string) error {
	if err == nil {
		return nil
	}
	var ccf *types.ConditionalCheckFailedException
	var tce *types.TransactionCanceledException
	var tcx *types.TransactionConflictException
	switch {
	case errors.As(err, &ccf), errors.As(err, &tcx):
		return conflictf("%s", what)
	case errors.As(err, &tce):
		for _, r := range tce.CancellationReasons {
			if c := deref(r.Code); c == "ConditionalCheckFailed" || c == "TransactionConflict" {
				return conflictf("%s (%s)", what, reasons(tce))
			}
		}
	}
	return fmt.Errorf("%s: %w", what, err)
}

func reasons(tce *types.TransactionCanceledException) string {
	codes := make([]string, len(tce.CancellationReasons))
	for i, r := range tce.CancellationReasons {
		codes[i] = deref(r.Code)
	}
	return "cancellation reasons: " + strings.Join(codes, ", ")
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// RetryOnConflict runs fn up to attempts times while it returns an error
// wrapping rollout.ErrConflict; fn must re-read what it decides on. There is
// no pause between attempts: the re-read is the back-off, and the winner of
// the race has already written.
func RetryOnConflict(ctx context.Context, attempts int, fn func(context.Context) error) error {
	var err error
	for i := 0; i < attempts; i++ {
		if err = ctx.Err(); err != nil {
			return err
		}
		if err = fn(ctx); !errors.Is(err, rollout.ErrConflict) {
			return err
		}
	}
	return fmt.Errorf("after %d attempts: %w", attempts, err)
}

// forEach runs fn(i) for i in [0, n) on up to workers goroutines and returns
// the first error; after an error no new call starts.
func forEach(ctx context.Context, n, workers int, fn func(ctx context.Context, i int) error) error {
	if n == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu    sync.Mutex
		first error
		next  int
		wg    sync.WaitGroup
	)
	take := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if first != nil || next >= n {
			return 0, false
		}
		next++
		return next - 1, true
	}
	for w := 0; w < min(workers, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, ok := take(); ok; i, ok = take() {
				if err := fn(ctx, i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
						cancel()
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// workers bounds the concurrent requests of one call: enough to hide the
// round trip, few enough not to starve the other callers of a Lambda.
const workers = 8

// agentWriteWorkers bounds the conditional writes of one updateAgents call
// (SetDesiredHash for the targets a pass starts, target versions): a wave
// of 1,000 targets is 1,000 single-item writes, which at 8 in flight take
// 125 round trips end to end before the gateways can push.
const agentWriteWorkers = 32

// pingKey is an agent id no agent has (instance UIDs are UUIDs).
const pingKey = "#ping"

// Ping reads one item that does not exist from the agents table: the
// cheapest request that proves the table is reachable with the caller's
// credentials and permissions along the gateway's own data path (half a
// read capacity unit; DescribeTable would not see a data-plane outage). It
// is not metered: health checks are no work of the store.
func (s *Store) Ping(ctx context.Context) error {
	_, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.names.Agents, Key: agentKey(pingKey)})
	if err != nil {
		return fmt.Errorf("read table %s: %w", s.names.Agents, err)
	}
	return nil
}
