package gate

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

func red(name string) Result {
	return Result{Kind: KindMetric, Name: name, Scope: "eu-west-1/eu-west-1a", Red: true, Detail: "value 0.2 above 0.01"}
}

var green = Result{Kind: KindMetric, Name: "m", Detail: "value 0 within ≤ 0.01"}

// run reads the gate at every due time with the results of reds[k] (true:
// one red result) and returns the outcome and when it was decided.
func run(t *testing.T, bake, interval time.Duration, fts int, reds []bool) (Outcome, time.Time, State) {
	t.Helper()
	s := Begin(t0, bake, interval, true)
	for k := 0; ; k++ {
		if s.NextAt == nil {
			return s.Verdict(fts, s.Until), s.Until, s
		}
		at := *s.NextAt
		if v := s.Verdict(fts, at); v != Pending {
			return v, at, s
		}
		if k >= len(reds) {
			t.Fatalf("reading %d at %s not scripted", k, at.Sub(t0))
		}
		rs := []Result{green}
		if reds[k] {
			rs = append(rs, red("error-rate"))
		}
		s = s.Record(at, rs, interval)
		if v := s.Verdict(fts, at); v != Pending {
			return v, at, s
		}
	}
}

func TestGate_Rules(t *testing.T) {
	m := time.Minute
	tests := []struct {
		name    string
		bake    time.Duration
		fts     int
		reds    []bool
		want    Outcome
		decided time.Duration // after the start of the bake
	}{
		{name: "all green passes at the end", bake: 2 * m, fts: 1, reds: []bool{false, false, false, false}, want: Passed, decided: 2 * m},
		{name: "one red stops at once with failuresToStop 1", bake: 2 * m, fts: 1, reds: []bool{false, true}, want: Failed, decided: m},
		{name: "two reds in a row with failuresToStop 2", bake: 2 * m, fts: 2, reds: []bool{false, true, true}, want: Failed, decided: 90 * time.Second},
		{name: "reds not in a row do not stop", bake: 2 * m, fts: 2, reds: []bool{true, false, true, false}, want: Passed, decided: 2 * m},
		{name: "the last reading must be green", bake: 2 * m, fts: 2, reds: []bool{false, false, false, true}, want: Failed, decided: 2 * m},
		{name: "bake 0 is a single reading", bake: 0, fts: 1, reds: []bool{false}, want: Passed, decided: 0},
		{name: "bake 0, red", bake: 0, fts: 1, reds: []bool{true}, want: Failed, decided: 0},
		{name: "a bake shorter than the interval reads once at its end", bake: 10 * time.Second, fts: 1, reds: []bool{false}, want: Passed, decided: 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, at, s := run(t, tt.bake, 30*time.Second, tt.fts, tt.reds)
			if got != tt.want || at.Sub(t0) != tt.decided {
				t.Fatalf("outcome %v at +%s, want %v at +%s (state %+v)", got, at.Sub(t0), tt.want, tt.decided, s)
			}
			if got == Failed && s.Reason(tt.fts) == "" {
				t.Fatal("a failed gate says why")
			}
		})
	}
}

func TestGate_DryRunNeverBlocks(t *testing.T) {
	s := Begin(t0, 0, 30*time.Second, true)
	dry := red("refused")
	dry.DryRun = true
	s = s.Record(t0, []Result{dry}, 30*time.Second)
	if v := s.Verdict(1, t0); v != Passed {
		t.Fatalf("a red dry-run result is %v, want passed", v)
	}
	if len(s.Recent) != 1 || len(s.Recent[0].Results) != 1 || !s.Recent[0].Results[0].DryRun {
		t.Fatalf("the dry-run reading is recorded and shown: %+v", s.Recent)
	}
}

func TestGate_ErrorIsRedAndKeptApart(t *testing.T) {
	s := Begin(t0, 0, time.Second, true)
	s = s.Record(t0, []Result{{Kind: KindMetric, Name: "m", Red: true, Error: "dial tcp: connection refused"}}, time.Second)
	if s.Verdict(1, t0) != Failed || s.LastRed != "metric m: error: dial tcp: connection refused" {
		t.Fatalf("last red %q", s.LastRed)
	}
}

func TestGate_WithoutChecksIsAWait(t *testing.T) {
	s := Begin(t0, time.Minute, 30*time.Second, false)
	if s.Due(t0.Add(time.Hour)) {
		t.Fatal("a gate without checks reads nothing")
	}
	if s.Verdict(1, t0.Add(59*time.Second)) != Pending || s.Verdict(1, t0.Add(time.Minute)) != Passed {
		t.Fatal("a gate without checks passes when the wait ends")
	}
}

// A late reading (the engine was down) keeps the grid: the next one is the
// next grid point after it, and elapsed time is not read again.
func TestGate_LateReadingKeepsTheGrid(t *testing.T) {
	s := Begin(t0, 5*time.Minute, time.Minute, true)
	s = s.Record(t0.Add(3*time.Minute+10*time.Second), []Result{green}, time.Minute)
	if s.NextAt == nil || !s.NextAt.Equal(t0.Add(4*time.Minute)) {
		t.Fatalf("next %v, want +4m", s.NextAt)
	}
	s = s.Record(t0.Add(7*time.Minute), []Result{green}, time.Minute)
	if s.NextAt != nil || s.Verdict(1, t0.Add(7*time.Minute)) != Passed {
		t.Fatalf("a reading after the end is the last: %+v", s)
	}
}

func TestGate_KeepsFewReadings(t *testing.T) {
	s := Begin(t0, time.Hour, time.Second, true)
	for i := 0; i < 50; i++ {
		s = s.Record(t0.Add(time.Duration(i)*time.Second), []Result{green}, time.Second)
	}
	if len(s.Recent) != KeepReadings || s.Readings != 50 {
		t.Fatalf("recent %d readings %d", len(s.Recent), s.Readings)
	}
}
