package main

import (
	"testing"
	"time"
)

// The demo's times count from make demo's start when it passes one, else
// from the command's own; a -since that is no Unix time is refused.
func TestStartedAt(t *testing.T) {
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	for _, c := range []struct {
		since string
		want  time.Time
		err   bool
	}{
		{since: "", want: now},                                      // the command's start
		{since: "1772452770", want: time.Unix(1772452770, 0)},       // make demo's, whole seconds
		{since: "1772452770.25", want: time.Unix(1772452770, 25e7)}, // a fraction too
		{since: "now", err: true},                                   // not a number
		{since: "-5", err: true},                                    // not a moment of this era
	} {
		got, err := startedAt(c.since, clock)
		if (err != nil) != c.err || !got.Equal(c.want) {
			t.Errorf("startedAt(%q) = %s, %v; want %s (error %v)", c.since, got, err, c.want, c.err)
		}
	}
}
