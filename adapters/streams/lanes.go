package streams

import (
	"context"
	"hash/fnv"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// lanes hands a shard's records to Lanes handlers that run side by side,
// the way Lambda's ParallelizationFactor does: the records of one item
// always go to the same lane, in order, and the reader goes on reading
// while the lanes handle what it read. A lane retries a batch that failed
// until it is handled (or the poller stops), and holds back the batches
// after it; a reader whose lane is full waits for it.
type lanes struct {
	p       Poller
	queue   []chan []Record
	running sync.WaitGroup
}

// laneDepth is the batches a lane holds before the reader waits for it.
const laneDepth = 2

func (p Poller) startLanes(ctx context.Context) *lanes {
	l := &lanes{p: p}
	for range p.Lanes {
		q := make(chan []Record, laneDepth)
		l.queue = append(l.queue, q)
		l.running.Go(func() {
			for batch := range q {
				l.handle(ctx, batch)
			}
		})
	}
	return l
}

// handle runs the handler on one batch until it succeeds or ctx ends.
func (l *lanes) handle(ctx context.Context, batch []Record) {
	for ctx.Err() == nil {
		err := l.p.Handler(ctx, batch)
		if err == nil || ctx.Err() != nil {
			return
		}
		l.p.log().Warn(l.p.Name+": batch failed, retrying", "records", len(batch), "error", err.Error())
		select {
		case <-ctx.Done():
		case <-time.After(l.p.interval()):
		}
	}
}

// dispatch splits what one read returned by item into the lanes, in
// order, in batches of at most MaxBatch each. It waits while a lane is full.
func (l *lanes) dispatch(ctx context.Context, recs []Record, maxBatch int) error {
	split := make([][]Record, len(l.queue))
	for _, r := range recs {
		i := lane(r.Keys, len(l.queue))
		split[i] = append(split[i], r)
	}
	for i, rs := range split {
		for chunk := range slices.Chunk(rs, maxBatch) {
			select {
			case l.queue[i] <- chunk:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}

// stop lets the lanes finish what they hold and waits for them.
func (l *lanes) stop() {
	for _, q := range l.queue {
		close(q)
	}
	l.running.Wait()
}

// lane is the lane of an item's records: a hash of its key.
func lane(keys map[string]types.AttributeValue, n int) int {
	h := fnv.New32a()
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		_, _ = h.Write([]byte(k))
		switch v := keys[k].(type) {
		case *types.AttributeValueMemberS:
			_, _ = h.Write([]byte(v.Value))
		case *types.AttributeValueMemberN:
			_, _ = h.Write([]byte(v.Value))
		case *types.AttributeValueMemberB:
			_, _ = h.Write(v.Value)
		}
		_, _ = h.Write([]byte{0})
	}
	return int(h.Sum32() % uint32(n))
}
