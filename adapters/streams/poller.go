// Package streams delivers the records of a DynamoDB table's stream to a
// handler: the Poller does it for the local stack the way Lambda's event
// source mapping does in the cloud, and FromLambda turns the records Lambda
// delivers into the same Records, so that one handler serves both.
package streams

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/myriarch/myriarch/adapters/usage"
)

// Record is one change of an item: its kind (INSERT, MODIFY or REMOVE), its
// sequence number within the shard, and the images the stream carries (nil
// when absent: no old image for an insert, none of the kind the stream's
// view leaves out).
type Record struct {
	EventName      string
	SequenceNumber string
	Keys           map[string]types.AttributeValue // the item's key
	Old, New       map[string]types.AttributeValue
}

// Handler handles one batch of records of a shard, in order. An error has
// the batch delivered again.
type Handler func(ctx context.Context, records []Record) error

// Poller delivers a table's stream to a Handler: shard by shard, in order,
// a batch at a time, retrying a batch whose handling failed.
type Poller struct {
	Streams   *dynamodbstreams.Client
	StreamArn string
	Handler   Handler
	Name      string        // for the logs, e.g. "agent stream"
	Interval  time.Duration // between empty reads; default 200ms
	// MaxBatch bounds the records of one batch [DefaultMaxBatch]: a backlog
	// is read up to it before it is handed over, and a read that returns
	// more is handed over in batches of it, in order.
	MaxBatch int
	// Lanes is how many batches of one shard are handled side by side, as
	// Lambda's ParallelizationFactor [1]: the records of one item go to one
	// lane, in order, and the shard is read on while the lanes handle what
	// was read (lanes.go). The Handler is then called from Lanes
	// goroutines at once, each with batches of its own items.
	Lanes int
	Log   *slog.Logger
	// Ready, if set, is closed once the shards are positioned: changes made
	// afterwards are delivered.
	Ready chan<- struct{}
	// Usage, if set, counts the stream's calls ("GetRecords agent stream"):
	// requests, and per read the records as items and their keys and
	// images as bytes, what a handler is handed to decide on.
	Usage *usage.Meter
}

// Run polls until ctx ends. It starts at the stream's latest position.
func (p Poller) Run(ctx context.Context) error {
	iters := map[string]*string{} // shard id -> iterator
	positioned := false           // the first discovery is done: later shards are read whole
	interval := p.interval()
	var ls *lanes
	if p.Lanes > 1 {
		ls = p.startLanes(ctx)
		defer ls.stop()
	}
	for ctx.Err() == nil {
		if err := p.discover(ctx, iters, positioned); err != nil {
			if ctx.Err() != nil {
				return nil // stopped, not a failure
			}
			p.log().Warn(p.Name+": describe", "error", err.Error())
		} else {
			positioned = true
			if p.Ready != nil {
				close(p.Ready)
				p.Ready = nil
			}
		}
		busy := false
		for shard, it := range iters {
			if it == nil {
				continue
			}
			next, n, err := p.poll(ctx, it, ls)
			if err != nil && ctx.Err() != nil {
				return nil // stopped: the batch is read again by whoever polls next
			}
			if lostPosition(err) {
				// The iterator points before what the shard still holds (DynamoDB
				// Local trims an idle shard's old position) or expired: start the
				// shard again from its oldest record. Handling is idempotent, so a
				// change read twice does no harm; one skipped would.
				if fresh, ierr := p.iterator(ctx, shard, stypes.ShardIteratorTypeTrimHorizon); ierr == nil {
					iters[shard], busy = fresh, true
					continue
				}
			}
			if err != nil {
				p.log().Warn(p.Name+": batch failed, retrying", "shard", shard, "error", err.Error())
				continue
			}
			iters[shard] = next
			busy = busy || n > 0
		}
		if !busy {
			select {
			case <-ctx.Done():
			case <-time.After(interval):
			}
		}
	}
	return nil
}

// discover adds shards that have no iterator yet: at their latest position
// on the first discovery, whole afterwards. A table's stream may have no
// shard until its first write (DynamoDB Local), and the records of a shard
// that appears later must not be skipped.
func (p Poller) discover(ctx context.Context, iters map[string]*string, positioned bool) error {
	out, err := p.Streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(p.StreamArn)})
	p.count("DescribeStream", usage.Counts{Requests: 1, EmptyReads: 1})
	if err != nil {
		return err
	}
	for _, sh := range out.StreamDescription.Shards {
		id := aws.ToString(sh.ShardId)
		if _, known := iters[id]; known {
			continue
		}
		pos := stypes.ShardIteratorTypeLatest
		if positioned {
			pos = stypes.ShardIteratorTypeTrimHorizon // a shard that appeared while we ran: read it whole
		}
		it, err := p.iterator(ctx, id, pos)
		if err != nil {
			return err
		}
		iters[id] = it
	}
	return nil
}

