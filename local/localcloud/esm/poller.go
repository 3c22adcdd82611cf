package esm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/myriarch/myriarch/local/localcloud/lambdas"
)

// Streams is the part of the DynamoDB Streams API a Poller reads with
// (*dynamodbstreams.Client).
type Streams interface {
	DescribeStream(context.Context, *dynamodbstreams.DescribeStreamInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error)
	GetShardIterator(context.Context, *dynamodbstreams.GetShardIteratorInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error)
	GetRecords(context.Context, *dynamodbstreams.GetRecordsInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error)
}

var _ Streams = (*dynamodbstreams.Client)(nil)

// Poller runs one mapping. Run may be called once.
type Poller struct {
	Mapping
	// Streams reads the stream, with the function role's credentials
	// (through the IAM proxy), as Lambda reads it with the role's.
	Streams Streams
	// Invoke runs the function synchronously (lambdas.Runtime.Invoke).
	Invoke func(ctx context.Context, functionARN string, payload []byte) (lambdas.Result, error)
	// Failures receives the on-failure message of each batch given up
	// (what Lambda sends to the OnFailure destination); nil drops it.
	Failures func(mappingLogicalID string, rec json.RawMessage)
	Log      *slog.Logger
	Now      func() time.Time // records' ages; default time.Now
	// ReadARN is the stream's ARN where it is read (DynamoDB Local's) when
	// it differs from the template's StreamARN, which the records carry.
	ReadARN string
	// Interval is the wait after a read of every shard found nothing new;
	// default 250 ms (Lambda reads a DynamoDB stream's shards four times a
	// second).
	Interval time.Duration
	// Backoff is the wait before retry n (1, 2, ...) of a failed batch;
	// default 100 ms doubling up to 5 s.
	Backoff func(n int) time.Duration
	// Ready, if set, is closed once the shards are positioned: changes
	// made afterwards are delivered (StartingPosition LATEST).
	Ready chan<- struct{}

	filter filter
	region string
}

// Run polls until ctx ends.
func (p *Poller) Run(ctx context.Context) error {
	if err := p.init(); err != nil {
		return err
	}
	s := &shards{byID: map[string]*shard{}}
	defer s.stop()
	positioned := false
	for ctx.Err() == nil {
		if err := p.discover(ctx, s, positioned); err != nil {
			if ctx.Err() == nil {
				p.Log.Warn("describe stream", "mapping", p.LogicalID, "error", err)
			}
		} else if !positioned {
			positioned = true
			if p.Ready != nil {
				close(p.Ready)
			}
		}
		busy := false
		for _, sh := range s.readable() {
			n := p.read(ctx, sh)
			busy = busy || n > 0
		}
		if !busy {
			select {
			case <-ctx.Done():
			case <-time.After(p.Interval):
			}
		}
	}
	return nil
}

