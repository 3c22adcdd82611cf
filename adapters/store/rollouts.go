package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/adapters/store/tables"
	"github.com/myriarch/myriarch/core/notify"
	"github.com/myriarch/myriarch/core/page"
	"github.com/myriarch/myriarch/core/planner"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

// lockPrefix starts the id of the lock items in the rollouts table; the
// item lock#<fleet>#<kind> names the active rollout of that fleet and kind.
const lockPrefix = "lock#"

func lockID(fleet string, k policy.Kind) string { return lockPrefix + fleet + "#" + string(k) }

func idKey(id string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{tables.AttrID: str(id)}
}

func fleetKind(fleet string, k policy.Kind) string { return fleet + "#" + string(k) }

// listedRollout is the one partition key of index byCreated: every rollout,
// newest first. Rollouts are created a few times an hour, far below what
// one partition takes, and the index is written only at creation.
const listedRollout = "rollout"

func encodeRollout(r rollout.Rollout, version int64) (item, error) {
	r.Version = version
	return newItem().s(tables.AttrID, r.ID).n(attrV, version).s(tables.AttrFleet, r.Fleet).s(attrKind, string(r.Kind)).
		s(tables.AttrFleetKind, fleetKind(r.Fleet, r.Kind)).s(tables.AttrCreatedAt, sortableTime(r.CreatedAt)).s(tables.AttrListed, listedRollout).
		s(attrStatus, string(r.Status)).doc(r)
}

func decodeRollout(av map[string]types.AttributeValue) (rollout.Rollout, error) {
	id := keyOf(av, tables.AttrID)
	d := newDecoder("rollout "+id, av)
	var r rollout.Rollout
	d.str(tables.AttrID)
	v := d.num(attrV)
	fleet, kind, status := d.str(tables.AttrFleet), d.str(attrKind), d.str(attrStatus)
	d.str(tables.AttrFleetKind)
	d.str(tables.AttrCreatedAt)
	d.doc(&r)
	// The top-level attributes are the ones conditions and indexes use.
	r.ID, r.Version, r.Fleet, r.Kind, r.Status = id, v, fleet, policy.Kind(kind), rollout.Status(status)
	return r, d.err
}

