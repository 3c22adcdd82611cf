package enginetask_test

import (
	"context"
	"testing"
	"time"

	"github.com/myriarch/myriarch/local/storetest"
)

// TestEvaluate_LargeRollout_Counts bounds what the evaluation of
// BenchmarkEvaluate_100kTargets asks of DynamoDB and allocates, at a size
// the suite affords (2,000 targets, 200 started): counts, not times, so
// that a change that reads a page more per target, reads an agent twice or
// decodes or copies every target once more fails on any machine.
//
// The requests are one for the rollout, a query per 1,000 targets (and one
// more when the last page is full: DynamoDB cannot tell it was the last),
// a batch read per 100 agents, then per 100 started targets a transaction
// of their agents' desired hashes, written on the versions the evaluation
// read (SetDesiredHashOver; before, each 100 cost a consistent batch read
// more), and the evaluation's save in transactions of up to 99 targets.
// The items read are the rollout, every target and every agent, each
// once. The allocations were measured at 145 a target and 18.5 KB a target
// (of which the AWS SDK's decoding is most); the bounds are 1.5 times that.
func TestEvaluate_LargeRollout_Counts(t *testing.T) {
	const n, start = 2000, 200
	storetest.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	st := storetest.New(t)
	l := newLargeRollout(t, n, start)
	l.seed(t, ctx, st)
	id, now := l.r.ID, l.now
	l = largeRollout{}
	f := measureEvaluation(t, ctx, st, id, now)
	wantStarted(t, ctx, st, id, start)
	t.Logf("%d targets: %v; %d allocations (%.0f a target), %.1f MB allocated (%.1f KB a target), peak heap %.1f MB",
		n, f.usage, f.allocs, float64(f.allocs)/n, float64(f.allocBytes)/(1<<20), float64(f.allocBytes)/n/1024, float64(f.peakHeap)/(1<<20))

	requests := 1 + (n/1000 + 1) + ceilDiv(n, 100) + ceilDiv(start, 100) + ceilDiv(start, 99)
	itemsRead := 1 + n + n
	if u := f.usage; u.Requests > int64(requests) || u.ItemsRead > int64(itemsRead) {
		t.Errorf("the evaluation of %d targets: %d requests reading %d items, want at most %d and %d", n, u.Requests, u.ItemsRead, requests, itemsRead)
	}
	const allocsPerTarget, bytesPerTarget = 218, 28 << 10
	if f.allocs > allocsPerTarget*n || f.allocBytes > bytesPerTarget*n {
		t.Errorf("the evaluation of %d targets made %d allocations of %d bytes in all, want at most %d a target and %d bytes a target",
			n, f.allocs, f.allocBytes, allocsPerTarget, bytesPerTarget)
	}
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
