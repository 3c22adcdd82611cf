package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/myriarch/myriarch/core/page"
)

// Usage is what the store asked of DynamoDB since the last reset: requests,
// items read and written (as the store counts them), and the capacity units
// that DynamoDB reported (ReturnConsumedCapacity TOTAL, indexes included).
type Usage struct {
	Requests     int64
	ItemsRead    int64
	ItemsWritten int64
	ReadUnits    float64
	WriteUnits   float64
}

func (u Usage) String() string {
	return fmt.Sprintf("%d requests, %d items read, %d items written, %.1f RCU, %.1f WCU",
		u.Requests, u.ItemsRead, u.ItemsWritten, u.ReadUnits, u.WriteUnits)
}

type meter struct {
	mu sync.Mutex
	u  Usage
}

func (m *meter) read(items int, cc ...types.ConsumedCapacity) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.u.Requests++
	m.u.ItemsRead += int64(items)
	m.u.ReadUnits += units(cc)
}

func (m *meter) wrote(items int, cc ...types.ConsumedCapacity) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.u.Requests++
	m.u.ItemsWritten += int64(items)
	m.u.WriteUnits += units(cc)
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

// Usage returns the usage since the last ResetUsage.
func (s *Store) Usage() Usage {
	s.meter.mu.Lock()
	defer s.meter.mu.Unlock()
	return s.meter.u
}

// ResetUsage sets the usage counters to zero.
func (s *Store) ResetUsage() {
	s.meter.mu.Lock()
	defer s.meter.mu.Unlock()
	s.meter.u = Usage{}
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
	n := 0
	if out.Item != nil {
		n = 1
	}
	s.meter.read(n, one(out.ConsumedCapacity)...)
	return out.Item, nil
}

func (s *Store) query(ctx context.Context, in *dynamodb.QueryInput) (*dynamodb.QueryOutput, error) {
	in.ReturnConsumedCapacity = total
	out, err := s.db.Query(ctx, in)
	if err != nil {
		return nil, badStartKey(err, in.ExclusiveStartKey)
	}
	s.meter.read(len(out.Items), one(out.ConsumedCapacity)...)
	return out, nil
}

func (s *Store) scan(ctx context.Context, in *dynamodb.ScanInput) (*dynamodb.ScanOutput, error) {
	in.ReturnConsumedCapacity = total
	out, err := s.db.Scan(ctx, in)
	if err != nil {
		return nil, err
	}
	s.meter.read(len(out.Items), one(out.ConsumedCapacity)...)
	return out, nil
}

func (s *Store) putItem(ctx context.Context, in *dynamodb.PutItemInput) error {
	in.ReturnConsumedCapacity = total
	out, err := s.db.PutItem(ctx, in)
	if err != nil {
		return err
	}
	s.meter.wrote(1, one(out.ConsumedCapacity)...)
	return nil
}

func (s *Store) deleteItem(ctx context.Context, in *dynamodb.DeleteItemInput) error {
	in.ReturnConsumedCapacity = total
	out, err := s.db.DeleteItem(ctx, in)
	if err != nil {
		return err
	}
	s.meter.wrote(1, one(out.ConsumedCapacity)...)
	return nil
}

func (s *Store) transact(ctx context.Context, items []types.TransactWriteItem) error {
	out, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items, ReturnConsumedCapacity: total})
	if err != nil {
		return err
	}
	s.meter.wrote(len(items), out.ConsumedCapacity...)
	return nil
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
		s.meter.read(len(got), out.ConsumedCapacity...)
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
		s.meter.wrote(len(req[table])-len(out.UnprocessedItems[table]), out.ConsumedCapacity...)
		req = out.UnprocessedItems
	}
	return nil
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
