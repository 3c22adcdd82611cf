package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/adapters/store/tables"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/assignment"
	"github.com/myriarch/myriarch/core/rollout"
)

// The re-assignment sweep of the applied revision: one item beside the
// revision pointer (objects, pk "revision", sk "sweep"), written in the
// transaction that moves the pointer, so that every applied revision has
// its sweep and a newer one replaces an older unfinished one.
const (
	skSweep         = "sweep"
	attrSweepRev    = "sweepRev" // the pointer's counter the sweep assigns against
	attrSweepCursor = "cursor"   // the last agent id swept; absent at the start
	attrSweepState  = "state"    // sweepRunning or sweepDone
	sweepRunning    = "running"
	sweepDone       = "done"
)

// sweepItem is the sweep of revision counter rev at cursor ("" at the start).
func sweepItem(rev int64, cursor string, done bool) item {
	state := sweepRunning
	if done {
		state = sweepDone
	}
	return newItem().s(tables.AttrPK, pkRevision).s(tables.AttrSK, skSweep).n(attrSweepRev, rev).
		sIf(attrSweepCursor, cursor).s(attrSweepState, state)
}

// CurrentSweep reads the sweep of the newest applied revision (strongly
// consistent, one GetItem); the zero Sweep when none was ever recorded.
func (s *Store) CurrentSweep(ctx context.Context) (assignment.Sweep, error) {
	av, err := s.getItem(ctx, &dynamodb.GetItemInput{TableName: &s.names.Objects, Key: objKey(pkRevision, skSweep), ConsistentRead: aws.Bool(true)})
	if err != nil || av == nil {
		return assignment.Sweep{}, classify(err, "get the assignment sweep")
	}
	d := newDecoder("assignment sweep", av)
	sw := assignment.Sweep{Rev: d.num(attrSweepRev), Cursor: d.optStr(attrSweepCursor), Done: d.str(attrSweepState) == sweepDone}
	return sw, d.err
}

// AdvanceSweep moves the cursor of sweep rev from from to to ("": the
// sweep is done) with one conditional PutItem: the stored sweep must still
// be rev, running, at from. A concurrent sweeper that advanced it first, or
// a newer revision's sweep, makes it write nothing and return false, so the
// cursor never moves backwards.
func (s *Store) AdvanceSweep(ctx context.Context, rev int64, from, to string) (bool, error) {
	cond := "#r = :r AND #st = :running AND "
	names := map[string]string{"#r": attrSweepRev, "#st": attrSweepState, "#c": attrSweepCursor}
	values := map[string]types.AttributeValue{":r": num(rev), ":running": str(sweepRunning)}
	if from == "" {
		cond += "attribute_not_exists(#c)"
	} else {
		cond += "#c = :c"
		values[":c"] = str(from)
	}
	err := s.putItem(ctx, &dynamodb.PutItemInput{TableName: &s.names.Objects, Item: sweepItem(rev, to, to == ""),
		ConditionExpression: &cond, ExpressionAttributeNames: names, ExpressionAttributeValues: values})
	if err = classify(err, fmt.Sprintf("advance the assignment sweep of revision %d", rev)); errors.Is(err, rollout.ErrConflict) {
		return false, nil
	}
	return err == nil, err
}

// AssignPage is one page of the sweep: a strongly consistent Scan of up to
// limit agents after cursor, each decided from the record the scan read.
// Only agents whose assignment changes are written, with a conditional
// PutItem on the scanned record's counter (no read per agent); an agent
// whose write loses a race is assigned by AssignAgent (read again, decide
// again). An agent whose assignment was computed against a newer revision
// than rev is left as it is. The writes of a page run concurrently.
func (s *Store) AssignPage(ctx context.Context, rev int64, cursor string, limit int, decide func(agent.Agent) assignment.Outcome) ([]assignment.Swept, string, error) {
	in := &dynamodb.ScanInput{TableName: &s.names.Agents, ConsistentRead: aws.Bool(true), Limit: aws.Int32(int32(limit))}
	if cursor != "" {
		in.ExclusiveStartKey = agentKey(cursor)
	}
	res, err := s.scan(ctx, in)
	if err != nil {
		return nil, "", classify(err, "scan the agents for the assignment sweep")
	}
	out := make([]assignment.Swept, len(res.Items))
	var writes []int
	recs := make([]AgentRecord, len(res.Items))
	for i, av := range res.Items {
		r, err := decodeAgent(av)
		if err != nil {
			return nil, "", err
		}
		next, changed := assignDecision(edit(r), rev, decide)
		out[i] = assignment.Swept{Before: r.Agent, After: next.Agent, Changed: changed}
		if changed {
			recs[i] = next
			writes = append(writes, i)
		}
	}
	err = forEach(ctx, len(writes), agentWriteWorkers, func(ctx context.Context, w int) error {
		i := writes[w]
		err := s.putAgent(ctx, recs[i])
		if !errors.Is(err, rollout.ErrConflict) {
			return err
		}
		before, after, changed, err := s.AssignAgent(ctx, recs[i].ID, rev, decide)
		out[i] = assignment.Swept{Before: before, After: after, Changed: changed}
		return err
	})
	if err != nil {
		return nil, "", err
	}
	next := ""
	if res.LastEvaluatedKey != nil {
		next = keyOf(res.LastEvaluatedKey, tables.AttrID)
	}
	return out, next, nil
}

// assignDecision is AssignAgent's rule applied to a scanned record: the
// record as it should be written and whether it changes.
func assignDecision(r AgentRecord, rev int64, decide func(agent.Agent) assignment.Outcome) (AgentRecord, bool) {
	if r.AssignedRev > rev {
		return r, false
	}
	next := r
	if !decide(next.Agent).Apply(&next.Agent) && !r.AssignPending {
		return r, false
	}
	next.AssignPending, next.AssignedRev = false, rev
	return next, true
}
