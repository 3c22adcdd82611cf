package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/adapters/store/tables"
	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/notify"
	"github.com/myriarch/myriarch/core/rollout"
)

// maxTransactItems is DynamoDB's limit of actions in one TransactWriteItems.
const maxTransactItems = 100

// SaveEvaluation stores one evaluation: the changed targets, each on the
// condition of its own version (a new target on its absence), and the
// rollout on the condition of its version; every stored counter goes up by
// one. When the rollout became final the same transaction releases the
// fleet's active-rollout lock. The evaluation's events go into the outbox (the
// events table) in the transaction that writes the rollout, stamped with
// the version it writes (notify.Stamp): they exist exactly when the change
// does, and a change is stored once, so their ids are never written twice.
//
// The rollout's version guards the whole evaluation: two evaluations that read the
// same version cannot both commit, so two evaluations can never, say, each
// start one more target than maxConcurrent allows. An evaluation with up to 98
// changed targets is one transaction (all or nothing). A larger evaluation is a
// chain of transactions of up to 99 targets, each also moving the rollout's
// counter from the value the previous link left (the last link writes the
// rollout itself): a concurrent writer can only slip in between two links;
// it then sees some of the evaluation's targets with the rollout as it was, a
// state the engine continues from, and the rest of the chain fails with
// ErrConflict naming how many targets were stored. The events take room in
// the last link only, so an evaluation has at most maxEventsPerChange of them.
func (s *Store) SaveEvaluation(ctx context.Context, r rollout.Rollout, changed []rollout.Target, events ...notify.Event) error {
	if r.Version == 0 {
		return fmt.Errorf("save rollout %s: it was never created (version 0)", r.ID)
	}
	if len(events) > maxEventsPerChange {
		return fmt.Errorf("save rollout %s: %d events in one change, at most %d", r.ID, len(events), maxEventsPerChange)
	}
	puts, err := s.targetPuts(r, changed)
	if err != nil {
		return fmt.Errorf("save rollout %s: %w", r.ID, err)
	}
	release := r.Status.Final()
	lastCap := maxTransactItems - 1 - len(events)
	if release {
		lastCap--
	}
	lead := len(puts) - min(len(puts), lastCap)
	v := r.Version
	for i := 0; i < lead; i += maxTransactItems - 1 {
		chunk := append(puts[i:min(i+maxTransactItems-1, lead):min(i+maxTransactItems-1, lead)], s.bumpRollout(r.ID, v))
		if err := s.transact(ctx, chunk); err != nil {
			return classify(err, fmt.Sprintf("save rollout %s (%d of %d targets stored)", r.ID, i, len(puts)))
		}
		v++
	}
	return s.saveLast(ctx, r, v, puts[lead:], events, release, lead)
}

// saveLast writes the last link: the remaining targets, the rollout, its
// events and, when it became final, the lock release (last, so that
// onlyLastFailed can tell it). A final rollout that no longer holds the
// lock (saved final before) is written without the release.
func (s *Store) saveLast(ctx context.Context, r rollout.Rollout, v int64, puts []types.TransactWriteItem, events []notify.Event, release bool, stored int) error {
	it, err := encodeRollout(r, v+1)
	if err != nil {
		return fmt.Errorf("save rollout %s: %w", r.ID, err)
	}
	cond, names, values := versionCondition(tables.AttrID, v)
	items := append(puts[:len(puts):len(puts)], types.TransactWriteItem{Put: &types.Put{TableName: &s.names.Rollouts, Item: it,
		ConditionExpression: &cond, ExpressionAttributeNames: names, ExpressionAttributeValues: values}})
	es := append([]notify.Event(nil), events...)
	notify.Stamp(es, v+1)
	eventPuts, err := s.putEvents(es)
	if err != nil {
		return fmt.Errorf("save rollout %s: %w", r.ID, err)
	}
	items = append(items, eventPuts...)
	if release {
		items = append(items, s.releaseLock(r))
	}
	err = s.transact(ctx, items)
	if release && onlyLastFailed(err, len(items)) {
		err = s.transact(ctx, items[:len(items)-1])
	}
	return classify(err, fmt.Sprintf("save rollout %s (%d of %d targets stored)", r.ID, stored, stored+len(puts)))
}

// targetPuts are the conditional puts of changed targets of r, each on the
// version it was read at.
func (s *Store) targetPuts(r rollout.Rollout, changed []rollout.Target) ([]types.TransactWriteItem, error) {
	puts := make([]types.TransactWriteItem, len(changed))
	for i, t := range changed {
		if t.RolloutID != r.ID {
			return nil, fmt.Errorf("target %s belongs to rollout %q", t.AgentID, t.RolloutID)
		}
		it, err := encodeTarget(r, t, t.Version+1)
		if err != nil {
			return nil, err
		}
		cond, names, values := versionCondition(tables.AttrRolloutID, t.Version)
		puts[i] = types.TransactWriteItem{Put: &types.Put{TableName: &s.names.Targets, Item: it,
			ConditionExpression: &cond, ExpressionAttributeNames: names, ExpressionAttributeValues: values}}
	}
	return puts, nil
}

