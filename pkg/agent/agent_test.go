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

func TestLiveness_ReconnectGrace(t *testing.T) {
	closed := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	l := Liveness{Silence: 90 * time.Second, ReconnectGrace: 10 * time.Second}
	cases := []struct {
		name     string
		a        Agent
		after    time.Duration
		want     bool
		graceEnd time.Time
	}{
		{name: "closed just now: within the grace", a: Agent{Online: false, LastSeen: closed}, after: 0, want: true, graceEnd: closed.Add(10 * time.Second)},
		{name: "one tick before the grace ends", a: Agent{Online: false, LastSeen: closed}, after: 10*time.Second - time.Nanosecond, want: true, graceEnd: closed.Add(10 * time.Second)},
		{name: "at the grace's end: offline", a: Agent{Online: false, LastSeen: closed}, after: 10 * time.Second, want: false},
		{name: "never seen", a: Agent{Online: false}, after: 0, want: false},
		{name: "open and heard from", a: Agent{Online: true, LastSeen: closed}, after: 90 * time.Second, want: true},
		{name: "open but silent: its task died", a: Agent{Online: true, LastSeen: closed}, after: 91 * time.Second, want: false},
		{name: "no grace configured", a: Agent{Online: false, LastSeen: closed}, after: 0, want: false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rule := l
			if c.name == "no grace configured" {
				rule.ReconnectGrace = 0
			}
			got, end := rule.Online(c.a, closed.Add(c.after))
			if got != c.want || !end.Equal(c.graceEnd) {
				t.Fatalf("Online = %v, grace end %v; want %v, %v", got, end, c.want, c.graceEnd)
			}
		})
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
