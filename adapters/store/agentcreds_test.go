package store

import (
	"sync"
	"testing"
	"time"
)

// Two first connections of one agent, on two gateway tasks at once: one
// binds its credential, the others are told the agent has one.
func TestBindCredential_ConcurrentFirstConnectionsBindOnce(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	for round := range 5 {
		id := "agent-race-" + string(rune('a'+round))
		const n = 8
		var wg sync.WaitGroup
		bound := make([]bool, n)
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				bound[i], errs[i] = s.BindCredential(ctx, id, digestOf(i), t0)
			})
		}
		wg.Wait()
		winners := 0
		for i := range n {
			must(t, errs[i])
			if bound[i] {
				winners++
				got, _, _, _, err := s.AgentCredential(ctx, id)
				must(t, err)
				if got != digestOf(i) {
					t.Fatalf("round %d: the winner %d bound %q, the store holds %q", round, i, digestOf(i), got)
				}
			}
		}
		if winners != 1 {
			t.Fatalf("round %d: %d first connections bound a credential, want exactly 1", round, winners)
		}
	}
}

// A binding creates an unknown agent, is kept by every other write of the
// item (the gateway's report over its version, the assignment, a report
// read and merged), and is refused once bound.
func TestBindCredential_KeptByOtherWrites(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	bound, err := s.BindCredential(ctx, "a1", digestOf(1), t0)
	must(t, err)
	if !bound {
		t.Fatal("the first binding of an unknown agent was refused")
	}
	r, err := s.GetAgentRecord(ctx, "a1")
	must(t, err)
	if r == nil || !r.AssignPending {
		t.Fatalf("the binding must create the agent, pending assignment: %+v", r)
	}
	// The gateway's session: a load, then a report written over its version.
	a, _, v, err := s.LoadAgent(ctx, "a1")
	must(t, err)
	a = agentOf("a1", "")
	v, err = s.SaveAgent(ctx, a, v)
	must(t, err)
	a.Health.Healthy = false
	_, err = s.SaveAgent(ctx, a, v)
	must(t, err)
	must(t, s.RecordAgent(ctx, agentOf("a1", "")))
	if again, err := s.BindCredential(ctx, "a1", digestOf(2), t0); err != nil || again {
		t.Fatalf("a second binding: bound %v, err %v; want refused", again, err)
	}
	got, next, at, _, err := s.AgentCredential(ctx, "a1")
	must(t, err)
	if got != digestOf(1) || next != "" || !at.Equal(t0) {
		t.Fatalf("credential after other writes: %q %q %v, want %q bound at %v", got, next, at, digestOf(1), t0)
	}
}

