package gateway

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/myriarch/myriarch/core/agent"
)

// The bounded writer. Every agent read and write of the gateway takes one
// of StoreConcurrency slots, so that a connect storm queues up in the task
// instead of piling requests onto a throttled table. Each session has at
// most one writer goroutine, which stores the session's latest view (so a
// burst of changes costs one write when the store is slow) and retries a
// failed write with backoff until it is stored or the session is given up;
// the OpAMP callback whose message queued the write waits for it up to
// WriteWait, which slows the agents' messages down to what the store takes.
//
// A change that no decision waits for (deferrable: an APPLYING status, the
// effective configuration's hash, health staying healthy or in start-up) is
// written up to LazyWrite later, together with whatever the agent reports
// meanwhile, and its message does not wait: in a wave the APPLYING report
// and the effective configuration ride on the APPLIED write, which is not
// held up behind them. Any other change, or a drain, writes at once.

// errPanicked is a store call that panicked: its session stops writing.
var errPanicked = errors.New("store call panicked")

// errBusy is a read that found no slot in time: backpressure, not a fault.
var errBusy = errors.New("store busy")

// queueLocked notes a change of s.view to store and starts the session's
// writer unless one runs; urgent wakes a writer that waits out LazyWrite.
// Under s.mu.
func (g *Gateway) queueLocked(s *session, urgent bool) {
	s.gen++
	if urgent {
		s.urgent = true
		if s.hurry != nil {
			close(s.hurry)
			s.hurry = nil
		}
	}
	if s.writing || s.abandoned {
		return
	}
	s.writing, s.idle = true, make(chan struct{})
	g.writes.add()
	go g.writeLoop(s)
}

func (g *Gateway) writeLoop(s *session) {
	defer g.writes.done()
	for failures := 0; ; {
		s.mu.Lock()
		if s.storedGen == s.gen || s.abandoned {
			s.writing = false
			close(s.idle)
			s.mu.Unlock()
			return
		}
		if !s.urgent && g.cfg.LazyWrite > 0 {
			g.waitLazy(s) // releases s.mu meanwhile
		}
		a, version, gen, urgent := s.view, s.stored, s.gen, s.urgent
		s.urgent = false
		s.mu.Unlock()

		s.writeMu.Lock()
		next, err := g.storeAgent(a, version)
		s.writeMu.Unlock()
		s.mu.Lock()
		switch {
		case err == nil:
			s.stored, s.storedGen, failures = next, max(s.storedGen, gen), 0
		case errors.Is(err, errPanicked), g.ended.Load():
			s.abandoned = true // the lease is ended: what is left is judged by its end
		default:
			s.urgent = s.urgent || urgent // the retry is as urgent as the write
		}
		s.mu.Unlock()
		if err != nil && !s.isAbandoned() {
			failures++
			if failures%10 == 5 { // about a second of trying
				g.log.Warn("store agent: retrying", "agent", s.id, "attempts", failures, "error", err)
			} else {
				g.log.Debug("store agent: retrying", "agent", s.id, "attempts", failures, "error", err)
			}
			<-g.cfg.After(backoff(failures))
		}
	}
}

// waitLazy waits, with s.mu released, until LazyWrite passed, an urgent
// change came (hurry) or the task drains; then the pending change counts as
// urgent. Under s.mu.
func (g *Gateway) waitLazy(s *session) {
	hurry := make(chan struct{})
	s.hurry = hurry
	s.mu.Unlock()
	select {
	case <-hurry:
	case <-g.cfg.After(g.cfg.LazyWrite):
	case <-g.flush:
	}
	s.mu.Lock()
	if s.hurry == hurry {
		s.hurry = nil
	}
	s.urgent = true
}

func (s *session) isAbandoned() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.abandoned
}

// storeAgent is one write of a view: a connection or a change while it is
// online, the disconnect once it is not.
func (g *Gateway) storeAgent(a agent.Agent, version any) (next any, err error) {
	if g.saves != nil && a.Online {
		return g.saveQueued(a, version)
	}
	release := g.slot()
	defer release()
	defer func() {
		if r := recover(); r != nil {
			g.log.Error("recovered from a panic", "callback", "store agent", "panic", fmt.Sprint(r))
			next, err = version, errPanicked
		}
	}()
	ctx, cancel := g.storeCtx(context.Background())
	defer cancel()
	if a.Online {
		return g.agents.SaveAgent(ctx, a, version)
	}
	return g.agents.DisconnectAgent(ctx, a, version)
}

// slot waits for a slot of the bounded writer and returns its release.
func (g *Gateway) slot() func() {
	g.slots <- struct{}{}
	return func() { <-g.slots }
}

// load reads the agent of a new session through the bounded writer,
// retrying a failed read with backoff within StoreTimeout; an error after
// that is answered UNAVAILABLE and the agent's next message tries again.
func (g *Gateway) load(ctx context.Context, id string) (a agent.Agent, found bool, version any, err error) {
	deadline := g.cfg.After(g.cfg.StoreTimeout)
	for attempt := 1; ; attempt++ {
		select {
		case g.slots <- struct{}{}:
		case <-deadline:
			return a, false, nil, fmt.Errorf("%w: no slot within %v", errBusy, g.cfg.StoreTimeout)
		}
		sctx, cancel := g.storeCtx(ctx)
		a, found, version, err = g.agents.LoadAgent(sctx, id)
		cancel()
		<-g.slots
		if err == nil {
			return a, found, version, nil
		}
		select {
		case <-g.cfg.After(backoff(attempt)):
		case <-deadline:
			return a, false, nil, err
		}
	}
}

// await waits for the session's writer to finish, up to WriteWait.
func (g *Gateway) await(s *session) {
	s.mu.Lock()
	writing, idle := s.writing, s.idle
	s.mu.Unlock()
	if !writing {
		return
	}
	select {
	case <-idle:
	case <-g.cfg.After(g.cfg.WriteWait):
	}
}

// backoff is the wait before attempt n+1: 50 ms doubling up to 5 s.
func backoff(n int) time.Duration {
	d := 50 * time.Millisecond
	for i := 1; i < n && d < 5*time.Second; i++ {
		d *= 2
	}
	return min(d, 5*time.Second)
}
