package engine

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/windows"
)

// fieldCounts are the counts of Fields() that say why targets did or did
// not start; a row of TestResult_Fields names those it expects other than 0.
var fieldCounts = []string{"started", "heldByWindow", "offline", "heldByMaxConcurrent", "heldByMaxUnavailable", "heldByBatchGate", "heldByFreeze", "gatesDue"}

// TestResult_Fields drives one scenario per reason to the evaluation it is
// about and checks the log line's counts as a whole: a reason counted
// under another key, or twice, fails as surely as one not counted.
func TestResult_Fields(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T) Result // the evaluation of the row
		want map[string]any            // the counts expected other than 0, and the other keys checked
	}{
		{name: "every target starts", run: func(t *testing.T) Result {
			return newFixture(t, policy.KindConfig, snap(policy.KindConfig, nil), []string{"a1", "a2", "a3"}).tick()
		}, want: map[string]any{"started": 3, "status": "running", "nextDeadline": "2026-03-02T12:10:00Z"}}, // applyTimeout 10m
		{name: "a maintenance window is closed", run: func(t *testing.T) Result {
			f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, func(s *policy.Spec) {
				s.MaintenanceWindows = []windows.Window{{Start: 22 * 60, End: 5 * 60}}
			}), []string{"a1", "a2"})
			return f.tick()
		}, want: map[string]any{"heldByWindow": 2, "nextDeadline": "2026-03-02T22:00:00Z"}}, // 22:00 UTC
		{name: "an agent is offline within the grace period", run: func(t *testing.T) Result {
			f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, nil), []string{"a1", "a2"})
			f.update("a2", func(a *agent.Agent) { a.Online = false })
			return f.tick()
		}, want: map[string]any{"started": 1, "offline": 1}},
		{name: "maxConcurrent targets are in flight", run: func(t *testing.T) Result {
			f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, func(s *policy.Spec) { s.MaxConcurrent = intp(1) }), []string{"a1", "a2", "a3"})
			return f.tick()
		}, want: map[string]any{"started": 1, "heldByMaxConcurrent": 2}},
		{name: "offline at its turn", run: func(t *testing.T) Result {
			ids := []string{"a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8"}
			f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, func(s *policy.Spec) { s.MaxConcurrent = intp(2) }), ids)
			f.update("a2", func(a *agent.Agent) { a.Online = false })
			return f.tick() // a1 and a3 start
		}, want: map[string]any{"started": 2, "offline": 1, "heldByMaxConcurrent": 5, "changed": 2, "events": 1, "nextDeadline": "2026-03-02T12:10:00Z"}}, // 8 - 2 started - 1 offline
		{name: "offline behind maxConcurrent", run: func(t *testing.T) Result {
			ids := []string{"a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8"}
			f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, func(s *policy.Spec) { s.MaxConcurrent = intp(2) }), ids)
			f.tick() // a1 and a2 in flight
			f.update("a3", func(a *agent.Agent) { a.Online = false })
			f.advance(time.Second)
			return f.tick()
		}, want: map[string]any{"heldByMaxConcurrent": 6}}, // a3 is judged when its turn comes
		{name: "a later batch waits (maxUnavailable)", run: func(t *testing.T) Result {
			f := stagedFixture(t)
			f.tick()
			f.settle() // the canary succeeds: rest/r1a starts its batch 0, batch 1 waits
			return f.last
		}, want: map[string]any{"started": 1, "heldByMaxUnavailable": 1}},
		{name: "a batch gate is still reading", run: func(t *testing.T) Result {
			f := gatedFixture(t, func(s *policy.Spec) {
				s.Health = nil
				s.Waves[1].BatchBake = time.Minute
				s.Waves[1].BatchGate = true
			})
			f.tick()
			f.settle()
			f.toNext() // the canary's bake ends: zones/r1a starts its batch 0
			f.settle() // batch 0 succeeds: batch 1 waits for its batch gate
			return f.last
		}, want: map[string]any{"heldByBatchGate": 1}},
		{name: "a freeze holds the stage", run: func(t *testing.T) Result {
			from, until := t0, t0.Add(6*time.Hour)
			f := gatedFixture(t, func(s *policy.Spec) {
				s.Health = nil
				s.Freezes = []policy.Freeze{{Name: "holidays", Regions: []string{"r2"}, From: &from, Until: &until}}
			})
			f.tick()
			f.settle()
			f.toNext() // the canary's bake
			f.settle() // zones/r1a
			f.settle()
			f.toNext() // its bake; zones/r2a (a3, a4) is frozen
			return f.last
		}, want: map[string]any{"heldByFreeze": 2, "status": "frozen", "nextDeadline": "2026-03-02T18:00:00Z"}}, // the freeze ends
		{name: "a gate reading is due", run: func(t *testing.T) Result {
			f := gatedFixture(t, nil)
			f.tick()
			f.settle()
			f.toNext() // 30s into the canary's bake
			return f.last
		}, want: map[string]any{"gatesDue": 1, "nextDeadline": "none"}}, // read now, then evaluated again
		{name: "waiting for approval", run: func(t *testing.T) Result {
			f := approvalFixture(t, 1)
			f.toApproval()
			return f.last
		}, want: map[string]any{"status": "waiting_approval", "reason": `wave 1 "zones" waits for approval`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fieldMap(tt.run(t).Fields())
			for _, k := range fieldCounts {
				want, ok := tt.want[k]
				if !ok {
					want = 0
				}
				if got[k] != want {
					t.Errorf("%s = %v, want %v (fields %v)", k, got[k], want, got)
				}
			}
			for k, want := range tt.want {
				if got[k] != want {
					t.Errorf("%s = %v, want %v (fields %v)", k, got[k], want, got)
				}
			}
		})
	}
}

func fieldMap(kv []any) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// The line as an adapter logs it: one line, every key once, the deadline
// in UTC.
func TestResult_Fields_OneLogLine(t *testing.T) {
	f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, func(s *policy.Spec) { s.MaxConcurrent = intp(2) }), []string{"a1", "a2", "a3", "a4"})
	f.update("a1", func(a *agent.Agent) { a.Online = false })
	res := f.tick()
	var buf bytes.Buffer
	slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}})).Info("evaluation", res.Fields()...)
	want := `level=INFO msg=evaluation rollout=r1 fleet=edge kind=config status=running reason="" started=2 heldByWindow=0 offline=1 ` +
		`heldByMaxConcurrent=1 heldByMaxUnavailable=0 heldByBatchGate=0 heldByFreeze=0 gatesDue=0 nextDeadline=2026-03-02T12:10:00Z changed=2 events=1` + "\n"
	if got := buf.String(); got != want {
		t.Fatalf("log line\n got %s\nwant %s", got, want)
	}
	if strings.Count(buf.String(), "\n") != 1 {
		t.Fatal("more than one line")
	}
}
