package gateway

import (
	"context"
	"errors"
	"time"

	"github.com/myriarch/myriarch/core/rollout"
)

// RenewEvery is how often the lease is renewed: a third of the liveness
// timeout, so that two renewals may fail before readers take the task's
// agents offline.
func (g *Gateway) RenewEvery() time.Duration { return max(g.timeout/3, time.Millisecond) }

// RenewLease writes this task's lease, alive until now + the liveness
// timeout. A failure is logged: the lease lives on until it runs out, and
// the next renewal tries again. Nothing is renewed once the lease ended.
func (g *Gateway) RenewLease(ctx context.Context) {
	if g.ended.Load() || g.draining.Load() {
		return
	}
	sctx, cancel := g.storeCtx(ctx)
	defer cancel()
	err := g.agents.RenewLease(sctx, g.cfg.Task, g.started, g.now().Add(g.timeout))
	switch {
	case err == nil:
	case errors.Is(err, rollout.ErrConflict) && (g.ended.Load() || g.draining.Load()):
		// The drain ended the lease while this renewal was on its way,
		// and the store kept it ended: as it should, nothing to report.
	default:
		g.log.Error("renew gateway lease", "task", g.cfg.Task, "error", err)
	}
}

// endLease writes the lease ended now: the agents this task still names
// count as disconnected from now (with the reconnect grace). Called by Drain
// once its connections are closed and their writes are done.
func (g *Gateway) endLease() {
	g.ended.Store(true)
	ctx, cancel := g.storeCtx(context.Background())
	defer cancel()
	if err := g.agents.EndLease(ctx, g.cfg.Task, g.started, g.now()); err != nil {
		g.log.Error("end gateway lease", "task", g.cfg.Task, "error", err)
	}
}

// waitWrites waits for the queued writes until ctx ends.
func (g *Gateway) waitWrites(ctx context.Context) {
	select {
	case <-g.writes.idle():
	case <-ctx.Done():
	}
}
