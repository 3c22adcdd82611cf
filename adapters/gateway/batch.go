package gateway

import (
	"context"
	"fmt"

	"github.com/myriarch/myriarch/core/agent"
)

// The batch writers. With a BatchSaver store, batchWriters goroutines take
// the sessions' online writes: each takes one write, then whatever
// other writes wait at that moment (up to maxBatch), and stores them in one
// call. An idle task writes one agent per call, as before; a task whose
// writers are all busy (a wave's reports, a connect storm) writes the queue
// in batches, which DynamoDB takes in transactions.

// maxBatch is the most writes of one call (a transaction holds 100): with
// batchWriters, what a connect storm holds in flight in encoded requests
// (100 × 8 raised the gateway's RSS after a storm of 10,000 agents from
// 24.3 to 26.0 KB per agent).
const maxBatch = 50

// batchWriters is how many batch writers run (at most StoreConcurrency):
// enough to keep writes of single agents flowing, few enough that a queue
// forms and goes in batches instead of as many calls in flight, each
// slower the more there are.
const batchWriters = 4

type saveJob struct {
	a    agent.Agent
	v    any
	next any
	err  error
	done chan struct{}
}

func (g *Gateway) startBatchWriters(bs BatchSaver) {
	g.saves = make(chan *saveJob)
	for range min(batchWriters, g.cfg.StoreConcurrency) {
		go func() {
			for j := range g.saves {
				batch := []*saveJob{j}
			more:
				for len(batch) < maxBatch {
					select {
					case j := <-g.saves:
						batch = append(batch, j)
					default:
						break more
					}
				}
				g.saveBatch(bs, batch)
			}
		}()
	}
}

// saveBatch stores a batch in one call on one store slot and hands each
// write its outcome.
func (g *Gateway) saveBatch(bs BatchSaver, batch []*saveJob) {
	release := g.slot()
	defer func() {
		release()
		if r := recover(); r != nil {
			g.log.Error("recovered from a panic", "callback", "store agents", "panic", fmt.Sprint(r))
			for _, j := range batch {
				j.next, j.err = j.v, errPanicked
			}
		}
		for _, j := range batch {
			close(j.done)
		}
	}()
	as, vs := make([]agent.Agent, len(batch)), make([]any, len(batch))
	for i, j := range batch {
		as[i], vs[i] = j.a, j.v
	}
	ctx, cancel := g.storeCtx(context.Background())
	defer cancel()
	next, errs := bs.SaveAgents(ctx, as, vs)
	for i, j := range batch {
		j.next, j.err = next[i], errs[i]
	}
}

// saveQueued hands an online write to the batch writers and waits for it.
func (g *Gateway) saveQueued(a agent.Agent, version any) (any, error) {
	j := &saveJob{a: a, v: version, done: make(chan struct{})}
	g.queuedSaves.Add(1)
	g.saves <- j
	g.queuedSaves.Add(-1)
	<-j.done
	return j.next, j.err
}
