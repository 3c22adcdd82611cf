package enginetask_test

import (
	"context"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/rollout"
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
// a batch read per 100 agents the engine asks for, then per 100 started
// targets a transaction of their agents' desired hashes, written on the
// versions the evaluation read (SetDesiredHashOver), and the evaluation's
// save in transactions of up to 99 targets. The items read are the
// rollout, every target, and the agents of the 200 targets it starts, each
// once: nothing is in flight, and the rest wave's other 1,600 targets wait
// behind maxConcurrent without a look at their agents (engine.Input.Read;
// before, every agent was read: 31 requests and 4,201 items). The
// allocations were measured at 55 a target and 8.8 KB a target (64 and
// 9.6 KB before the targets were decoded in place with
// go-json-experiment/json, 145 and 18.5 KB reading every agent); the
// bounds are 1.5 times that.
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

	requests := 1 + (n/1000 + 1) + ceilDiv(start, 100) + ceilDiv(start, 100) + ceilDiv(start, 99)
	itemsRead := 1 + n + start
	if u := f.usage; u.Requests != int64(requests) || u.ItemsRead != int64(itemsRead) {
		t.Errorf("the evaluation of %d targets: %d requests reading %d items, want %d and %d", n, u.Requests, u.ItemsRead, requests, itemsRead)
	}
	const allocsPerTarget, bytesPerTarget = 83, 13500
	if f.allocs > allocsPerTarget*n || f.allocBytes > bytesPerTarget*n {
		t.Errorf("the evaluation of %d targets made %d allocations of %d bytes in all, want at most %d a target and %d bytes a target",
			n, f.allocs, f.allocBytes, allocsPerTarget, bytesPerTarget)
	}
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// An evaluation reads the agents the engine asks for in rounds: the first
// candidates of the rest wave, then, for each of them that cannot start
// (offline within the grace period, or gone to another fleet), one more
// and one read ahead.
// It starts maxConcurrent targets, skips the one whose agent left, leaves
// the offline ones pending, and reads no agent of the targets behind them.
func TestEvaluate_ReadsAgentsInRounds(t *testing.T) {
	const n, start = 200, 20
	storetest.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st := storetest.New(t)
	l := newLargeRollout(t, n, start)
	l.seed(t, ctx, st)
	_, ts, err := st.LoadRollout(ctx, l.r.ID)
	if err != nil {
		t.Fatal(err)
	}
	var changed []agent.Agent
	var offline []string
	for _, tg := range ts {
		if tg.Wave != 1 || len(changed) == 4 {
			continue
		}
		a := l.agents[tg.AgentID]
		if len(changed) < 3 {
			a.Online = false
			offline = append(offline, a.ID)
		} else {
			a.Fleet = "elsewhere"
		}
		changed = append(changed, a)
	}
	if err := st.ImportAgents(ctx, changed); err != nil {
		t.Fatal(err)
	}

	f := measureEvaluation(t, ctx, st, l.r.ID, l.now)
	wantStarted(t, ctx, st, l.r.ID, start)
	// The second round reads 4 for the held ones, and 4 ahead (engine startTargets).
	if want := int64(1 + n + start + 2*len(changed)); f.usage.ItemsRead != want {
		t.Errorf("%d items read, want the rollout, %d targets and %d agents: %v", f.usage.ItemsRead, n, start+2*len(changed), f.usage)
	}
	_, ts, err = st.LoadRollout(ctx, l.r.ID)
	if err != nil {
		t.Fatal(err)
	}
	byAgent := map[string]rollout.Target{}
	for _, tg := range ts {
		byAgent[tg.AgentID] = tg
	}
	for _, id := range offline {
		if got := byAgent[id].Status; got != rollout.TargetPending {
			t.Errorf("offline agent %s: target %s, want pending", id, got)
		}
	}
	if got := byAgent[changed[3].ID]; got.Status != rollout.TargetSkipped || got.ReasonCode != engine.SkipLeftFleet {
		t.Errorf("agent %s in another fleet: target %s (%s), want skipped", changed[3].ID, got.Status, got.ReasonCode)
	}
}
