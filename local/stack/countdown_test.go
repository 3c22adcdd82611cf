package stack

import (
	"testing"
	"time"
)

func TestHealthWaitLine(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		verified []time.Time
		now      time.Time
		want     string
	}{
		{verified: nil, now: t0, want: ""},
		{verified: []time.Time{t0}, now: t0.Add(12 * time.Second), want: "  health wait: 1 target, the last ends in 18s"},
		{verified: []time.Time{t0.Add(5 * time.Second), t0}, now: t0.Add(10 * time.Second), want: "  health wait: 2 targets, the last ends in 25s"},
		{verified: []time.Time{t0}, now: t0.Add(31 * time.Second), want: "  health wait: 1 target, finishing…"},
	}
	for _, c := range cases {
		if got := healthWaitLine(c.verified, 30*time.Second, c.now); got != c.want {
			t.Errorf("healthWaitLine(%v, 30s, %s) = %q, want %q", c.verified, c.now, got, c.want)
		}
	}
}
