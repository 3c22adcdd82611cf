package store

import (
	"fmt"
	"testing"

	"github.com/myriarch/myriarch/core/agent"
)

// A batch of reports is one transaction; one whose agent was written
// meanwhile (a rollout set its desired hash) fails it, and then every
// report is written alone: the others on their versions, that one merged
// over what was written, so nothing is lost either way.
func TestSaveAgents_OneTransactionElseEachAlone(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	ids := []string{"a1", "a2", "a3"}
	as, vs := make([]agent.Agent, 3), make([]any, 3)
	for i, id := range ids {
		seed(t, s, agentOf(id, "edge"))
		a, _, v, err := s.LoadAgent(ctx, id)
		must(t, err)
		as[i], vs[i] = a, v
	}
	report := func(round int) {
		for i := range as {
			as[i].RemoteConfig = agent.RemoteConfigStatus{Hash: fmt.Sprintf("h%d", round), Status: agent.ConfigApplied, Since: t0}
		}
	}

	report(1)
	s.ResetUsage()
	next, errs := s.SaveAgents(ctx, as, vs)
	if u := s.Usage(); u.Requests != 1 || u.ItemsWritten != 3 {
		t.Fatalf("usage %s, want one transaction of 3", u)
	}
	for i := range ids {
		must(t, errs[i])
		vs[i] = next[i]
	}

	must(t, s.SetDesiredHash(ctx, []string{"a2"}, "h9")) // written meanwhile
	report(2)
	next, errs = s.SaveAgents(ctx, as, vs)
	for i, id := range ids {
		must(t, errs[i])
		r, err := s.GetAgentRecord(ctx, id)
		must(t, err)
		if r.RemoteConfig.Hash != "h2" {
			t.Fatalf("%s reports %q, want h2", id, r.RemoteConfig.Hash)
		}
		if id == "a2" && r.DesiredHash != "h9" {
			t.Fatalf("a2's desired hash %q, want h9 kept", r.DesiredHash)
		}
		vs[i] = next[i]
	}

	// the versions returned are current: the next batch is one transaction again
	report(3)
	s.ResetUsage()
	if _, errs = s.SaveAgents(ctx, as, vs); errs[0] != nil || errs[1] != nil || errs[2] != nil {
		t.Fatalf("errors %v", errs)
	}
	if u := s.Usage(); u.Requests != 1 {
		t.Fatalf("usage %s, want one transaction", u)
	}
}

// A batch that names an agent twice is written in order: the later report
// is what stays.
func TestSaveAgents_TwiceInOrder(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	seed(t, s, agentOf("a1", "edge"))
	a, _, v, err := s.LoadAgent(ctx, "a1")
	must(t, err)
	first, second := a, a
	first.ServiceVersion, second.ServiceVersion = "0.1", "0.2"
	_, errs := s.SaveAgents(ctx, []agent.Agent{first, second}, []any{v, v})
	must(t, errs[0])
	must(t, errs[1])
	got, _, err := s.GetAgent(ctx, "a1")
	must(t, err)
	if got.ServiceVersion != "0.2" {
		t.Fatalf("version %q, want the later report's 0.2", got.ServiceVersion)
	}
}
