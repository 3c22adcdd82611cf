package gateway

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/agent"
)

// TestPushPage_ReadsTheChangedAgentsOfAPageInOneBatch: a wave puts hundreds
// of held agents on one page of the lagging index; those whose desired state
// looks changed are read again together, not one by one, and take the
// stored desired state (not the page's, which may be stale).
func TestPushPage_ReadsTheChangedAgentsOfAPageInOneBatch(t *testing.T) {
	agents := newMemAgents()
	g, err := New(Config{Now: func() time.Time { return t0 }, Tokens: []string{token}}, agents, nil)
	must(t, err)
	ids := []string{"00000000-0000-0000-0000-000000000001", "00000000-0000-0000-0000-000000000002", "00000000-0000-0000-0000-000000000003"}
	var page []agent.Agent
	for _, id := range ids {
		agents.setDesired(id, "h-stored", "")
		g.sessions.put(&session{id: id, view: agent.Agent{ID: id}}) // plain HTTP: nothing is sent from the poll
		page = append(page, agent.Agent{ID: id, DesiredHash: "h-page"})
	}
	page = append(page, agent.Agent{ID: "00000000-0000-0000-0000-000000000009", DesiredHash: "h-page"}) // held by another task

	g.pushPage(context.Background(), laggingPage{agents: page})

	if agents.batchReads != 1 {
		t.Errorf("%d batch reads, want 1", agents.batchReads)
	}
	for _, id := range ids {
		if got := g.sessions.get(id).view.DesiredHash; got != "h-stored" {
			t.Errorf("agent %s: desired hash %q, want the stored h-stored", id, got)
		}
	}
}

// TestPoll_ReadsEveryPageOfTheIndex: a poll reads the lagging index to its
// last page (the first on its own goroutine, the rest ahead of the pushes),
// and every held agent on any page takes its stored desired state.
func TestPoll_ReadsEveryPageOfTheIndex(t *testing.T) {
	agents := newMemAgents()
	g, err := New(Config{Now: func() time.Time { return t0 }, Tokens: []string{token}, PollPageSize: 2}, agents, nil)
	must(t, err)
	var ids []string
	for i := range 5 {
		id := fmt.Sprintf("00000000-0000-0000-0000-00000000000%d", i+1)
		ids = append(ids, id)
		agents.setDesired(id, "h-"+id, "")
		g.sessions.put(&session{id: id, view: agent.Agent{ID: id}}) // plain HTTP: nothing is sent from the poll
	}

	g.Poll(context.Background())

	if agents.pages != 3 {
		t.Errorf("%d pages read, want 3 (5 agents, 2 a page)", agents.pages)
	}
	for _, id := range ids {
		if got := g.sessions.get(id).view.DesiredHash; got != "h-"+id {
			t.Errorf("agent %s: desired hash %q after the poll, want its stored one", id, got)
		}
	}
	agents.pages = 0
	for _, id := range ids {
		agents.setDesired(id, "", "")
	}
	g.Poll(context.Background())
	if agents.pages != 1 {
		t.Errorf("an empty index took %d reads, want 1", agents.pages)
	}
}

// counter is an ordered store version, as the DynamoDB store's counter.
type counter int

func (c counter) After(v any) bool {
	o, ok := v.(counter)
	return ok && c > o
}

// TestPushPage_TakesAListedStateThatIsNewer_SkipsAStaleOne_ReadsWhenUnknown:
// with ordered versions, an entry listed after the version whose desired
// state the session holds is taken from the page with no read (a wave's
// pushes must not wait for a read of every agent); one listed at or before
// it is stale and changes nothing; a session that holds no version reads
// the agent again.
func TestPushPage_TakesAListedStateThatIsNewer_SkipsAStaleOne_ReadsWhenUnknown(t *testing.T) {
	agents := newMemAgents()
	g, err := New(Config{Now: func() time.Time { return t0 }, Tokens: []string{token}}, agents, nil)
	must(t, err)
	newer, stale, unknown := "00000000-0000-0000-0000-000000000001", "00000000-0000-0000-0000-000000000002", "00000000-0000-0000-0000-000000000003"
	for _, id := range []string{newer, stale, unknown} {
		agents.setDesired(id, "h-stored", "")
	}
	g.sessions.put(&session{id: newer, view: agent.Agent{ID: newer, DesiredHash: "h-old"}, desiredAt: counter(4), stored: counter(4)})
	g.sessions.put(&session{id: stale, view: agent.Agent{ID: stale, DesiredHash: "h-new"}, desiredAt: counter(7)})
	g.sessions.put(&session{id: unknown, view: agent.Agent{ID: unknown}})
	page := laggingPage{
		agents:   []agent.Agent{{ID: newer, DesiredHash: "h-page"}, {ID: stale, DesiredHash: "h-page"}, {ID: unknown, DesiredHash: "h-page"}},
		versions: []any{counter(5), counter(7), counter(9)},
	}

	g.pushPage(context.Background(), page)

	if agents.batchReads != 0 || agents.loads != 1 {
		t.Errorf("%d batch reads and %d reads, want only the unknown session's read", agents.batchReads, agents.loads)
	}
	want := map[string]string{newer: "h-page", stale: "h-new", unknown: "h-stored"}
	for id, h := range want {
		if got := g.sessions.get(id).view.DesiredHash; got != h {
			t.Errorf("agent %s: desired hash %q, want %q", id, got, h)
		}
	}
	if s := g.sessions.get(newer); s.desiredAt != counter(5) || s.stored != counter(5) {
		t.Errorf("the newer entry's session holds version %v (stored %v), want the listed 5", s.desiredAt, s.stored)
	}
}

