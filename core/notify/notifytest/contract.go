package notifytest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/notify"
)

// Outbox is a feed under test: Store stores one change of a rollout of
// fleet, decided at time at, with events of the given types.
type Outbox interface {
	Store(t *testing.T, rolloutID, fleet string, at time.Time, types ...string)
	Page(q notify.Query) (notify.Page, error)
}

// Contract checks an outbox's feed: the orders, the filters, the cursors,
// Since and Horizon. The DynamoDB store and Feed both pass it, so that the
// tests' in-memory stores serve what the deployed feed serves.
func Contract(t *testing.T, o Outbox) {
	t0 := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	o.Store(t, "r-a", "edge", t0, "rollout.started")
	o.Store(t, "r-b", "core", t0.Add(time.Second), "rollout.started")
	o.Store(t, "r-a", "edge", t0.Add(2*time.Second), "rollout.resumed", "rollout.waiting_approval")
	o.Store(t, "r-b", "core", t0.Add(3*time.Second), "rollout.completed")
	// a change stored after a later one of another rollout, at an earlier time
	o.Store(t, "r-a", "edge", t0.Add(2500*time.Millisecond), "rollout.approved")

	read := func(q notify.Query) ([]string, notify.Page) {
		t.Helper()
		var got []string
		for page := 0; ; page++ {
			p, err := o.Page(q)
			if err != nil {
				t.Fatalf("query %+v: %v", q, err)
			}
			for _, e := range p.Items {
				got = append(got, e.EventID)
			}
			if !p.More {
				return got, p
			}
			if page > 20 {
				t.Fatalf("query %+v: no end", q)
			}
			q.After = p.Next
		}
	}
	want := func(what string, got []string, ids ...string) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(ids) {
			t.Errorf("%s: %v, want %v", what, got, ids)
		}
	}
	all, last := read(notify.Query{Limit: 2})
	want("every event by time, two a page", all, "r-a:v2:0", "r-b:v2:0", "r-a:v3:0", "r-a:v3:1", "r-a:v4:0", "r-b:v3:0")
	again, _ := read(notify.Query{After: last.Next})
	want("after the last page", again)

	edge, _ := read(notify.Query{Fleet: "edge", Limit: 1})
	want("fleet edge", edge, "r-a:v2:0", "r-a:v3:0", "r-a:v3:1", "r-a:v4:0")
	ra, lastA := read(notify.Query{Rollout: "r-a", Limit: 3})
	want("rollout r-a by version", ra, "r-a:v2:0", "r-a:v3:0", "r-a:v3:1", "r-a:v4:0")
	o.Store(t, "r-a", "edge", t0.Add(4*time.Second), "rollout.completed")
	more, _ := read(notify.Query{Rollout: "r-a", After: lastA.Next})
	want("rollout r-a after its last page", more, "r-a:v5:0")
	both, _ := read(notify.Query{Rollout: "r-a", Fleet: "core"})
	want("rollout r-a in fleet core", both)

	since, _ := read(notify.Query{Since: t0.Add(2500 * time.Millisecond)})
	want("since 12:00:02.5", since, "r-a:v4:0", "r-b:v3:0", "r-a:v5:0")
	sinceA, _ := read(notify.Query{Rollout: "r-a", Since: t0.Add(2 * time.Second)})
	want("rollout r-a since 12:00:02", sinceA, "r-a:v3:0", "r-a:v3:1", "r-a:v4:0", "r-a:v5:0")

	// Horizon: a page that reaches the newest event stops at the horizon,
	// so that the next read returns what lies after it again.
	_, caughtUp := read(notify.Query{Since: t0.Add(3 * time.Second), Horizon: t0.Add(3500 * time.Millisecond)})
	reread, _ := read(notify.Query{After: caughtUp.Next})
	want("after a page that stopped at the horizon", reread, "r-a:v5:0")
	_, early := read(notify.Query{Horizon: t0.Add(3500 * time.Millisecond), Limit: 2})
	if early.Next == "" {
		t.Error("a caught-up page has no cursor")
	}

	for _, q := range []notify.Query{{Rollout: "r-a", After: last.Next}, {After: lastA.Next}, {After: "not a cursor"}} {
		if _, err := o.Page(q); !errors.Is(err, notify.ErrBadCursor) {
			t.Errorf("query %+v: %v, want ErrBadCursor", q, err)
		}
	}
}

// memory is Feed as an Outbox.
type memory struct {
	feed     Feed
	versions map[string]int64
}

// Memory is an empty Feed as an Outbox, for Contract.
func Memory() Outbox { return &memory{versions: map[string]int64{}} }

func (m *memory) Store(_ *testing.T, rolloutID, fleet string, at time.Time, types ...string) {
	m.versions[rolloutID]++
	if m.versions[rolloutID] == 1 {
		m.versions[rolloutID]++ // created at 1, as CreateRollout does
	}
	es := make([]notify.Event, len(types))
	for i, typ := range types {
		es[i] = notify.Event{Type: typ, Time: at, Rollout: notify.Summary{ID: rolloutID, Fleet: fleet}}
	}
	m.feed.Append(m.versions[rolloutID], es)
}

func (m *memory) Page(q notify.Query) (notify.Page, error) { return m.feed.Page(q) }
