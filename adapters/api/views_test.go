package api

import (
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/policy"
)

func TestPolicySource(t *testing.T) {
	snap := func(name, path, commit string, hw time.Duration) policy.Snapshot {
		return policy.Snapshot{Name: name, Path: path, Commit: commit, HealthWait: hw}
	}
	builtIn := policy.BuiltIn(policy.KindConfig)
	cases := []struct {
		s    policy.Snapshot
		want string
	}{
		{s: snap("canary-then-all", "policies/canary-then-all.yaml", "9f3c2a17", 5*time.Minute), want: "Policy canary-then-all · healthWait 5m · policies/canary-then-all.yaml@9f3c2a17"}, // the example policy of docs/policy.md
		{s: snap("p", "policies/p.yaml", strings.Repeat("ab", 20), 30*time.Second), want: "Policy p · healthWait 30s · policies/p.yaml@abababab"},                                         // a full commit id is shortened
		{s: snap("p", "policies/p.yaml", "", 90*time.Second), want: "Policy p · healthWait 1m30s · policies/p.yaml"},                                                                      // no commit
		{s: builtIn, want: "Policy default · healthWait 1m · built-in policy"},                                                                                                            // the built-in policy has no file
		{s: snap("p", "policies/p.yaml", "c", 0), want: "Policy p · healthWait 1m · policies/p.yaml@c"},                                                                                   // 0 means 60 seconds
	}
	for _, c := range cases {
		if got := newPolicyView(c.s).Source; got != c.want {
			t.Errorf("source %q, want %q", got, c.want)
		}
	}
}

func TestShortDuration(t *testing.T) {
	cases := []struct {
		d    time.Duration
		want string
	}{
		{d: 5 * time.Minute, want: "5m"},               // whole minutes
		{d: 30 * time.Second, want: "30s"},             // seconds
		{d: 90 * time.Second, want: "1m30s"},           // both
		{d: 2 * time.Hour, want: "2h"},                 // whole hours
		{d: time.Hour + 30*time.Minute, want: "1h30m"}, // hours and minutes
		{d: 1500 * time.Millisecond, want: "1.5s"},     // fractions stay
	}
	for _, c := range cases {
		if got := shortDuration(c.d); got != c.want {
			t.Errorf("shortDuration(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}