func (p *Poller) init() error {
	f, err := compileFilters(p.Filters)
	if err != nil {
		return fmt.Errorf("esm %s: %w", p.LogicalID, err)
	}
	if p.Invoke == nil || p.Streams == nil {
		return fmt.Errorf("esm %s: a Poller needs Streams and Invoke", p.LogicalID)
	}
	p.filter = f
	arn := strings.Split(p.StreamARN, ":")
	if len(arn) < 6 || arn[2] != "dynamodb" {
		return fmt.Errorf("esm %s: StreamARN %q is not a DynamoDB stream's ARN", p.LogicalID, p.StreamARN)
	}
	p.region = arn[3]
	if p.ReadARN == "" {
		p.ReadARN = p.StreamARN
	}
	if p.Log == nil {
		p.Log = slog.Default()
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	if p.Interval <= 0 {
		p.Interval = 250 * time.Millisecond
	}
	if p.Backoff == nil {
		p.Backoff = func(n int) time.Duration { return min(100*time.Millisecond<<min(n-1, 6), 5*time.Second) }
	}
	if p.Parallelization < 1 {
		p.Parallelization = 1
	}
	if p.BatchSize < 1 {
		p.BatchSize = defaultBatchSize
	}
	return nil
}

// discover positions the shards not seen yet: at StartingPosition on the
// first discovery, at their start afterwards (a shard that appears while
// the mapping runs is read whole).
func (p *Poller) discover(ctx context.Context, s *shards, positioned bool) error {
	in := &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(p.ReadARN)}
	for {
		out, err := p.Streams.DescribeStream(ctx, in)
		if err != nil {
			return err
		}
		for _, d := range out.StreamDescription.Shards {
			id := aws.ToString(d.ShardId)
			if s.byID[id] != nil {
				continue
			}
			pos := stypes.ShardIteratorTypeTrimHorizon
			if !positioned && p.StartingPosition == "LATEST" {
				pos = stypes.ShardIteratorTypeLatest
			}
			it, err := p.iterator(ctx, id, pos, "")
			if err != nil {
				return err
			}
			s.add(&shard{id: id, parent: aws.ToString(d.ParentShardId), iter: it}, p.startLanes(ctx))
		}
		if out.StreamDescription.LastEvaluatedShardId == nil {
			return nil
		}
		in.ExclusiveStartShardId = out.StreamDescription.LastEvaluatedShardId
	}
}

func (p *Poller) iterator(ctx context.Context, shard string, pos stypes.ShardIteratorType, after string) (*string, error) {
	in := &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(p.ReadARN), ShardId: aws.String(shard), ShardIteratorType: pos}
	if after != "" {
		in.SequenceNumber = aws.String(after)
	}
	out, err := p.Streams.GetShardIterator(ctx, in)
	if err != nil {
		return nil, err
	}
	return out.ShardIterator, nil
}

// read reads a shard once and hands the records that pass the filters to
// its lanes; it returns how many records it read.
func (p *Poller) read(ctx context.Context, sh *shard) int {
	out, err := p.Streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: sh.iter, Limit: aws.Int32(1000)})
	if lostPosition(err) {
		p.reposition(ctx, sh)
		return 0
	}
	if err != nil {
		if ctx.Err() == nil {
			p.Log.Warn("read stream", "mapping", p.LogicalID, "shard", sh.id, "error", err)
		}
		return 0
	}
	byLane := make([][]record, len(sh.lanes))
	for _, r := range out.Records {
		rec, err := toLambda(r, p.StreamARN, p.region, sh.id)
		if err != nil {
			p.Log.Error("stream record dropped", "mapping", p.LogicalID, "error", err)
			continue
		}
		sh.lastSeq = rec.seq
		if !p.filter.passes(rec.json) {
			continue // filtered out: dropped, as Lambda drops it
		}
		i := rec.keyHash % uint32(len(sh.lanes))
		byLane[i] = append(byLane[i], rec)
	}
	for i, recs := range byLane {
		if len(recs) > 0 && !sh.lanes[i].send(ctx, recs) {
			return 0
		}
	}
	sh.iter = out.NextShardIterator
	if sh.iter == nil {
		sh.close() // the shard ended: its children may be read once its lanes are done
	}
	return len(out.Records)
}

// reposition starts a shard again after the last record read, or at its
// start when that is gone too (DynamoDB Local trims an idle shard's old
// position, and iterators expire).
func (p *Poller) reposition(ctx context.Context, sh *shard) {
	if sh.lastSeq != "" {
		if it, err := p.iterator(ctx, sh.id, stypes.ShardIteratorTypeAfterSequenceNumber, sh.lastSeq); err == nil {
			sh.iter = it
			return
		}
	}
	if it, err := p.iterator(ctx, sh.id, stypes.ShardIteratorTypeTrimHorizon, ""); err == nil {
		sh.iter = it
	}
}

func lostPosition(err error) bool {
	var trimmed *stypes.TrimmedDataAccessException
	var expired *stypes.ExpiredIteratorException
	return errors.As(err, &trimmed) || errors.As(err, &expired)
}
