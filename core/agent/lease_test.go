package agent

import (
	"context"
	"testing"
	"time"
)

func TestLiveness_Leases(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	l := Liveness{Silence: 90 * time.Second, ReconnectGrace: 10 * time.Second,
		Leases: Leases{"live": {Until: t0.Add(time.Minute)}, "dead": {Until: t0}, "drained": {Until: t0, Ended: true}}}
	connected := func(task string) Agent {
		return Agent{ID: "a", Online: true, Task: task, LastSeen: t0.Add(-time.Hour), ConnectedAt: t0.Add(-time.Hour)}
	}
	for _, tt := range []struct {
		name     string
		a        Agent
		now      time.Time
		want     bool
		graceEnd time.Time
	}{
		{name: "alive lease, lastSeen an hour old", a: connected("live"), now: t0.Add(time.Minute), want: true, graceEnd: time.Time{}},
		{name: "lease ran out", a: connected("live"), now: t0.Add(time.Minute + time.Nanosecond), want: false, graceEnd: time.Time{}},
		{name: "dead task", a: connected("dead"), now: t0.Add(time.Second), want: false, graceEnd: time.Time{}},
		{name: "unknown task, written an hour ago", a: connected("gone"), now: t0, want: false, graceEnd: time.Time{}},
		// a task newer than the reader's leases: its connection was just written
		{name: "unknown task, written now", a: Agent{Online: true, Task: "new", LastSeen: t0}, now: t0.Add(90 * time.Second), want: true, graceEnd: t0.Add(90*time.Second + time.Nanosecond)},
		{name: "unknown task, silent since", a: Agent{Online: true, Task: "new", LastSeen: t0}, now: t0.Add(90*time.Second + time.Nanosecond), want: false, graceEnd: time.Time{}},
		{name: "drained task: grace", a: connected("drained"), now: t0.Add(9 * time.Second), want: true, graceEnd: t0.Add(10 * time.Second)},
		{name: "drained task: after grace", a: connected("drained"), now: t0.Add(10 * time.Second), want: false, graceEnd: time.Time{}},
		{name: "closed: grace", a: Agent{Task: "live", LastSeen: t0}, now: t0.Add(5 * time.Second), want: true, graceEnd: t0.Add(10 * time.Second)},
		{name: "no task: lastSeen rule", a: Agent{Online: true, LastSeen: t0}, now: t0.Add(90 * time.Second), want: true, graceEnd: time.Time{}},
		{name: "no task: silent", a: Agent{Online: true, LastSeen: t0}, now: t0.Add(91 * time.Second), want: false, graceEnd: time.Time{}},
	} {
		got, end := l.Online(tt.a, tt.now)
		if got != tt.want || !end.Equal(tt.graceEnd) {
			t.Errorf("%s: Online = %v, %v; want %v, %v", tt.name, got, end, tt.want, tt.graceEnd)
		}
	}
}

// An agent left connected on a dead task is offline since the lease ended,
// and gone a retention after that, not after its (old) lastSeen.
func TestLiveness_GoneAfterLeaseEnd(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	l := Liveness{Retention: 7 * day, Leases: Leases{"dead": {Until: t0}}}
	a := Agent{Online: true, Task: "dead", LastSeen: t0.Add(-30 * day)}
	if l.Gone(a, t0.Add(time.Hour)) {
		t.Error("gone an hour after its task died")
	}
	if !l.Gone(a, t0.Add(7*day+time.Second)) {
		t.Error("not gone a retention after its task died")
	}
}

type countingSource struct{ reads int }

func (c *countingSource) Leases(context.Context) (Leases, error) {
	c.reads++
	return Leases{"t": {}}, nil
}

func TestCachedLeases(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	now := t0
	src := &countingSource{}
	l := Liveness{Source: CachedLeases(src, 2*time.Second, func() time.Time { return now })}
	for _, d := range []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second} {
		now = t0.Add(d)
		snap, err := l.Snapshot(context.Background())
		if err != nil || len(snap.Leases) != 1 {
			t.Fatalf("Snapshot = %v, %v", snap.Leases, err)
		}
	}
	if src.reads != 2 {
		t.Errorf("reads = %d, want 2 (at 0 s and 2 s)", src.reads)
	}
}
