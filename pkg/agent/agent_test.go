package agent

import (
	"testing"
	"time"
)

func TestOnlineAt(t *testing.T) {
	seen := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		online  bool
		after   time.Duration
		silence time.Duration
		want    bool
	}{
		{true, 90 * time.Second, 90 * time.Second, true},                  // exactly at the limit
		{true, 90*time.Second + time.Nanosecond, 90 * time.Second, false}, // one past: the gateway task died
		{false, 0, 90 * time.Second, false},                               // the connection closed
		{true, 10 * time.Hour, 0, true},                                   // silence 0 trusts Online
	}
	for _, c := range cases {
		a := Agent{Online: c.online, LastSeen: seen}
		if got := a.OnlineAt(seen.Add(c.after), c.silence); got != c.want {
			t.Errorf("OnlineAt(+%s, %s) online=%v: %v, want %v", c.after, c.silence, c.online, got, c.want)
		}
	}
}

func TestStartupReport(t *testing.T) {
	cases := []struct {
		h    Health
		want bool
	}{
		{Health{Healthy: false}, true},                                          // new process, no status
		{Health{Healthy: false, Status: StatusStarting}, true},                  // starting
		{Health{Healthy: false, Status: StatusStopping}, true},                  // stopping
		{Health{Healthy: false, Status: StatusStarting, LastError: "x"}, false}, // an error
		{Health{Healthy: false, Status: "StatusRecoverableError"}, false},       // an error status
		{Health{Healthy: true, Status: StatusOK}, false},                        // healthy
	}
	for _, c := range cases {
		if got := c.h.StartupReport(); got != c.want {
			t.Errorf("StartupReport(%+v) = %v, want %v", c.h, got, c.want)
		}
	}
}

func TestOfferKey(t *testing.T) {
	cases := []struct {
		version string
		attempt int
		key     string
	}{
		{"0.162.0", 1, "0.162.0"},   // the first attempt is the plain version
		{"0.162.0", 0, "0.162.0"},   // no attempt recorded
		{"0.162.0", 2, "0.162.0#2"}, // a retry gets a key of its own
		{"", 3, ""},                 // no offer
	}
	for _, c := range cases {
		key := OfferKey(c.version, c.attempt)
		if key != c.key || OfferVersion(key) != c.version {
			t.Errorf("OfferKey(%q, %d) = %q (version %q), want %q", c.version, c.attempt, key, OfferVersion(key), c.key)
		}
	}
}
