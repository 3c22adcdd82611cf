package store

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/myriarch/myriarch/core/rollout"
)

// A running wave's targets are those of the agents asked for, read by key:
// no other target of the wave is read, and targets of waves that hold
// nothing in flight are not read.
func TestTargetsOf_ReadsTheAgentsOfTheRunningWaves(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	r, ts := newRollout("r1", 9, 3, t0) // a00000 wave 0, a00001 wave 1, a00002 wave 2, ...
	must(t, s.CreateRollout(ctx, r, ts))
	r, _, err := s.LoadRollout(ctx, "r1")
	must(t, err)
	r.Waves[1].Status = rollout.WaveRunning
	s.ResetUsage()
	got, err := s.TargetsOf(ctx, r, []string{"a00000", "a00001", "a00004", "a00004", "nobody"})
	must(t, err)
	ids := map[string]int{}
	for _, tg := range got {
		ids[tg.AgentID] = tg.Wave
		if tg.Version != 1 || tg.RolloutID != "r1" {
			t.Fatalf("target %+v, want version 1 of r1", tg)
		}
	}
	if len(got) != 2 || ids["a00001"] != 1 || ids["a00004"] != 1 {
		t.Fatalf("targets %v, want a00001 and a00004 of wave 1 only", ids)
	}
	if u := s.Usage(); u.Requests != 1 || u.ItemsRead != 2 {
		t.Fatalf("usage %s, want one read by key of the 2 targets asked for", u)
	}
	r.Waves[1].Status = rollout.WaveCompleted
	if got, err := s.TargetsOf(ctx, r, []string{"a00001"}); err != nil || len(got) != 0 {
		t.Fatalf("no wave in flight: %v %v, want nothing read", got, err)
	}
}

// However large the wave, a batch reads its own targets only, 100 keys to
// a request, and finds every agent asked for once.
func TestTargetsOf_ReadsOnlyTheBatchsTargets(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	r, ts := newRollout("r1", 250, 1, t0) // a00000 ... a00249, one wave
	must(t, s.CreateRollout(ctx, r, ts))
	r, _, err := s.LoadRollout(ctx, "r1")
	must(t, err)
	r.Waves[0].Status = rollout.WaveRunning
	for _, c := range []struct {
		ask            []string
		requests, read int64
	}{
		{ask: []string{"a00003", "a00011", "a00245", "a00003", "nobody"}, requests: 1, read: 3},
		{ask: ids(0, 150), requests: 2, read: 150},
	} {
		s.ResetUsage()
		got, err := s.TargetsOf(ctx, r, c.ask)
		must(t, err)
		var found []string
		for _, tg := range got {
			found = append(found, tg.AgentID)
		}
		slices.Sort(found)
		want := slices.DeleteFunc(slices.Compact(slices.Sorted(slices.Values(c.ask))), func(id string) bool { return id == "nobody" })
		if fmt.Sprint(found) != fmt.Sprint(want) {
			t.Fatalf("targets of %v, want %v once each", found, want)
		}
		if u := s.Usage(); u.Requests != c.requests || u.ItemsRead != c.read {
			t.Fatalf("asking %d agents: usage %s, want %d requests reading %d items", len(c.ask), u, c.requests, c.read)
		}
	}
}

func ids(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("a%05d", i))
	}
	return out
}

// SaveTargets stores the changed targets without touching the rollout, and
// refuses (changing nothing of its transaction) when a target or the rollout
// moved since they were read.
func TestSaveTargets_ConditionalOnTargetsAndRollout(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	r, ts := newRollout("r1", 4, 1, t0)
	must(t, s.CreateRollout(ctx, r, ts))
	r, ts, err := s.LoadRollout(ctx, "r1")
	must(t, err)

	a := ts[0]
	a.Status = rollout.TargetInProgress
	must(t, s.SaveTargets(ctx, r, []rollout.Target{a}))
	got, gotTs, err := s.LoadRollout(ctx, "r1")
	must(t, err)
	if got.Version != r.Version || gotTs[0].Status != rollout.TargetInProgress || gotTs[0].Version != 2 {
		t.Fatalf("rollout v%d (want v%d), target %+v (want in_progress v2)", got.Version, r.Version, gotTs[0])
	}

	// a target read before that write: lost race
	stale := ts[0]
	stale.Status = rollout.TargetFailed
	if err := s.SaveTargets(ctx, r, []rollout.Target{stale}); !errors.Is(err, rollout.ErrConflict) {
		t.Fatalf("stale target: %v, want ErrConflict", err)
	}

	// the rollout moved on (a pass of the whole rollout): lost race, and the
	// other target of the transaction is not stored either
	must(t, s.SaveEvaluation(ctx, got, nil))
	b := gotTs[1]
	b.Status = rollout.TargetInProgress
	if err := s.SaveTargets(ctx, got, []rollout.Target{b}); !errors.Is(err, rollout.ErrConflict) {
		t.Fatalf("stale rollout: %v, want ErrConflict", err)
	}
	_, after, err := s.LoadRollout(ctx, "r1")
	must(t, err)
	if after[1].Status != rollout.TargetPending || after[1].Version != 1 {
		t.Fatalf("target b %+v, want untouched", after[1])
	}
}

// More than a transaction holds: every target is stored, in links of 99.
func TestSaveTargets_ManyTargets(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	r, ts := newRollout("r1", 250, 1, t0)
	must(t, s.CreateRollout(ctx, r, ts))
	r, ts, err := s.LoadRollout(ctx, "r1")
	must(t, err)
	for i := range ts {
		ts[i].Status, ts[i].Reason = rollout.TargetVerifying, fmt.Sprint(i)
	}
	s.ResetUsage()
	must(t, s.SaveTargets(ctx, r, ts))
	if u := s.Usage(); u.Requests != 3 {
		t.Fatalf("usage %s, want 3 transactions", u)
	}
	_, after, err := s.LoadRollout(ctx, "r1")
	must(t, err)
	for i, tg := range after {
		if tg.Status != rollout.TargetVerifying || tg.Version != 2 {
			t.Fatalf("target %d: %+v, want verifying v2", i, tg)
		}
	}
}
