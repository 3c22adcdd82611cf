package simfleet

import (
	"testing"
	"time"
)

func TestTraffic_Advance(t *testing.T) {
	type counts struct{ accepted, sent, failed float64 }
	for _, tc := range []struct {
		name     string
		status   string
		scenario float64
		config   float64
		after    time.Duration
		want     counts
	}{
		{name: "running", status: StatusOK, after: 10 * time.Second, want: counts{1000, 1000, 0}},                                      // 100 spans/s
		{name: "quarter fails", status: StatusOK, scenario: 0.25, after: 10 * time.Second, want: counts{1000, 750, 250}},               // sent + failed = accepted
		{name: "larger cause wins", status: StatusOK, scenario: 0.25, config: 1, after: 10 * time.Second, want: counts{1000, 0, 1000}}, // not the sum
		{name: "degraded still runs", status: StatusRecoverableError, after: time.Second, want: counts{100, 100, 0}},                   // FailUnhealthy's collector
		{name: "starting", status: StatusStarting, after: time.Hour, want: counts{}},                                                   // no pipeline yet
		{name: "restarting", status: "", after: time.Hour, want: counts{}},                                                             // no process
		{name: "clock still", status: StatusOK, want: counts{}},                                                                        // no time, no spans
		{name: "clock back", status: StatusOK, after: -time.Second, want: counts{}},                                                    // never backwards
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTraffic(100, collectorHealth{status: tc.status, startTime: t0})
			tr.failScenario, tr.failConfig = tc.scenario, tc.config
			tr.advance(t0.Add(tc.after))
			if got := (counts{tr.accepted, tr.sent, tr.failed}); got != tc.want || tr.refused != 0 {
				t.Errorf("accepted, sent, failed %v, refused %v; want %v, 0", got, tr.refused, tc.want)
			}
		})
	}
}

// A restart starts the counters anew; the spans until then are counted
// first, under the old flow.
func TestTraffic_FollowsTheProcess(t *testing.T) {
	tr := newTraffic(100, collectorHealth{status: StatusOK, startTime: t0})
	tr.follow(collectorHealth{status: StatusOK, startTime: t0}, t0.Add(time.Second)) // same process: counted on
	if tr.accepted != 100 {
		t.Fatalf("accepted %v after 1 s of the same process, want 100", tr.accepted)
	}
	restart := t0.Add(2 * time.Second)
	tr.follow(collectorHealth{status: "", startTime: restart}, restart)
	tr.advance(restart.Add(time.Hour))
	if tr.accepted != 0 || tr.running {
		t.Errorf("after a restart: accepted %v, running %v; want 0, false", tr.accepted, tr.running)
	}
	tr.follow(collectorHealth{status: StatusOK, startTime: restart}, restart.Add(time.Hour))
	tr.advance(restart.Add(time.Hour + time.Second))
	if tr.accepted != 100 {
		t.Errorf("accepted %v 1 s after StatusOK, want 100", tr.accepted)
	}
}

func TestInZone(t *testing.T) {
	for _, tc := range []struct {
		where string
		want  bool
	}{
		{where: "eu-west-1/eu-west-1a", want: true},  // its zone
		{where: "eu-west-1/eu-west-1b", want: false}, // another zone of its region
		{where: "eu-west-1", want: true},             // its region
		{where: "us-east-1", want: false},            // another region
		{where: "eu-west-1a", want: false},           // a zone alone is read as a region
		{where: "", want: true},                      // every agent
	} {
		if got := inZone(tc.where, "eu-west-1", "eu-west-1a"); got != tc.want {
			t.Errorf("inZone(%q) = %v, want %v", tc.where, got, tc.want)
		}
	}
	if !inZone("", "", "") || inZone("eu-west-1", "", "") {
		t.Error("an agent without a zone is in every agent, not in a region")
	}
}