// GetRollout reads a rollout (strongly consistent). A missing rollout is an
// error wrapping rollout.ErrNotFound.
func (s *Store) GetRollout(ctx context.Context, id string) (rollout.Rollout, error) {
	av, err := s.getItem(ctx, &dynamodb.GetItemInput{TableName: &s.names.Rollouts, Key: idKey(id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return rollout.Rollout{}, classify(err, "get rollout "+id)
	}
	if av == nil || strings.HasPrefix(id, lockPrefix) {
		return rollout.Rollout{}, fmt.Errorf("rollout %s: %w", id, rollout.ErrNotFound)
	}
	return decodeRollout(av)
}

// LoadRollout reads a rollout and all its targets in wave order (strongly
// consistent: a pass decides on them and writes on their versions).
func (s *Store) LoadRollout(ctx context.Context, id string) (rollout.Rollout, []rollout.Target, error) {
	r, err := s.GetRollout(ctx, id)
	if err != nil {
		return r, nil, err
	}
	ts, err := s.allTargets(ctx, id)
	if err != nil {
		return r, nil, err
	}
	return r, ts, nil
}

// ActiveRollout is the rollout that holds the lock of the fleet and kind,
// with its targets; nil when none does (or when it became final between the
// two reads).
func (s *Store) ActiveRollout(ctx context.Context, fleet string, k policy.Kind) (*planner.Active, error) {
	id := lockID(fleet, k)
	av, err := s.getItem(ctx, &dynamodb.GetItemInput{TableName: &s.names.Rollouts, Key: idKey(id), ConsistentRead: aws.Bool(true)})
	if err != nil || av == nil {
		return nil, classify(err, "get "+id)
	}
	d := newDecoder("lock "+id, av)
	holder := d.str(tables.AttrRolloutID)
	if d.err != nil {
		return nil, d.err
	}
	r, ts, err := s.LoadRollout(ctx, holder)
	if err != nil {
		return nil, fmt.Errorf("active rollout of %s: %w", id, err)
	}
	if r.Status.Final() {
		return nil, nil
	}
	return &planner.Active{Rollout: r, Targets: ts}, nil
}

// RolloutsPage is one page of rollouts, newest first: of one fleet and kind
// from index byFleetKind; otherwise from index byCreated, filtered on the
// fleet or the kind when one is given ("" is any), so that a page may hold
// fewer rollouts than limit (even none) while Next is set. The indexes hold
// keys; the page's rollouts are then read by id.
func (s *Store) RolloutsPage(ctx context.Context, fleet string, k policy.Kind, token string, limit int) (page.Page[rollout.Rollout], error) {
	start, err := decodeToken(token)
	if err != nil {
		return page.Page[rollout.Rollout]{}, err
	}
	in := &dynamodb.QueryInput{
		TableName: &s.names.Rollouts, ScanIndexForward: aws.Bool(false), Limit: pageLimit(limit), ExclusiveStartKey: start,
		ExpressionAttributeNames: map[string]string{}, ExpressionAttributeValues: map[string]types.AttributeValue{},
	}
	var filters []string
	switch {
	case fleet != "" && k != "":
		in.IndexName, in.KeyConditionExpression = aws.String(tables.IndexByFleetKind), aws.String("#fk = :fk")
		in.ExpressionAttributeNames["#fk"], in.ExpressionAttributeValues[":fk"] = tables.AttrFleetKind, str(fleetKind(fleet, k))
	default:
		in.IndexName, in.KeyConditionExpression = aws.String(tables.IndexByCreated), aws.String("#l = :l")
		in.ExpressionAttributeNames["#l"], in.ExpressionAttributeValues[":l"] = tables.AttrListed, str(listedRollout)
		if fleet != "" {
			filters = append(filters, "#f = :f")
			in.ExpressionAttributeNames["#f"], in.ExpressionAttributeValues[":f"] = tables.AttrFleet, str(fleet)
		}
		if k != "" {
			filters = append(filters, "#k = :k")
			in.ExpressionAttributeNames["#k"], in.ExpressionAttributeValues[":k"] = tables.AttrKind, str(string(k))
		}
	}
	if len(filters) > 0 {
		in.FilterExpression = aws.String(strings.Join(filters, " AND "))
	}
	out, err := s.query(ctx, in)
	if err != nil {
		return page.Page[rollout.Rollout]{}, classify(err, "query rollouts")
	}
	ids := make([]string, len(out.Items))
	keys := make([]map[string]types.AttributeValue, len(out.Items))
	for i, av := range out.Items {
		ids[i] = keyOf(av, tables.AttrID)
		keys[i] = idKey(ids[i])
	}
	items, err := s.batchGetAll(ctx, s.names.Rollouts, keys, false)
	if err != nil {
		return page.Page[rollout.Rollout]{}, classify(err, "read rollouts")
	}
	byID := make(map[string]rollout.Rollout, len(items))
	for _, av := range items {
		r, err := decodeRollout(av)
		if err != nil {
			return page.Page[rollout.Rollout]{}, err
		}
		byID[r.ID] = r
	}
	p := page.Page[rollout.Rollout]{Next: encodeToken(out.LastEvaluatedKey)}
	for _, id := range ids {
		if r, ok := byID[id]; ok {
			p.Items = append(p.Items, r)
		}
	}
	return p, nil
}

// CreateRollout stores a new rollout with its targets on the condition that
// no rollout of its fleet and kind is active. The targets go first (plain
// batch writes under the new, still invisible rollout id), then one
// transaction creates the lock item and the rollout item, each on the
// condition that it does not exist: of two planners exactly one succeeds.
// The loser deletes the targets it wrote and gets ErrConflict. Targets left
// by a crash between the two steps belong to no rollout; LastTargets skips
// them.
func (s *Store) CreateRollout(ctx context.Context, r rollout.Rollout, ts []rollout.Target) error {
	if r.ID == "" || strings.HasPrefix(r.ID, lockPrefix) || r.Version != 0 || !r.Status.Active() {
		return fmt.Errorf("create rollout %q: want a new, active rollout with an id that does not start with %q", r.ID, lockPrefix)
	}
	puts := make([]types.WriteRequest, len(ts))
	for i, t := range ts {
		it, err := encodeTarget(r, t, 1)
		if err != nil {
			return fmt.Errorf("create rollout %s: %w", r.ID, err)
		}
		puts[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: it}}
	}
	if err := s.batchWriteAll(ctx, s.names.Targets, puts); err != nil {
		return classify(err, "create targets of rollout "+r.ID)
	}
	rit, err := encodeRollout(r, 1)
	if err != nil {
		return fmt.Errorf("create rollout %s: %w", r.ID, err)
	}
	lock := newItem().s(tables.AttrID, lockID(r.Fleet, r.Kind)).s(tables.AttrRolloutID, r.ID)
	notExists := "attribute_not_exists(#id)"
	names := map[string]string{"#id": tables.AttrID}
	err = s.transact(ctx, []types.TransactWriteItem{
		{Put: &types.Put{TableName: &s.names.Rollouts, Item: lock, ConditionExpression: &notExists, ExpressionAttributeNames: names}},
		{Put: &types.Put{TableName: &s.names.Rollouts, Item: rit, ConditionExpression: &notExists, ExpressionAttributeNames: names}},
	})
	if err == nil {
		return nil
	}
	err = classify(err, fmt.Sprintf("create rollout %s: %s", r.ID, lockID(r.Fleet, r.Kind)))
	if derr := s.deleteTargets(ctx, r.ID, ts); derr != nil {
		return errors.Join(err, derr)
	}
	return err
}

func (s *Store) deleteTargets(ctx context.Context, rolloutID string, ts []rollout.Target) error {
	dels := make([]types.WriteRequest, len(ts))
	for i, t := range ts {
		dels[i] = types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: targetKey(rolloutID, t.Wave, t.AgentID)}}
	}
	if err := s.batchWriteAll(ctx, s.names.Targets, dels); err != nil {
		return fmt.Errorf("delete the targets of rollout %s that lost its creation: %w", rolloutID, err)
	}
	return nil
}

// EndRollout stores a rollout the planner ended (superseded or failed) with
// the targets it cancelled and its events: SaveEvaluation.
func (s *Store) EndRollout(ctx context.Context, r rollout.Rollout, cancelled []rollout.Target, events ...notify.Event) error {
	return s.SaveEvaluation(ctx, r, cancelled, events...)
}

// AddTargets stores stragglers with the rollout whose last wave took them:
// SaveEvaluation, the new targets on the condition that they do not exist.
func (s *Store) AddTargets(ctx context.Context, r rollout.Rollout, ts []rollout.Target) error {
	return s.SaveEvaluation(ctx, r, ts)
}
