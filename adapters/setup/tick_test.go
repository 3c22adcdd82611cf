package setup

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/assignment"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/revision"
	"github.com/myriarch/myriarch/core/selector"
	"github.com/myriarch/myriarch/local/storetest"
)

// An apply that swept no agent (its budget spent) leaves the sweep it
// recorded to the planner's minute: the next Tick assigns every agent to
// the revision's fleets before it plans them, and the tick after reads
// only the finished sweep.
func TestTick_ContinuesTheSweepAnApplyLeft(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	const n = 30
	for i := 0; i < n; i++ {
		a := agent.Agent{ID: fmt.Sprintf("a%02d", i), Online: true, LastSeen: t0, Attributes: map[string]string{"labels.fleet": "edge"}}
		if err := st.RecordAgent(ctx, a); err != nil {
			t.Fatal(err)
		}
		// Assigned before the revision (to no fleet), so not pending: only
		// the sweep moves it.
		if _, _, _, err := st.AssignAgent(ctx, a.ID, 0, func(agent.Agent) assignment.Outcome { return assignment.Outcome{} }); err != nil {
			t.Fatal(err)
		}
	}
	body := []byte("receivers: {}\n")
	h := revision.Hash(body)
	rev := revision.Revision{Commit: "c1", Configs: map[string]revision.Config{"edge": {Hash: h, Body: body}},
		Fleets: []fleet.Fleet{{Name: "edge", Selector: selector.Selector{MatchAttributes: map[string]string{"labels.fleet": "edge"}},
			Config: fleet.Config{Hash: h}}}}
	if err := st.PutRevision(ctx, rev, t0); err != nil { // the apply, whose sweep had no time
		t.Fatal(err)
	}
	d := Deps{Store: st, Clock: func() time.Time { return t0 }, Log: slog.New(slog.DiscardHandler)}
	var p plans // which fails edge's version kind on purpose
	if _, err := d.Tick(ctx, &p); err == nil || strings.Contains(err.Error(), "assignment") {
		t.Fatalf("tick: %v, want only the planner's failure of edge (version)", err)
	}
	for i := 0; i < n; i++ {
		a, _, err := st.GetAgent(ctx, fmt.Sprintf("a%02d", i))
		if err != nil || a.Fleet != "edge" || a.DesiredHash != h {
			t.Fatalf("agent %s after the tick: fleet %q desired %q (%v), want edge bootstrapped with %s", a.ID, a.Fleet, a.DesiredHash, err, h)
		}
	}
	if len(p) != 2 || p[0] != "edge/config" {
		t.Fatalf("the tick planned %v, want edge for both kinds", p)
	}
	sw, err := st.CurrentSweep(ctx)
	if err != nil || !sw.Done || sw.Rev != 1 {
		t.Fatalf("sweep after the tick %+v (%v), want revision 1 done", sw, err)
	}
	st.ResetUsage()
	if _, err := d.Assigner().Sweep(ctx, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if u := st.Usage(); u.Requests != 1 {
		t.Fatalf("the next tick's sweep cost %v, want one GetItem", u)
	}
}
