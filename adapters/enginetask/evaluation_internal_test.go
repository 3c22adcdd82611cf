package enginetask

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/notify"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

// savesOf is a Store of one rollout that records what each evaluation saves.
type savesOf struct {
	r      rollout.Rollout
	ts     []rollout.Target
	agents map[string]agent.Agent
	saved  []rollout.Rollout
}

func (s *savesOf) LoadRollout(context.Context, string) (rollout.Rollout, []rollout.Target, error) {
	return s.r, s.ts, nil
}

func (s *savesOf) GetRollout(context.Context, string) (rollout.Rollout, error) { return s.r, nil }

func (s *savesOf) AgentsByID(context.Context, []string) (map[string]agent.Agent, error) {
	return s.agents, nil
}

func (s *savesOf) SaveEvaluation(_ context.Context, r rollout.Rollout, changed []rollout.Target, _ ...notify.Event) error {
	s.saved = append(s.saved, r)
	s.r, s.ts = r, rollout.Overlay(s.ts, changed)
	return nil
}

func (s *savesOf) SetDesiredHash(context.Context, []string, string) error { return nil }

// waitingSinceUnset is a rollout whose wave "prod" waits for approval, stored
// before approvals expired: its WaitingSince is unset. The next evaluation sets
// it, which changes no status, no target, and emits nothing.
func waitingSinceUnset() *savesOf {
	t0 := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	pol := policy.Policy{Name: "p", Spec: policy.Spec{
		Waves:     []policy.Wave{{Name: "canary", Percent: 10}, {Name: "prod", Percent: 100, RequireApproval: true}},
		Approvals: policy.Approvals{Required: 1, Expiry: time.Hour},
	}}
	return &savesOf{
		r: rollout.Rollout{ID: "r1", Fleet: "edge", Kind: policy.KindConfig, Status: rollout.WaitingApproval,
			StatusReason: `wave 1 "prod" waits for approval`, Policy: pol.Snapshot(policy.KindConfig), ToRef: "h-new",
			CreatedAt: t0, StartedAt: &t0, Waves: []rollout.Wave{
				{Index: 0, Name: "canary", Status: rollout.WaveCompleted, StartedAt: &t0, FinishedAt: &t0},
				{Index: 1, Name: "prod", Status: rollout.WaveWaitingApproval, RequireApproval: true},
			}},
		ts: []rollout.Target{
			{RolloutID: "r1", AgentID: "a0", Wave: 0, Status: rollout.TargetSucceeded, Attempt: 1, FromRef: "h-old", ToRef: "h-new", StartedAt: &t0, FinishedAt: &t0},
			{RolloutID: "r1", AgentID: "a1", Wave: 1, Status: rollout.TargetPending, Attempt: 1, FromRef: "h-old", ToRef: "h-new"},
		},
		agents: map[string]agent.Agent{
			"a0": {ID: "a0", Fleet: "edge", Online: true},
			"a1": {ID: "a1", Fleet: "edge", Online: true},
		},
	}
}

// An evaluation that changes only the rollout item (here a wave's WaitingSince,
// as elsewhere a stage's gate, a cleared batch or a bake) stores it: the
// rollout's statuses, which a comparison of statuses alone looked at, are
// as they were. Without the save the approval's expiry would restart at
// every evaluation and never come.
func TestEvaluate_StoresAChangeOfTheRolloutItemAlone(t *testing.T) {
	st := waitingSinceUnset()
	now := time.Date(2026, 3, 2, 13, 0, 0, 0, time.UTC)
	p := Evaluator{Store: st, Clock: func() time.Time { return now }, Log: slog.New(slog.DiscardHandler)}
	res, err := p.Evaluate(context.Background(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	if res.Changes() || res.Rollout.Status != rollout.WaitingApproval {
		t.Fatalf("changed %v, orders %v, events %v, status %s: want only the wave's WaitingSince", res.Changed, res.Orders, res.Events, res.Rollout.Status)
	}
	if len(st.saved) != 1 {
		t.Fatalf("%d saves, want the rollout saved once", len(st.saved))
	}
	if w := st.saved[0].Waves[1].WaitingSince; w == nil || !w.Equal(now) {
		t.Fatalf("saved WaitingSince %v, want %s", w, now)
	}
	now = now.Add(time.Minute)
	if _, err := p.Evaluate(context.Background(), "r1"); err != nil {
		t.Fatal(err)
	}
	if len(st.saved) != 1 {
		t.Fatalf("%d saves: an evaluation that changed nothing wrote", len(st.saved))
	}
}

// Every evaluation logs one line at info level with its counts, also an evaluation that
// stores nothing: that is when "why did nothing start?" is asked.
func TestEvaluate_LogsOneLinePerEvaluation(t *testing.T) {
	st := waitingSinceUnset()
	var buf bytes.Buffer
	p := Evaluator{Store: st, Clock: func() time.Time { return time.Date(2026, 3, 2, 13, 0, 0, 0, time.UTC) },
		Log: slog.New(slog.NewTextHandler(&buf, nil))}
	for range 2 { // the first stores, the second does not
		if _, err := p.Evaluate(context.Background(), "r1"); err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want one per evaluation:\n%s", len(lines), buf.String())
	}
	for _, l := range lines {
		if !strings.Contains(l, "level=INFO msg=evaluation rollout=r1") || !strings.Contains(l, `status=waiting_approval reason="wave 1 \"prod\" waits for approval" started=0`) {
			t.Errorf("line %s", l)
		}
	}
}
