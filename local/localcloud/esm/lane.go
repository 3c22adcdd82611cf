package esm

import (
	"context"
	"time"

	"github.com/myriarch/myriarch/local/localcloud/lambdas"
)

// lane delivers the records of a shard's items that hash to it, in order,
// one batch at a time: a failed batch is retried before anything after it,
// so that an item's changes are never delivered out of order.
type lane struct {
	p       *Poller
	in      chan []record
	pending []record
	done    chan struct{}
}

// laneDepth is the reads a lane holds before the reader waits for it.
const laneDepth = 4

// maxPayload is the largest event a batch makes: Lambda's 6 MB
// synchronous request.
const maxPayload = 6 * 1024 * 1024

func (p *Poller) startLanes(ctx context.Context) []*lane {
	lanes := make([]*lane, p.Parallelization)
	for i := range lanes {
		l := &lane{p: p, in: make(chan []record, laneDepth), done: make(chan struct{})}
		go l.run(ctx)
		lanes[i] = l
	}
	return lanes
}

func (l *lane) send(ctx context.Context, recs []record) bool {
	select {
	case l.in <- recs:
		return true
	case <-ctx.Done():
		return false
	}
}

func (l *lane) closeInput() { close(l.in) }
func (l *lane) wait()       { <-l.done }

func (l *lane) run(ctx context.Context) {
	defer close(l.done)
	for {
		b, ok := l.next(ctx)
		if !ok {
			return
		}
		l.deliver(ctx, b)
	}
}

// next gathers the next batch: it waits for a record, then takes what
// arrives until the batch is full or, with a batching window, the window
// since the first record has passed. Without a window the batch is what
// is there already.
func (l *lane) next(ctx context.Context) (batch, bool) {
	in := l.in
	if len(l.pending) == 0 {
		select {
		case recs, ok := <-in:
			if !ok {
				return batch{}, false
			}
			l.pending = recs
		case <-ctx.Done():
			return batch{}, false
		}
	}
	var window <-chan time.Time
	if l.p.BatchingWindow > 0 {
		window = time.After(l.p.BatchingWindow)
	}
	for in != nil && len(l.pending) < l.p.BatchSize {
		if window == nil {
			select {
			case recs, ok := <-in:
				if !ok {
					in = nil
				}
				l.pending = append(l.pending, recs...)
				continue
			default:
			}
			break
		}
		select {
		case recs, ok := <-in:
			if !ok {
				in = nil
			}
			l.pending = append(l.pending, recs...)
			continue
		case <-window:
		case <-ctx.Done():
			return batch{}, false
		}
		break
	}
	n := batchLength(l.pending, l.p.BatchSize)
	b := batch{records: l.pending[:n:n]}
	l.pending = l.pending[n:]
	return b, true
}

// batchLength is how many of the records make the next batch: at most
// size, and no more than fit Lambda's payload (at least one).
func batchLength(recs []record, size int) int {
	n, bytes := 0, len(`{"Records":[]}`)
	for n < len(recs) && n < size {
		bytes += len(recs[n].json) + 1
		if n > 0 && bytes > maxPayload {
			break
		}
		n++
	}
	return n
}

// deliver invokes the function with a batch until it is delivered or
// given up, with what the batch becomes after each failure (split, cut
// from the first failed record, or expired).
func (l *lane) deliver(ctx context.Context, first batch) {
	p := l.p
	queue := []batch{first}
	failures := 0
	for len(queue) > 0 && ctx.Err() == nil {
		b, expired := p.expire(queue[0], p.Now())
		queue = queue[1:]
		if expired != nil {
			p.fail(*expired, recordTooOld, "", nil)
		}
		if len(b.records) == 0 {
			continue
		}
		b.invokes++
		res, err := p.Invoke(ctx, p.FunctionARN, eventJSON(b.records))
		if ctx.Err() != nil {
			return
		}
		how, failedAt := p.judge(res, err, b.records)
		next, failed := p.after(b, how, failedAt)
		if failed != nil {
			p.fail(*failed, retriesExhausted, res.RequestID, &res)
		}
		if how != delivered {
			failures++
			p.Log.Warn("stream batch failed", "mapping", p.LogicalID, "records", len(b.records), "retries", b.retries,
				"errorType", res.ErrorType, "error", err)
			if len(next) == 1 { // the same records again (a split is tried at once)
				select {
				case <-time.After(p.Backoff(failures)):
				case <-ctx.Done():
				}
			}
		}
		queue = append(next, queue...)
	}
}

// judge reads an invocation's outcome.
func (p *Poller) judge(res lambdas.Result, err error, recs []record) (result, int) {
	switch {
	case err != nil:
		return invokeFailed, 0
	case res.Failed():
		return functionError, 0
	case !p.ReportBatchItemFailures:
		return delivered, 0
	}
	at, partial, complete := firstFailed(res.Payload, recs)
	switch {
	case complete:
		return functionError, 0
	case partial:
		return partialFailure, at
	}
	return delivered, 0
}

// fail hands a given-up batch to the on-failure destination.
func (p *Poller) fail(b batch, condition, requestID string, last *lambdas.Result) {
	p.Log.Error("stream batch given up", "mapping", p.LogicalID, "condition", condition, "records", len(b.records),
		"firstSequenceNumber", b.records[0].seq, "destination", p.OnFailure)
	if p.Failures != nil {
		p.Failures(p.LogicalID, p.describeFailure(b, condition, requestID, last, p.Now()))
	}
}
