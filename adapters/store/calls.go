package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/myriarch/myriarch/adapters/usage"
	"github.com/myriarch/myriarch/core/page"
)

// Usage is what the store asked of DynamoDB since the last reset: requests,
// items and their bytes read and written, and the capacity units that
// DynamoDB reported (ReturnConsumedCapacity TOTAL, indexes included).
type Usage = usage.Counts

// Usage returns the usage since the last ResetUsage, over every kind of call.
func (s *Store) Usage() Usage { return s.meter.Total() }

// UsageByKind returns the usage since the last ResetUsage per kind of call:
// the operation and the table (and index), e.g. "Query targets",
// "Scan agents/lagging", "TransactWriteItems agents".
func (s *Store) UsageByKind() usage.Kinds { return s.meter.Kinds() }

// ResetUsage sets the usage counters to zero.
func (s *Store) ResetUsage() { s.meter.Reset() }

// kind names a call for the meter by its table's base name, so that the
// same call reads the same whatever the deployment's prefix.
func (s *Store) kind(op, table string, index *string) string {
	name := table
	for _, t := range []struct{ full, base string }{
		{s.names.Agents, "agents"}, {s.names.Rollouts, "rollouts"}, {s.names.Targets, "targets"},
		{s.names.Objects, "objects"}, {s.names.Audit, "audit"}, {s.names.Events, "events"},
		{s.names.Gateways, "gateways"},
	} {
		if t.full == table {
			name = t.base
			break
		}
	}
	if index != nil {
		name += "/" + *index
	}
	return op + " " + name
}

func units(cc []types.ConsumedCapacity) float64 {
	var sum float64
	for _, c := range cc {
		if c.CapacityUnits != nil {
			sum += *c.CapacityUnits
		}
	}
	return sum
}

func one(c *types.ConsumedCapacity) []types.ConsumedCapacity {
	if c == nil {
		return nil
	}
	return []types.ConsumedCapacity{*c}
}

// read counts one request that read items.
func read(items []map[string]types.AttributeValue, cc ...types.ConsumedCapacity) usage.Counts {
	c := usage.Counts{Requests: 1, ItemsRead: int64(len(items)), BytesRead: int64(usage.ItemsSize(items)), ReadUnits: units(cc)}
	if len(items) == 0 {
		c.EmptyReads = 1
	}
	return c
}

// wrote counts one request that wrote n items of the given bytes.
func wrote(n, bytes int, cc ...types.ConsumedCapacity) usage.Counts {
	return usage.Counts{Requests: 1, ItemsWritten: int64(n), BytesWritten: int64(bytes), WriteUnits: units(cc)}
}

// The calls below are the only place that talks to DynamoDB: each asks for
// the consumed capacity and counts the items.

const total = types.ReturnConsumedCapacityTotal

func (s *Store) getItem(ctx context.Context, in *dynamodb.GetItemInput) (map[string]types.AttributeValue, error) {
	in.ReturnConsumedCapacity = total
	out, err := s.db.GetItem(ctx, in)
	if err != nil {
		return nil, err
	}
	var items []map[string]types.AttributeValue
	if out.Item != nil {
		items = append(items, out.Item)
	}
	s.meter.Count(s.kind("GetItem", deref(in.TableName), nil), read(items, one(out.ConsumedCapacity)...))
	return out.Item, nil
}

func (s *Store) query(ctx context.Context, in *dynamodb.QueryInput) (*dynamodb.QueryOutput, error) {
	in.ReturnConsumedCapacity = total
	out, err := s.db.Query(ctx, in)
	if err != nil {
		return nil, badStartKey(err, in.ExclusiveStartKey)
	}
	s.meter.Count(s.kind("Query", deref(in.TableName), in.IndexName), read(out.Items, one(out.ConsumedCapacity)...))
	return out, nil
}

func (s *Store) scan(ctx context.Context, in *dynamodb.ScanInput) (*dynamodb.ScanOutput, error) {
	in.ReturnConsumedCapacity = total
	out, err := s.db.Scan(ctx, in)
	if err != nil {
		return nil, err
	}
	s.meter.Count(s.kind("Scan", deref(in.TableName), in.IndexName), read(out.Items, one(out.ConsumedCapacity)...))
	return out, nil
}

func (s *Store) putItem(ctx context.Context, in *dynamodb.PutItemInput) error {
	in.ReturnConsumedCapacity = total
	out, err := s.db.PutItem(ctx, in)
	if err != nil {
		return err
	}
	s.meter.Count(s.kind("PutItem", deref(in.TableName), nil), wrote(1, usage.ItemSize(in.Item), one(out.ConsumedCapacity)...))
	return nil
}

func (s *Store) deleteItem(ctx context.Context, in *dynamodb.DeleteItemInput) error {
	in.ReturnConsumedCapacity = total
	out, err := s.db.DeleteItem(ctx, in)
	if err != nil {
		return err
	}
	s.meter.Count(s.kind("DeleteItem", deref(in.TableName), nil), wrote(1, 0, one(out.ConsumedCapacity)...))
	return nil
}

func (s *Store) transact(ctx context.Context, items []types.TransactWriteItem) error {
	out, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items, ReturnConsumedCapacity: total})
	if err != nil {
		return err
	}
	s.meter.Count(s.transactKind(items), wrote(len(items), transactBytes(items), out.ConsumedCapacity...))
	return nil
}

