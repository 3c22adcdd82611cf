package predict

import (
	"slices"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/rollout"
)

// A pass costs time in proportion to the targets it gets: the engine looks
// at every target that has not started, whether or not maxConcurrent lets
// it start. With maxConcurrent M > 0 a pass starts at most M targets, the
// first of those that may start in the order of the targets, so the run
// gives each pass only the targets that can matter to it (a feed), and the
// pass decides exactly as it would over all of them:
//
//   - every target in flight (in progress or verifying): they finish, and
//     they count toward maxConcurrent;
//   - every target yet to start whose agent is offline, gone, or of another
//     fleet: the engine skips them when it reaches them, whatever the
//     concurrency;
//   - of the other targets yet to start, in each group of those that either
//     all may start or none (one wave, stage, pass and batch, one time zone
//     for the maintenance windows) the first M: the targets a pass starts
//     are the first that may start, at most M, so they are among these; and
//     every batch, stage and wave that has a target yet to start shows one,
//     so none of them looks finished before it is.
//
// Targets that finished are left out: only the failure threshold counts
// them, and it cannot be reached without a failure. So the feed serves
// only while no target failed; the first pass that fails one is evaluated
// again over every target, and so is every pass after it (as is every pass
// of a rollout with failed targets, with freezes, whose stages the engine
// judges by their agents' regions, or without maxConcurrent).
type feed struct {
	on      bool
	limit   int     // maxConcurrent
	special []int   // targets yet to start that the engine may skip
	groups  [][]int // targets yet to start, by group, in order
	cursor  []int   // per group: the targets before it have started
	flying  []int   // targets in flight (some may have finished since)
	idx     []int   // the targets of the last feed
	buf     []rollout.Target
}

// newFeed plans the feed of a run over ts; off when it cannot serve.
func newFeed(r rollout.Rollout, ts []rollout.Target, agents map[string]agent.Agent, tz string) *feed {
	f := &feed{limit: r.Policy.MaxConcurrent}
	if f.limit <= 0 || len(r.Policy.Freezes) > 0 {
		return f
	}
	zones := r.Policy.Zones(tz)
	type key struct {
		wave, stage, pass, batch int
		zone                     string
	}
	at := map[key]int{}
	for i, t := range ts {
		switch {
		case t.Status == rollout.TargetFailed:
			return &feed{}
		case t.Status == rollout.TargetInProgress || t.Status == rollout.TargetVerifying:
			f.flying = append(f.flying, i)
		case t.Status.NotStarted():
			a, ok := agents[t.AgentID]
			if !ok || !a.Online || a.Fleet != r.Fleet {
				f.special = append(f.special, i)
				continue
			}
			k := key{wave: t.Wave, stage: t.Stage, pass: t.Pass, batch: t.Batch}
			if len(r.Policy.MaintenanceWindows) > 0 {
				k.zone = zones.Resolve(a).String()
			}
			g, ok := at[k]
			if !ok {
				g = len(f.groups)
				at[k] = g
				f.groups = append(f.groups, nil)
			}
			f.groups[g] = append(f.groups[g], i)
		}
	}
	f.cursor = make([]int, len(f.groups))
	f.on = true
	return f
}

// targets is the feed of the next pass over ts, in the order of ts.
func (f *feed) targets(ts []rollout.Target) []rollout.Target {
	f.idx = f.idx[:0]
	flying := f.flying[:0]
	for _, i := range f.flying {
		if s := ts[i].Status; s == rollout.TargetInProgress || s == rollout.TargetVerifying {
			flying = append(flying, i)
		}
	}
	f.flying = flying
	f.idx = append(f.idx, flying...)
	for _, i := range f.special {
		if ts[i].Status.NotStarted() {
			f.idx = append(f.idx, i)
		}
	}
	for g, members := range f.groups {
		c := f.cursor[g]
		for c < len(members) && !ts[members[c]].Status.NotStarted() {
			c++
		}
		f.cursor[g] = c
		for n := 0; c < len(members) && n < f.limit; c++ {
			if ts[members[c]].Status.NotStarted() {
				f.idx = append(f.idx, members[c])
				n++
			}
		}
	}
	slices.Sort(f.idx)
	// One buffer serves every pass: the engine copies its input.
	f.buf = f.buf[:0]
	for _, i := range f.idx {
		f.buf = append(f.buf, ts[i])
	}
	return f.buf
}

// started records that target i is in flight.
func (f *feed) started(i int) { f.flying = append(f.flying, i) }
