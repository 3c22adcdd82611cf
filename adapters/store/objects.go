package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/adapters/store/tables"
	"github.com/myriarch/myriarch/core/executorobject"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/revision"
)

// Partitions of the objects table.
const (
	pkRevision  = "revision"  // sk "current": the pointer to the applied revision
	pkConfig    = "config"    // sk <hash>: a rendered configuration, content-addressed
	pkSelection = "selection" // sk <fleet>: the UI selection of the fleet
	skCurrent   = "current"

	attrCommit    = "commit"
	attrPrevious  = "previous"
	attrAppliedAt = "appliedAt"
	attrBody      = "body"
	attrType      = "contentType"
	attrRevision  = "rev" // selections: Selection.Revision
)

// Kinds of the objects of a revision, each a partition per commit.
const (
	kindFleet    = "fleet"
	kindPolicy   = "policy"
	kindExecutor = "executor"
)

// revisionKinds are the kinds a revision stores.
var revisionKinds = []string{kindFleet, kindPolicy, kindExecutor}

// revisionPK is the partition of one kind of object (fleet, policy,
// executor) of one commit: rev#<commit>#<kind>.
func revisionPK(commit, kind string) string { return "rev#" + commit + "#" + kind }

func objKey(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{tables.AttrPK: str(pk), tables.AttrSK: str(sk)}
}

// CurrentRevision reads the pointer to the applied revision; nil before the
// first apply.
func (s *Store) CurrentRevision(ctx context.Context) (*revision.Pointer, error) {
	av, err := s.getItem(ctx, &dynamodb.GetItemInput{TableName: &s.names.Objects, Key: objKey(pkRevision, skCurrent), ConsistentRead: aws.Bool(true)})
	if err != nil || av == nil {
		return nil, classify(err, "get the current revision")
	}
	d := newDecoder("revision pointer", av)
	info := &revision.Pointer{Commit: d.str(attrCommit), Previous: d.optStr(attrPrevious), Version: d.num(attrV)}
	at := d.str(attrAppliedAt)
	if d.err == nil {
		if info.AppliedAt, err = time.Parse(time.RFC3339Nano, at); err != nil {
			d.fail("attribute %q is %q, want an RFC 3339 time", attrAppliedAt, at)
		}
	}
	return info, d.err
}

// PutRevision applies a validated revision. Its fleets, policies and
// executor objects are written under their commit, its configurations by hash, and only then
// does one conditional write move the current-revision pointer to the new
// commit: a reader sees the old revision or the new one, never a mix within
// one read of the pointer (the planner reads it once for the fleet and once
// for the policies, so a run that straddles an apply may pair a fleet of
// one revision with the policies of the next; the next run corrects it).
// Two concurrent applies: one moves the pointer, the other gets ErrConflict.
// The revision before the previous one is deleted afterwards; the previous
// one stays for readers that read the pointer just before it moved.
// Configurations are kept: agents may still run any of them. The pointer
// moves in one transaction with the assignment sweep of the new counter
// (CurrentSweep), which replaces an unfinished sweep of an older revision.
func (s *Store) PutRevision(ctx context.Context, rev revision.Revision, appliedAt time.Time) error {
	if rev.Commit == "" {
		return fmt.Errorf("apply revision: the commit is empty")
	}
	cur, err := s.CurrentRevision(ctx)
	if err != nil {
		return err
	}
	if err := s.writeRevision(ctx, rev); err != nil {
		return fmt.Errorf("apply revision %s: %w", rev.Commit, err)
	}
	next := revision.Pointer{Commit: rev.Commit, AppliedAt: appliedAt.UTC()}
	var v int64
	if cur != nil {
		v, next.Previous = cur.Version, cur.Commit
		if cur.Commit == rev.Commit {
			next.Previous = cur.Previous
		}
	}
	it := newItem().s(tables.AttrPK, pkRevision).s(tables.AttrSK, skCurrent).n(attrV, v+1).s(attrCommit, next.Commit).
		sIf(attrPrevious, next.Previous).s(attrAppliedAt, next.AppliedAt.Format(time.RFC3339Nano))
	cond, names, values := versionCondition(tables.AttrPK, v)
	// The pointer and the sweep that re-assigns the agents against it move
	// together: the sweep of counter v+1 replaces any older one.
	err = s.transact(ctx, []types.TransactWriteItem{
		{Put: &types.Put{TableName: &s.names.Objects, Item: it,
			ConditionExpression: &cond, ExpressionAttributeNames: names, ExpressionAttributeValues: values}},
		{Put: &types.Put{TableName: &s.names.Objects, Item: sweepItem(v+1, "", false)}},
	})
	if err != nil {
		return classify(err, "apply revision "+rev.Commit+": move the current-revision pointer")
	}
	if cur != nil && cur.Previous != "" && cur.Previous != rev.Commit && cur.Previous != cur.Commit {
		return s.replaceObjects(ctx, cur.Previous, nil)
	}
	return nil
}

