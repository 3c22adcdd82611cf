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
		{online: true, after: 90 * time.Second, silence: 90 * time.Second, want: true},                  // exactly at the limit
		{online: true, after: 90*time.Second + time.Nanosecond, silence: 90 * time.Second, want: false}, // one past: the gateway task died
		{online: false, after: 0, silence: 90 * time.Second, want: false},                               // the connection closed
		{online: true, after: 10 * time.Hour, silence: 0, want: true},                                   // silence 0 trusts Online
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
		{h: Health{Healthy: false}, want: true},                                          // new process, no status
		{h: Health{Healthy: false, Status: StatusStarting}, want: true},                  // starting
		{h: Health{Healthy: false, Status: StatusStopping}, want: true},                  // stopping
		{h: Health{Healthy: false, Status: StatusStarting, LastError: "x"}, want: false}, // an error
		{h: Health{Healthy: false, Status: "StatusRecoverableError"}, want: false},       // an error status
		{h: Health{Healthy: true, Status: StatusOK}, want: false},                        // healthy
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
		{version: "0.162.0", attempt: 1, key: "0.162.0"},   // the first attempt is the plain version
		{version: "0.162.0", attempt: 0, key: "0.162.0"},   // no attempt recorded
		{version: "0.162.0", attempt: 2, key: "0.162.0#2"}, // a retry gets a key of its own
		{version: "", attempt: 3, key: ""},                 // no offer
	}
	for _, c := range cases {
		key := OfferKey(c.version, c.attempt)
		if key != c.key || OfferVersion(key) != c.version {
			t.Errorf("OfferKey(%q, %d) = %q (version %q), want %q", c.version, c.attempt, key, OfferVersion(key), c.key)
		}
	}
}