// Rotation: an offer is recorded beside the current credential, which stays
// valid until the agent presents the new one; then only the new one is.
func TestCredential_RotationAndReset(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	_, err := s.BindCredential(ctx, "a1", digestOf(1), t0)
	must(t, err)
	if ok, err := s.OfferCredential(ctx, "a1", digestOf(9), digestOf(2)); err != nil || ok {
		t.Fatalf("an offer over a credential the agent no longer has: ok %v err %v", ok, err)
	}
	ok, err := s.OfferCredential(ctx, "a1", digestOf(1), digestOf(2))
	must(t, err)
	if !ok {
		t.Fatal("the rotation's offer was not recorded")
	}
	// An offer lost with its connection is replaced by the next one.
	if ok, _ := s.OfferCredential(ctx, "a1", digestOf(1), digestOf(3)); !ok {
		t.Fatal("a new offer did not replace an unused one")
	}
	if ok, _ := s.PromoteCredential(ctx, "a1", digestOf(3), t0); !ok {
		t.Fatal("the replacing offer was not promoted")
	}
	_, err = s.OfferCredential(ctx, "a1", digestOf(3), digestOf(1))
	must(t, err)
	if ok, _ := s.PromoteCredential(ctx, "a1", digestOf(1), t0); !ok {
		t.Fatal("no rotation back")
	}
	_, err = s.OfferCredential(ctx, "a1", digestOf(1), digestOf(2))
	must(t, err)
	if cur, next, _, _, _ := s.AgentCredential(ctx, "a1"); cur != digestOf(1) || next != digestOf(2) {
		t.Fatalf("during the rotation: %q %q", cur, next)
	}
	later := t0.Add(time.Hour)
	ok, err = s.PromoteCredential(ctx, "a1", digestOf(2), later)
	must(t, err)
	if !ok {
		t.Fatal("the offered credential was not promoted")
	}
	if cur, next, at, _, _ := s.AgentCredential(ctx, "a1"); cur != digestOf(2) || next != "" || !at.Equal(later) {
		t.Fatalf("after the rotation: %q %q %v", cur, next, at)
	}
	if ok, _ := s.PromoteCredential(ctx, "a1", digestOf(2), later); ok {
		t.Fatal("a promotion of nothing offered")
	}

	found, had, err := s.ResetAgentCredential(ctx, "a1")
	must(t, err)
	if !found || !had {
		t.Fatalf("reset: found %v had %v", found, had)
	}
	if cur, _, _, _, _ := s.AgentCredential(ctx, "a1"); cur != "" {
		t.Fatalf("after the reset the agent still has %q", cur)
	}
	if found, had, _ := s.ResetAgentCredential(ctx, "a1"); !found || had {
		t.Fatalf("a second reset: found %v had %v, want found without a credential", found, had)
	}
	if found, _, _ := s.ResetAgentCredential(ctx, "nobody"); found {
		t.Fatal("an unknown agent was found")
	}
	if bound, _ := s.BindCredential(ctx, "a1", digestOf(4), later); !bound {
		t.Fatal("after a reset the agent could not enroll again")
	}
}

func digestOf(i int) string {
	return string(rune('a'+i)) + "0000000000000000000000000000000000000000000000000000000000000f"[1:]
}

// An operator's rotation request is kept on the agent, leaves its credential
// valid, survives the agent's other writes and is answered by the next offer.
func TestCredential_RotationRequest(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	if found, _, err := s.RequestCredentialRotation(ctx, "nobody"); err != nil || found {
		t.Fatalf("an unknown agent: found %v err %v", found, err)
	}
	must(t, s.RecordAgent(ctx, agentOf("a0", "")))
	if found, had, err := s.RequestCredentialRotation(ctx, "a0"); err != nil || !found || had {
		t.Fatalf("an agent without a credential: found %v had %v err %v", found, had, err)
	}
	if _, _, _, rotate, _ := s.AgentCredential(ctx, "a0"); rotate {
		t.Fatal("a rotation was requested for an agent without a credential")
	}
	_, err := s.BindCredential(ctx, "a1", digestOf(1), t0)
	must(t, err)
	found, had, err := s.RequestCredentialRotation(ctx, "a1")
	must(t, err)
	if !found || !had {
		t.Fatalf("request: found %v had %v", found, had)
	}
	if again, had, err := s.RequestCredentialRotation(ctx, "a1"); err != nil || !again || !had {
		t.Fatalf("a second request: found %v had %v err %v", again, had, err)
	}
	must(t, s.RecordAgent(ctx, agentOf("a1", "")))
	cur, next, at, rotate, err := s.AgentCredential(ctx, "a1")
	must(t, err)
	if cur != digestOf(1) || next != "" || !at.Equal(t0) || !rotate {
		t.Fatalf("after the request: %q %q %v rotate %v, want %q kept and a rotation requested", cur, next, at, rotate, digestOf(1))
	}
	if ok, _ := s.OfferCredential(ctx, "a1", digestOf(1), digestOf(2)); !ok {
		t.Fatal("the requested rotation's offer was not recorded")
	}
	if cur, next, _, rotate, _ := s.AgentCredential(ctx, "a1"); cur != digestOf(1) || next != digestOf(2) || rotate {
		t.Fatalf("after the offer: %q %q rotate %v, want the request answered", cur, next, rotate)
	}
}