func (p Poller) iterator(ctx context.Context, shard string, pos stypes.ShardIteratorType) (*string, error) {
	it, err := p.Streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(p.StreamArn), ShardId: aws.String(shard), ShardIteratorType: pos})
	p.count("GetShardIterator", usage.Counts{Requests: 1, EmptyReads: 1})
	if err != nil {
		return nil, err
	}
	return it.ShardIterator, nil
}

// lostPosition reports whether a read failed because its iterator no longer
// points into the shard.
func lostPosition(err error) bool {
	var trimmed *stypes.TrimmedDataAccessException
	var expired *stypes.ExpiredIteratorException
	return errors.As(err, &trimmed) || errors.As(err, &expired)
}

// readLimit is the most records of one GetRecords call, DynamoDB's maximum.
const readLimit = 1000

// DefaultMaxBatch is the records a Poller hands over at most in one batch:
// the batch size of the cloud's agent-event mapping (infra/events.go). Each
// batch of the agents' stream is one evaluation per rollout that reads the
// rollout item and the batch's own targets and takes its agents from the
// records' images (enginetask.Evaluator.EvaluateAgents), so an evaluation's
// fixed cost is shared by up to 500 records: in batches of 100 a wave's reports
// queued behind one evaluation per 100 of them, each a few requests that wait
// behind the wave's writes on DynamoDB Local (report decided p50 2.2 s
// against 1.8 s in batches of 500, docs/scale.md).
const DefaultMaxBatch = 500

// poll reads what the shard holds, until it has a batch or has caught up,
// and hands it over in batches of at most MaxBatch. Each read asks for as many
// records as a read returns: a read of a busy stream waits its turn on the
// store, so a backlog is read in as few reads as the stream allows (a wave's
// 1,000 desired-hash records, read 100 at a time, held back the reports
// behind them by seconds). On a failure the iterator stays, so the same
// records are read again, the batches before the failed one too (handling
// is idempotent).
func (p Poller) poll(ctx context.Context, it *string, ls *lanes) (*string, int, error) {
	maxBatch := p.MaxBatch
	if maxBatch <= 0 {
		maxBatch = DefaultMaxBatch
	}
	var recs []Record
	next := it
	for next != nil && len(recs) < maxBatch {
		out, err := p.Streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: next, Limit: aws.Int32(int32(readLimit))})
		read := usage.Counts{Requests: 1}
		if err != nil {
			read.EmptyReads = 1
			p.count("GetRecords", read)
			if len(recs) == 0 {
				return it, 0, err
			}
			break // hand over what was read; the rest is read again from next
		}
		for _, r := range out.Records {
			oldImg, err := attributevalue.FromDynamoDBStreamsMap(r.Dynamodb.OldImage)
			if err != nil {
				return it, 0, fmt.Errorf("old image: %w", err)
			}
			newImg, err := attributevalue.FromDynamoDBStreamsMap(r.Dynamodb.NewImage)
			if err != nil {
				return it, 0, fmt.Errorf("new image: %w", err)
			}
			keys, err := attributevalue.FromDynamoDBStreamsMap(r.Dynamodb.Keys)
			if err != nil {
				return it, 0, fmt.Errorf("keys: %w", err)
			}
			recs = append(recs, Record{EventName: string(r.EventName), SequenceNumber: aws.ToString(r.Dynamodb.SequenceNumber),
				Keys: keys, Old: nonEmpty(oldImg), New: nonEmpty(newImg)})
			read.ItemsRead++
			read.BytesRead += int64(usage.ItemSize(keys) + usage.ItemSize(oldImg) + usage.ItemSize(newImg))
		}
		if read.ItemsRead == 0 {
			read.EmptyReads = 1
		}
		p.count("GetRecords", read)
		next = out.NextShardIterator
		if len(out.Records) == 0 {
			break // caught up
		}
	}
	if ls != nil {
		if err := ls.dispatch(ctx, recs, maxBatch); err != nil {
			return it, 0, err
		}
		return next, len(recs), nil
	}
	if len(recs) > 0 {
		for i := 0; i < len(recs); i += maxBatch {
			if err := p.Handler(ctx, recs[i:min(i+maxBatch, len(recs))]); err != nil {
				return it, 0, err
			}
		}
	}
	return next, len(recs), nil
}

func (p Poller) count(op string, c usage.Counts) {
	if p.Usage != nil {
		p.Usage.Count(op+" "+p.Name, c)
	}
}

func (p Poller) interval() time.Duration {
	if p.Interval == 0 {
		return 200 * time.Millisecond
	}
	return p.Interval
}

func nonEmpty(m map[string]types.AttributeValue) map[string]types.AttributeValue {
	if len(m) == 0 {
		return nil
	}
	return m
}

func (p Poller) log() *slog.Logger {
	if p.Log == nil {
		return slog.Default()
	}
	return p.Log
}
