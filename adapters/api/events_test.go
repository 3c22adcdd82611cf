package api

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/api/schema"
	"github.com/myriarch/myriarch/core/rollout"
)

func eventTypes(l schema.EventList) []string {
	var out []string
	for _, e := range l.Items {
		out = append(out, e.Type)
	}
	return out
}

// The feed lists what the rollout did, in the order it did it, with the
// operator's actions among the engine's decisions; every answer matches
// the document (the harness validates it).
func TestListEvents_TheFeedOfARollout(t *testing.T) {
	h := newHarness(t)
	id := h.waitingApproval()
	h.advance(time.Minute)
	wantOK(t, h.do(post("/api/v1/rollouts/"+id+"/actions/pause", RoleOperator, "")))
	wantOK(t, h.do(post("/api/v1/rollouts/"+id+"/actions/resume", RoleOperator, "")))

	all := decode[schema.EventList](t, h.do(get("/api/v1/events", RoleViewer)))
	// the wave still waits after the resume: no second waiting_approval, the
	// resume's summary says it
	want := []string{"rollout.started", "rollout.waiting_approval", "rollout.paused", "rollout.resumed"}
	if fmt.Sprint(eventTypes(all)) != fmt.Sprint(want) || all.More || all.Next == "" {
		t.Fatalf("feed %v more %v next %q, want %v and a cursor", eventTypes(all), all.More, all.Next, want)
	}
	paused := all.Items[2]
	if paused.Rollout.ID != id || paused.Rollout.Status != rollout.Paused || paused.Reason != "paused by Dana Operator" ||
		paused.EventID != fmt.Sprintf("%s:v%d:0", id, paused.Rollout.Version) || paused.Rollout.Counts["total"] != 4 {
		t.Errorf("paused %+v", paused)
	}
	if resumed := all.Items[3]; resumed.Rollout.Status != rollout.WaitingApproval || resumed.Rollout.Wave == nil || resumed.Rollout.Wave.Name != "rest" {
		t.Errorf("resumed %+v, want the rollout waiting for the approval of rest again", resumed)
	}
	byRollout := decode[schema.EventList](t, h.do(get("/api/v1/events?rollout="+id+"&limit=2", RoleViewer)))
	if fmt.Sprint(eventTypes(byRollout)) != fmt.Sprint(want[:2]) || !byRollout.More {
		t.Fatalf("first page of the rollout %v more %v, want %v and more", eventTypes(byRollout), byRollout.More, want[:2])
	}
	rest := decode[schema.EventList](t, h.do(get("/api/v1/events?rollout="+id+"&after="+url.QueryEscape(byRollout.Next), RoleViewer)))
	if fmt.Sprint(eventTypes(rest)) != fmt.Sprint(want[2:]) || rest.More {
		t.Fatalf("after the first page %v, want %v", eventTypes(rest), want[2:])
	}
	for _, q := range []string{"fleet=core", "fleet=Not_A_Fleet", "rollout=r%23lock", "since=2030-01-01T00:00:00Z"} {
		if l := decode[schema.EventList](t, h.do(get("/api/v1/events?"+q, RoleViewer))); len(l.Items) != 0 {
			t.Errorf("%s: %v, want nothing", q, eventTypes(l))
		}
	}
	if l := decode[schema.EventList](t, h.do(get("/api/v1/events?fleet=edge&since="+url.QueryEscape(paused.Time.Format(time.RFC3339)), RoleViewer))); len(l.Items) != 2 {
		t.Errorf("edge since the pause: %v, want the pause and the resume", eventTypes(l))
	}
}

// Following the feed: a page that reached the newest event answers a
// cursor up to notify.Settle back, so that an event stored late (decided
// before the newest one, written after it) is still read; the reader sees
// the recent events again and drops them by id.
func TestListEvents_FollowingRereadsTheSettleWindow(t *testing.T) {
	h := newHarness(t)
	id := h.waitingApproval()
	first := decode[schema.EventList](t, h.do(get("/api/v1/events", RoleViewer)))
	again := decode[schema.EventList](t, h.do(get("/api/v1/events?after="+url.QueryEscape(first.Next), RoleViewer)))
	if len(first.Items) != 2 || len(again.Items) != 2 {
		t.Fatalf("first %v then %v: within five minutes, following reads the recent events again", eventTypes(first), eventTypes(again))
	}
	h.advance(10 * time.Minute)
	wantOK(t, h.do(post("/api/v1/rollouts/"+id+"/actions/pause", RoleOperator, "")))
	settled := decode[schema.EventList](t, h.do(get("/api/v1/events?after="+url.QueryEscape(again.Next), RoleViewer)))
	if fmt.Sprint(eventTypes(settled)) != "[rollout.started rollout.waiting_approval rollout.paused]" {
		t.Fatalf("after the pause: %v", eventTypes(settled))
	}
	h.advance(10 * time.Minute)
	last := decode[schema.EventList](t, h.do(get("/api/v1/events?after="+url.QueryEscape(settled.Next), RoleViewer)))
	quiet := decode[schema.EventList](t, h.do(get("/api/v1/events?after="+url.QueryEscape(last.Next), RoleViewer)))
	if len(quiet.Items) != 0 || quiet.Next != last.Next {
		t.Fatalf("ten minutes later: %v next %q (was %q), want nothing new and the same cursor", eventTypes(quiet), quiet.Next, last.Next)
	}
}

func TestListEvents_Refusals(t *testing.T) {
	h := newHarness(t)
	id := h.applyFixture()
	h.pass(id)
	byRollout := decode[schema.EventList](t, h.do(get("/api/v1/events?rollout="+id, RoleViewer)))
	for _, q := range []string{"since=yesterday", "after=not-a-cursor", "after=" + url.QueryEscape(byRollout.Next), "limit=0", "order=desc", "fleet=edge&fleet=core"} {
		wantProblem(t, h.do(get("/api/v1/events?"+q, RoleViewer)), http.StatusBadRequest, CodeRequestInvalid)
	}
	wantProblem(t, h.do(req{method: http.MethodGet, path: "/api/v1/events"}), http.StatusUnauthorized, CodeUnauthenticated)
}