// bumpRollout moves the rollout's counter from v to v+1 and nothing else:
// the guard of an intermediate link of a large evaluation.
func (s *Store) bumpRollout(id string, v int64) types.TransactWriteItem {
	return types.TransactWriteItem{Update: &types.Update{TableName: &s.names.Rollouts, Key: idKey(id),
		UpdateExpression: aws.String("SET #v = :next"), ConditionExpression: aws.String("#v = :v"),
		ExpressionAttributeNames:  map[string]string{"#v": attrV},
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": num(v), ":next": num(v + 1)}}}
}

// releaseLock deletes the lock of the rollout's fleet and kind if the
// rollout holds it.
func (s *Store) releaseLock(r rollout.Rollout) types.TransactWriteItem {
	return types.TransactWriteItem{Delete: &types.Delete{TableName: &s.names.Rollouts, Key: idKey(lockID(r.Fleet, r.Kind)),
		ConditionExpression:       aws.String("#r = :id"),
		ExpressionAttributeNames:  map[string]string{"#r": tables.AttrRolloutID},
		ExpressionAttributeValues: map[string]types.AttributeValue{":id": str(r.ID)}}}
}

// onlyLastFailed reports whether a transaction of n items was cancelled by
// the condition of its last item alone.
func onlyLastFailed(err error, n int) bool {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || len(tce.CancellationReasons) != n {
		return false
	}
	for i, r := range tce.CancellationReasons {
		c := deref(r.Code)
		if i < n-1 && c != "" && c != "None" || i == n-1 && c != "ConditionalCheckFailed" {
			return false
		}
	}
	return true
}

// updateRollout is the read-modify-write of a rollout item alone (tokens,
// executions, a recorded failure): change edits the rollout and reports
// whether anything changed. It returns the rollout as stored afterwards.
func (s *Store) updateRollout(ctx context.Context, id string, change func(*rollout.Rollout) bool) (rollout.Rollout, error) {
	var out rollout.Rollout
	err := RetryOnConflict(ctx, agentAttempts, func(ctx context.Context) error {
		r, err := s.GetRollout(ctx, id)
		if err != nil {
			return err
		}
		out = r
		if !change(&r) {
			return nil
		}
		if err := s.SaveEvaluation(ctx, r, nil); err != nil {
			return err
		}
		r.Version++
		out = r
		return nil
	})
	return out, err
}

// ParkToken stores the task token of an execution parked for approval or a
// pause, only while the rollout is still parkedAs (enginetask.Tokens).
func (s *Store) ParkToken(ctx context.Context, rolloutID, token string, parkedAs rollout.Status) (bool, error) {
	stored := false
	_, err := s.updateRollout(ctx, rolloutID, func(r *rollout.Rollout) bool {
		stored = r.Status == parkedAs
		if !stored || r.TaskToken == token {
			return false
		}
		r.TaskToken = token
		return true
	})
	return stored && err == nil, err
}

// ClearTaskToken removes the task token of a rollout only while it is still
// token: a token the execution stored since (it parked again) survives. A
// missing rollout is no error (api.TaskTokens).
func (s *Store) ClearTaskToken(ctx context.Context, rolloutID, token string) error {
	_, err := s.updateRollout(ctx, rolloutID, func(r *rollout.Rollout) bool {
		if r.TaskToken != token || token == "" {
			return false
		}
		r.TaskToken = ""
		return true
	})
	if errors.Is(err, rollout.ErrNotFound) {
		return nil
	}
	return err
}

// SetExecution records the execution that runs the rollout now.
func (s *Store) SetExecution(ctx context.Context, rolloutID, executionArn string, executions int) error {
	_, err := s.updateRollout(ctx, rolloutID, func(r *rollout.Rollout) bool {
		if r.ExecutionArn == executionArn && r.Executions == executions {
			return false
		}
		r.ExecutionArn, r.Executions = executionArn, executions
		return true
	})
	return err
}

// RecordFailure makes a rollout failed with reason at time at, unless it is
// final (then it stays as it is), with the event rollout.failed; it returns
// the status afterwards. It reads the targets too: the event counts them.
func (s *Store) RecordFailure(ctx context.Context, rolloutID, reason string, at time.Time) (rollout.Status, error) {
	var st rollout.Status
	err := RetryOnConflict(ctx, agentAttempts, func(ctx context.Context) error {
		r, ts, err := s.LoadRollout(ctx, rolloutID)
		if err != nil {
			return err
		}
		st = r.Status
		if r.Status.Final() || r.Status == rollout.Failed && r.StatusReason == reason {
			return nil
		}
		r.Status, r.StatusReason = rollout.Failed, reason
		failed := notify.New(r, ts, []engine.Event{{Type: notify.TypeFailed, Reason: reason}}, at)
		if err := s.SaveEvaluation(ctx, r, nil, failed...); err != nil {
			return err
		}
		st = r.Status
		return nil
	})
	return st, err
}