// transactKind names a transaction by the tables it writes, in order of
// first appearance ("TransactWriteItems targets+rollouts").
func (s *Store) transactKind(items []types.TransactWriteItem) string {
	var names []string
	seen := map[string]bool{}
	for _, it := range items {
		var table *string
		switch {
		case it.Put != nil:
			table = it.Put.TableName
		case it.Update != nil:
			table = it.Update.TableName
		case it.Delete != nil:
			table = it.Delete.TableName
		case it.ConditionCheck != nil:
			table = it.ConditionCheck.TableName
		}
		name := strings.TrimPrefix(s.kind("", deref(table), nil), " ")
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	return "TransactWriteItems " + strings.Join(names, "+")
}

func transactBytes(items []types.TransactWriteItem) int {
	n := 0
	for _, it := range items {
		if it.Put != nil {
			n += usage.ItemSize(it.Put.Item)
		}
	}
	return n
}

// batchGet reads up to 100 keys of one table; unprocessed keys are asked
// again until none is left.
func (s *Store) batchGet(ctx context.Context, table string, keys []map[string]types.AttributeValue, consistent bool) ([]map[string]types.AttributeValue, error) {
	var items []map[string]types.AttributeValue
	req := map[string]types.KeysAndAttributes{table: {Keys: keys, ConsistentRead: &consistent}}
	for try := 0; len(req) > 0 && len(req[table].Keys) > 0; try++ {
		if err := backOff(ctx, try); err != nil {
			return nil, err
		}
		out, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req, ReturnConsumedCapacity: total})
		if err != nil {
			return nil, err
		}
		got := out.Responses[table]
		s.meter.Count(s.kind("BatchGetItem", table, nil), read(got, out.ConsumedCapacity...))
		items = append(items, got...)
		req = out.UnprocessedKeys
	}
	return items, nil
}

// batchWrite writes up to 25 puts or deletes of one table; unprocessed items
// are sent again until none is left.
func (s *Store) batchWrite(ctx context.Context, table string, reqs []types.WriteRequest) error {
	req := map[string][]types.WriteRequest{table: reqs}
	for try := 0; len(req[table]) > 0; try++ {
		if err := backOff(ctx, try); err != nil {
			return err
		}
		out, err := s.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: req, ReturnConsumedCapacity: total})
		if err != nil {
			return err
		}
		s.meter.Count(s.kind("BatchWriteItem", table, nil), wrote(len(req[table])-len(out.UnprocessedItems[table]), batchBytes(req[table], out.UnprocessedItems[table]), out.ConsumedCapacity...))
		req = out.UnprocessedItems
	}
	return nil
}

// batchBytes is the size of the puts of a batch that were processed.
func batchBytes(reqs, unprocessed []types.WriteRequest) int {
	n := 0
	for _, r := range reqs {
		if r.PutRequest != nil {
			n += usage.ItemSize(r.PutRequest.Item)
		}
	}
	for _, r := range unprocessed {
		if r.PutRequest != nil {
			n -= usage.ItemSize(r.PutRequest.Item)
		}
	}
	return n
}

// batchWriteAll writes any number of requests in batches of 25, several
// batches at a time.
func (s *Store) batchWriteAll(ctx context.Context, table string, reqs []types.WriteRequest) error {
	const size = 25
	n := (len(reqs) + size - 1) / size
	return forEach(ctx, n, workers, func(ctx context.Context, i int) error {
		return s.batchWrite(ctx, table, reqs[i*size:min((i+1)*size, len(reqs))])
	})
}

// batchGetAll reads any number of keys in batches of 100, several at a time.
func (s *Store) batchGetAll(ctx context.Context, table string, keys []map[string]types.AttributeValue, consistent bool) ([]map[string]types.AttributeValue, error) {
	const size = 100
	n := (len(keys) + size - 1) / size
	parts := make([][]map[string]types.AttributeValue, n)
	err := forEach(ctx, n, workers, func(ctx context.Context, i int) error {
		got, err := s.batchGet(ctx, table, keys[i*size:min((i+1)*size, len(keys))], consistent)
		parts[i] = got
		return err
	})
	var all []map[string]types.AttributeValue
	for _, p := range parts {
		all = append(all, p...)
	}
	return all, err
}

// backOff pauses before the try-th repetition of a batch whose items were
// left unprocessed (DynamoDB throttled them): 0 for the first call, then
// 25 ms doubling up to about 1.6 s.
func backOff(ctx context.Context, try int) error {
	if try == 0 {
		return nil
	}
	t := time.NewTimer(25 * time.Millisecond << min(try-1, 6))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// badStartKey: DynamoDB refuses a start key that its query cannot have
// produced (a page token that decodes but was not issued for this listing)
// with a ValidationException; that is the caller's bad token, not a fault.
func badStartKey(err error, start map[string]types.AttributeValue) error {
	var api smithy.APIError
	if len(start) > 0 && errors.As(err, &api) && api.ErrorCode() == "ValidationException" {
		return fmt.Errorf("%w: %s", page.ErrBadToken, api.ErrorMessage())
	}
	return err
}