// writeRevision writes the configurations (writeConfigs), then makes the
// fleets, policies and executor objects stored under the commit exactly
// those of rev (a commit applied again may differ, for a directory applied
// without Git).
func (s *Store) writeRevision(ctx context.Context, rev revision.Revision) error {
	if err := s.writeConfigs(ctx, rev.Configs); err != nil {
		return err
	}
	want := map[string]item{}
	add := func(kind, name string, v any) error {
		it, err := newItem().s(tables.AttrPK, revisionPK(rev.Commit, kind)).s(tables.AttrSK, name).doc(v)
		if err != nil {
			return fmt.Errorf("%s %s: %w", kind, name, err)
		}
		want[kind+"/"+name] = it
		return nil
	}
	for _, f := range rev.Fleets {
		if err := add(kindFleet, f.Name, f); err != nil {
			return err
		}
	}
	for _, p := range rev.Policies {
		if err := add(kindPolicy, p.Name, p); err != nil {
			return err
		}
	}
	for _, o := range rev.Executors {
		if err := add(kindExecutor, o.Name, o); err != nil {
			return err
		}
	}
	return s.replaceObjects(ctx, rev.Commit, want)
}

// replaceObjects makes the objects stored under commit the items of want
// (by kind/name); nil deletes them all.
func (s *Store) replaceObjects(ctx context.Context, commit string, want map[string]item) error {
	var reqs []types.WriteRequest
	for _, kind := range revisionKinds {
		items, err := s.queryAll(ctx, revisionPK(commit, kind))
		if err != nil {
			return err
		}
		for _, av := range items {
			if name := keyOf(av, tables.AttrSK); want[kind+"/"+name] == nil {
				reqs = append(reqs, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: objKey(revisionPK(commit, kind), name)}})
			}
		}
	}
	for _, it := range want {
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
	}
	return classify(s.batchWriteAll(ctx, s.names.Objects, reqs), "write the objects of revision "+commit)
}

// queryAll reads a whole partition of the objects table (consistent).
func (s *Store) queryAll(ctx context.Context, pk string) ([]map[string]types.AttributeValue, error) {
	var all []map[string]types.AttributeValue
	var start map[string]types.AttributeValue
	for {
		out, err := s.query(ctx, &dynamodb.QueryInput{
			TableName: &s.names.Objects, ConsistentRead: aws.Bool(true), ExclusiveStartKey: start,
			KeyConditionExpression:    aws.String("#pk = :pk"),
			ExpressionAttributeNames:  map[string]string{"#pk": tables.AttrPK},
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(pk)},
		})
		if err != nil {
			return nil, classify(err, "query "+pk)
		}
		all = append(all, out.Items...)
		if start = out.LastEvaluatedKey; start == nil {
			return all, nil
		}
	}
}

// Fleet reads a fleet of the applied revision and that revision's commit;
// nil when the fleet is not in it (or nothing was applied yet).
func (s *Store) Fleet(ctx context.Context, name string) (*fleet.Fleet, string, error) {
	cur, err := s.CurrentRevision(ctx)
	if err != nil || cur == nil {
		return nil, "", err
	}
	av, err := s.getItem(ctx, &dynamodb.GetItemInput{TableName: &s.names.Objects, Key: objKey(revisionPK(cur.Commit, kindFleet), name)})
	if err != nil || av == nil {
		return nil, cur.Commit, classify(err, "get fleet "+name)
	}
	f, err := decodeObject[fleet.Fleet](kindFleet, cur.Commit, av)
	return &f, cur.Commit, err
}

// Fleets lists the fleets of the applied revision by name, with its commit.
func (s *Store) Fleets(ctx context.Context) ([]fleet.Fleet, string, error) {
	cur, err := s.CurrentRevision(ctx)
	if err != nil || cur == nil {
		return nil, "", err
	}
	fleets, err := s.fleetsAt(ctx, cur.Commit)
	return fleets, cur.Commit, err
}

func (s *Store) fleetsAt(ctx context.Context, commit string) ([]fleet.Fleet, error) {
	items, err := s.queryAll(ctx, revisionPK(commit, kindFleet))
	if err != nil {
		return nil, err
	}
	out := make([]fleet.Fleet, 0, len(items))
	for _, av := range items {
		f, err := decodeObject[fleet.Fleet](kindFleet, commit, av)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// Policies reads every policy of the applied revision, by name.
func (s *Store) Policies(ctx context.Context) (map[string]policy.Policy, error) {
	return currentObjects(ctx, s, kindPolicy, func(p policy.Policy) string { return p.Name })
}

// ExecutorObjects reads every executor object of the applied revision, by
// name.
func (s *Store) ExecutorObjects(ctx context.Context) (map[string]executorobject.Object, error) {
	return currentObjects(ctx, s, kindExecutor, func(o executorobject.Object) string { return o.Name })
}

// currentObjects reads the objects of a kind of the applied revision, by
// name; none before the first apply.
func currentObjects[T any](ctx context.Context, s *Store, kind string, name func(T) string) (map[string]T, error) {
	out := map[string]T{}
	cur, err := s.CurrentRevision(ctx)
	if err != nil || cur == nil {
		return out, err
	}
	items, err := s.queryAll(ctx, revisionPK(cur.Commit, kind))
	if err != nil {
		return nil, err
	}
	for _, av := range items {
		v, err := decodeObject[T](kind, cur.Commit, av)
		if err != nil {
			return nil, err
		}
		out[name(v)] = v
	}
	return out, nil
}

func decodeObject[T any](kind, commit string, av map[string]types.AttributeValue) (T, error) {
	var v T
	d := newDecoder(fmt.Sprintf("%s %s (revision %s)", kind, keyOf(av, tables.AttrSK), commit), av)
	d.doc(&v)
	return v, d.err
}