// TestPoll_CountsItsPushes_LooksAgainSoonWhilePushing: a poll that starts a
// push says so, and the next poll comes after a tenth of the interval (a
// wave's desired hashes arrive in chunks); a poll that finds nothing to
// send, or only what was sent already, waits the whole interval.
func TestPoll_CountsItsPushes_LooksAgainSoonWhilePushing(t *testing.T) {
	h := newHarness(t, newMemAgents(), func(c *Config) { c.PollInterval = time.Hour }) // Run's own poll never comes
	a := h.startAgent("ws", token)
	h.eventually("the agent recorded", func() bool { return h.agents.get(id1).Online })
	ctx := context.Background()
	if n := h.g.Poll(ctx); n != 0 {
		t.Fatalf("a poll with nothing lagging started %d pushes", n)
	}
	h.agents.setDesired(id1, "abcd01", "")
	if n := h.g.Poll(ctx); n != 1 {
		t.Fatalf("a poll with one held agent lagging started %d pushes, want 1", n)
	}
	if rc := receive(t, a.configs, "the remote configuration"); !bytes.Equal(rc.ConfigHash, hashA) {
		t.Fatalf("received %v", rc)
	}
	if n := h.g.Poll(ctx); n != 0 {
		t.Fatalf("a poll of an agent sent its configuration already started %d pushes", n)
	}
	if got := h.g.NextPoll(1); got != 6*time.Minute {
		t.Errorf("next poll after pushes in %v, want a tenth of the interval", got)
	}
	if got := h.g.NextPoll(0); got != time.Hour {
		t.Errorf("next poll after none in %v, want the interval", got)
	}
}

// Quick polls are bounded: a push that is started again at every poll (a
// send that keeps failing on an open connection) gets maxQuickPolls quick
// polls in a row, then a whole interval, and so on.
func TestPollPace_BoundsQuickPollsInARow(t *testing.T) {
	g, err := New(Config{Now: func() time.Time { return t0 }, Tokens: []string{token}, PollInterval: time.Second}, newMemAgents(), nil)
	must(t, err)
	p := pollPace{g: g}
	for round := 0; round < 2; round++ {
		for i := 0; i < maxQuickPolls; i++ {
			if d := p.next(1); d != 100*time.Millisecond {
				t.Fatalf("round %d, quick poll %d: next in %v, want 100ms", round, i, d)
			}
		}
		if d := p.next(1); d != time.Second {
			t.Fatalf("round %d: after %d quick polls next in %v, want the interval", round, maxQuickPolls, d)
		}
	}
	p.next(1)
	if d := p.next(0); d != time.Second || p.quick != 0 {
		t.Fatalf("a poll without pushes: next in %v (quick %d), want the interval and the count reset", d, p.quick)
	}
}

// listing is a DesiredListing over counter versions: it stands for the item
// over the session's version base alone.
type listing struct {
	n, base counter
}

func (l listing) After(v any) bool {
	switch o := v.(type) {
	case counter:
		return l.n > o
	case listing:
		return l.n > o.n
	}
	return false
}

func (l listing) Over(stored any) (any, bool) {
	if stored != l.base {
		return nil, false
	}
	return l.n, true
}

// TestPushPage_ListedDesiredStateAlone: a page that lists the desired state
// alone gives its sessions that state, and the listed version as the one to
// write over only when the listing stands for the item over the session's
// own version (DesiredListing.Over) and no write is in flight; a partial
// listing is never compared with the session's facts.
func TestPushPage_ListedDesiredStateAlone(t *testing.T) {
	agents := newMemAgents()
	g, err := New(Config{Now: func() time.Time { return t0 }, Tokens: []string{token}}, agents, nil)
	must(t, err)
	over, other, writing := "00000000-0000-0000-0000-000000000001", "00000000-0000-0000-0000-000000000002", "00000000-0000-0000-0000-000000000003"
	g.sessions.put(&session{id: over, view: agent.Agent{ID: over}, desiredAt: counter(4), stored: counter(4)})
	g.sessions.put(&session{id: other, view: agent.Agent{ID: other}, desiredAt: counter(4), stored: counter(4)})
	g.sessions.put(&session{id: writing, view: agent.Agent{ID: writing}, desiredAt: counter(4), stored: counter(4), writing: true})
	page := laggingPage{
		agents:   []agent.Agent{{ID: over, DesiredHash: "h"}, {ID: other, DesiredHash: "h"}, {ID: writing, DesiredHash: "h"}},
		versions: []any{listing{n: 6, base: 4}, listing{n: 6, base: 3}, listing{n: 6, base: 4}},
	}

	g.pushPage(context.Background(), page)

	if agents.batchReads != 0 || agents.loads != 0 {
		t.Errorf("%d batch reads and %d reads, want none", agents.batchReads, agents.loads)
	}
	wantStored := []any{counter(6), counter(4), counter(4)}
	for i, a := range page.agents {
		s := g.sessions.get(a.ID)
		if s.view.DesiredHash != "h" || s.desiredAt != page.versions[i] {
			t.Errorf("agent %s: desired %q at %v, want h at the listing", a.ID, s.view.DesiredHash, s.desiredAt)
		}
		if s.stored != wantStored[i] {
			t.Errorf("agent %s: writes over %v, want %v", a.ID, s.stored, wantStored[i])
		}
	}
}
