package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/adapters/store/tables"
	"github.com/myriarch/myriarch/core/agent"
)

// Lease item attributes beyond the key (task).
const (
	attrStarted = "started" // when the task took the lease, sortable text: tells two processes of one task id apart
	attrUntil   = "until"   // when the lease ends, sortable text
	attrEnded   = "ended"   // "1" once the task ended the lease itself (a drain)
)

// leaseRetention is how long after its end a lease item stays before the
// table's TTL removes it: longer than the agent retention (7 days), so that
// an agent left connected on a dead task is known to be offline since the
// lease ended, and gone only a retention after that. The table holds about
// one item per task started in that time.
const leaseRetention = 8 * 24 * time.Hour

// RenewLease writes the lease of a gateway task: alive until until. started
// names this process of the task; the write is conditional on the lease
// being absent or this process's and not ended, so that a second process
// started with the same task id, or a renewal racing the drain, fails with
// ErrConflict instead of taking over.
func (s *Store) RenewLease(ctx context.Context, task string, started, until time.Time) error {
	it := newItem().s(tables.AttrTask, task).s(attrStarted, sortableTime(started)).s(attrUntil, sortableTime(until)).
		n(tables.AttrExpiresAt, until.Add(leaseRetention).Unix())
	cond := "attribute_not_exists(#t) OR (#s = :s AND attribute_not_exists(#e))"
	err := s.putItem(ctx, &dynamodb.PutItemInput{TableName: &s.names.Gateways, Item: it, ConditionExpression: &cond,
		ExpressionAttributeNames:  map[string]string{"#t": tables.AttrTask, "#s": attrStarted, "#e": attrEnded},
		ExpressionAttributeValues: map[string]types.AttributeValue{":s": str(sortableTime(started))}})
	return classify(err, "renew lease of gateway task "+task)
}

// EndLease ends the lease of a gateway task at at: its agents count as
// disconnected then (with the reconnect grace). Conditional on the lease
// being this process's (ErrConflict otherwise).
func (s *Store) EndLease(ctx context.Context, task string, started, at time.Time) error {
	it := newItem().s(tables.AttrTask, task).s(attrStarted, sortableTime(started)).s(attrUntil, sortableTime(at)).
		s(attrEnded, "1").n(tables.AttrExpiresAt, at.Add(leaseRetention).Unix())
	cond := "attribute_not_exists(#t) OR #s = :s"
	err := s.putItem(ctx, &dynamodb.PutItemInput{TableName: &s.names.Gateways, Item: it, ConditionExpression: &cond,
		ExpressionAttributeNames:  map[string]string{"#t": tables.AttrTask, "#s": attrStarted},
		ExpressionAttributeValues: map[string]types.AttributeValue{":s": str(sortableTime(started))}})
	return classify(err, "end lease of gateway task "+task)
}

// Leases reads every gateway task's lease (agent.LeaseSource): a scan of a
// table of about as many items as tasks ran in the last day, eventually
// consistent (a renewal a second old is as good as the current one: leases
// run for the liveness timeout).
func (s *Store) Leases(ctx context.Context) (agent.Leases, error) {
	out := agent.Leases{}
	in := &dynamodb.ScanInput{TableName: &s.names.Gateways}
	for {
		page, err := s.scan(ctx, in)
		if err != nil {
			return nil, classify(err, "read gateway leases")
		}
		for _, av := range page.Items {
			task := keyOf(av, tables.AttrTask)
			d := newDecoder("lease "+task, av)
			until := d.str(attrUntil)
			ended := d.optStr(attrEnded) != ""
			if d.err != nil {
				return nil, d.err
			}
			t, err := time.Parse("2006-01-02T15:04:05.000000000Z", until)
			if err != nil {
				return nil, &DecodeError{Item: "lease " + task, Problem: fmt.Sprintf("until %q: %v", until, err)}
			}
			out[task] = agent.Lease{Until: t, Ended: ended}
		}
		if len(page.LastEvaluatedKey) == 0 {
			return out, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}
