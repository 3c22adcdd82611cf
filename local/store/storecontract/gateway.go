package storecontract

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/agent"
)

// GatewayStore is what the gateway's cases exercise: the agents as the
// gateway writes them, the lagging index and its acknowledgements, the
// agents' credentials and the gateway tasks' leases.
type GatewayStore interface {
	GetAgent(ctx context.Context, id string) (agent.Agent, bool, error)
	SaveAgent(ctx context.Context, a agent.Agent, version any) (any, error)
	DisconnectAgent(ctx context.Context, a agent.Agent, version any) (any, error)
	SetDesiredHash(ctx context.Context, ids []string, hash string) error
	SetPackageOffer(ctx context.Context, id, version string) error
	SetAgentTargetVersions(ctx context.Context, versions map[string]string) error
	AckPush(ctx context.Context, id, hash, offer string) error
	LaggingAgents(ctx context.Context, token string, limit int) ([]agent.Agent, []any, string, error)

	AgentCredential(ctx context.Context, id string) (digest, next string, boundAt time.Time, rotate bool, err error)
	BindCredential(ctx context.Context, id, digest string, at time.Time) (bool, error)
	OfferCredential(ctx context.Context, id, digest, next string) (bool, error)
	PromoteCredential(ctx context.Context, id, next string, at time.Time) (bool, error)
	RequestCredentialRotation(ctx context.Context, id string) (found, had bool, err error)
	ResetAgentCredential(ctx context.Context, id string) (found, had bool, err error)

	RenewLease(ctx context.Context, task string, started, until time.Time) error
	EndLease(ctx context.Context, task string, started, at time.Time) error
	Leases(ctx context.Context) (agent.Leases, error)
}

// connected is an agent's report at its connection at, on task.
func connected(id, task string, at time.Time) agent.Agent {
	return agent.Agent{ID: id, Online: true, Task: task, ConnectedAt: at, LastSeen: at, ServiceVersion: "0.1.0",
		Attributes: map[string]string{"host.name": id}}
}

func getAgent(t *testing.T, s Store, id string) agent.Agent {
	t.Helper()
	a, found, err := s.GetAgent(t.Context(), id)
	must(t, err)
	if !found {
		t.Fatalf("agent %s not found", id)
	}
	return a
}

func saveAgent(t *testing.T, s Store, a agent.Agent) {
	t.Helper()
	_, err := s.SaveAgent(t.Context(), a, nil)
	must(t, err)
}

// A report writes what the agent reported and keeps what others own (the
// desired hash, the package offer, the target version) as stored, whatever
// the report carries.
func saveKeepsTheDesiredState(t *testing.T, s Store) {
	ctx := t.Context()
	saveAgent(t, s, connected("g1", "task-a", t0))
	must(t, s.SetDesiredHash(ctx, []string{"g1"}, "h1"))
	must(t, s.SetPackageOffer(ctx, "g1", "0.2.0"))
	must(t, s.SetAgentTargetVersions(ctx, map[string]string{"g1": "0.2.0"}))
	report := connected("g1", "task-a", t0)
	report.ServiceVersion, report.LastSeen = "0.1.1", t0.Add(time.Minute)
	report.DesiredHash, report.PackageOffer, report.TargetVersion = "stale", "", "0.0.9" // a session's old view
	saveAgent(t, s, report)
	got := getAgent(t, s, "g1")
	if got.DesiredHash != "h1" || got.PackageOffer != "0.2.0" || got.TargetVersion != "0.2.0" {
		t.Fatalf("desired state after a report: hash %q offer %q target %q, want h1, 0.2.0, 0.2.0",
			got.DesiredHash, got.PackageOffer, got.TargetVersion)
	}
	if got.ServiceVersion != "0.1.1" || !got.LastSeen.Equal(t0.Add(time.Minute)) {
		t.Fatalf("the report was not written: %+v", got)
	}
}

// A disconnect, or a late report, of a connection the agent replaced
// (another task, a later connection) writes nothing; the current
// connection's disconnect writes the agent offline.
func disconnectYieldsToANewerConnection(t *testing.T, s Store) {
	ctx := t.Context()
	old := connected("g1", "task-a", t0)
	saveAgent(t, s, old)
	newer := connected("g1", "task-b", t0.Add(time.Second))
	saveAgent(t, s, newer)
	gone := old
	gone.Online, gone.LastSeen = false, t0.Add(2*time.Second)
	_, err := s.DisconnectAgent(ctx, gone, nil)
	must(t, err)
	late := old
	late.ServiceVersion = "0.0.1"
	saveAgent(t, s, late)
	if got := getAgent(t, s, "g1"); !got.Online || got.Task != "task-b" || !got.ConnectedAt.Equal(newer.ConnectedAt) || got.ServiceVersion != "0.1.0" {
		t.Fatalf("the old connection overwrote the newer one: %+v", got)
	}
	closed := newer
	closed.Online, closed.LastSeen = false, t0.Add(3*time.Second)
	_, err = s.DisconnectAgent(ctx, closed, nil)
	must(t, err)
	if got := getAgent(t, s, "g1"); got.Online || !got.LastSeen.Equal(closed.LastSeen) {
		t.Fatalf("after the current connection's disconnect: online %v, last seen %v", got.Online, got.LastSeen)
	}
}

// lagging follows the lagging index to its end, a page of limit 2 at a
// time, and returns the ids listed, sorted.
func lagging(t *testing.T, s Store) []string {
	t.Helper()
	var ids []string
	token := ""
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatal("the lagging index does not end")
		}
		page, _, next, err := s.LaggingAgents(t.Context(), token, 2)
		must(t, err)
		if len(page) > 2 {
			t.Fatalf("a page of %d agents, limit 2", len(page))
		}
		for _, a := range page {
			ids = append(ids, a.ID)
		}
		if token = next; token == "" {
			break
		}
	}
	slices.Sort(ids)
	return ids
}

func wantLagging(t *testing.T, s Store, want ...string) {
	t.Helper()
	if got := lagging(t, s); !slices.Equal(got, want) {
		t.Fatalf("lagging %v, want %v", got, want)
	}
}

// The lagging index lists exactly the agents whose desired hash or package
// offer is neither delivered (the last acknowledged, or a hash the agent
// newly reported) nor what the agent already reports.
func laggingListsExactlyWhatIsToDeliver(t *testing.T, s Store) {
	ctx := t.Context()
	report := func(id, hash, version string) {
		a := connected(id, "task-a", t0)
		a.RemoteConfig.Hash, a.ServiceVersion = hash, version
		saveAgent(t, s, a)
	}
	report("hash-ahead", "h0", "0.1.0")  // desired h1, runs h0: lagging
	report("hash-runs", "h1", "0.1.0")   // desired h1, reports h1
	report("hash-acked", "h0", "0.1.0")  // desired h1, h1 acknowledged
	report("hash-newer", "h0", "0.1.0")  // desired h2, h1 acknowledged: lagging
	report("rolled-back", "h1", "0.1.0") // desired h1, then reports h2: lagging again
	report("offer-ahead", "", "0.1.0")   // offered 0.2.0, runs 0.1.0: lagging
	report("offer-runs", "", "0.2.0")    // offered v0.2.0, runs 0.2.0
	report("offer-acked", "", "0.1.0")   // offered 0.2.0, acknowledged
	report("nothing", "h0", "0.1.0")     // nothing desired
	must(t, s.SetDesiredHash(ctx, []string{"hash-ahead", "hash-runs", "hash-acked", "rolled-back"}, "h1"))
	must(t, s.SetDesiredHash(ctx, []string{"hash-newer"}, "h2"))
	must(t, s.AckPush(ctx, "hash-acked", "h1", ""))
	must(t, s.AckPush(ctx, "hash-newer", "h1", ""))
	must(t, s.AckPush(ctx, "rolled-back", "h1", ""))
	report("rolled-back", "h2", "0.1.0") // a newly reported hash is delivered: the earlier h1 no longer is
	must(t, s.SetPackageOffer(ctx, "offer-ahead", "0.2.0"))
	must(t, s.SetPackageOffer(ctx, "offer-runs", "v0.2.0"))
	must(t, s.SetPackageOffer(ctx, "offer-acked", "0.2.0"))
	must(t, s.AckPush(ctx, "offer-acked", "", "0.2.0"))
	wantLagging(t, s, "hash-ahead", "hash-newer", "offer-ahead", "rolled-back")
}

// The acknowledgement of a push takes the agent out of the index; a new
// desired hash puts it back, and an acknowledgement of an unknown agent
// creates nothing.
func ackOfAPush(t *testing.T, s Store) {
	ctx := t.Context()
	saveAgent(t, s, connected("g1", "task-a", t0))
	must(t, s.SetDesiredHash(ctx, []string{"g1"}, "h1"))
	wantLagging(t, s, "g1")
	must(t, s.AckPush(ctx, "g1", "h1", ""))
	wantLagging(t, s)
	must(t, s.SetDesiredHash(ctx, []string{"g1"}, "h2"))
	wantLagging(t, s, "g1")
	must(t, s.AckPush(ctx, "g-none", "h1", "0.2.0"))
	if _, found, err := s.GetAgent(ctx, "g-none"); err != nil || found {
		t.Fatalf("an acknowledgement created an agent (found %v, %v)", found, err)
	}
}

func wantCredential(t *testing.T, s Store, id, digest, next string, rotate bool) {
	t.Helper()
	d, n, _, r, err := s.AgentCredential(t.Context(), id)
	must(t, err)
	if d != digest || n != next || r != rotate {
		t.Fatalf("credential of %s: %q next %q rotate %v; want %q next %q rotate %v", id, d, n, r, digest, next, rotate)
	}
}

// A credential binds to an agent that has none (creating an unknown
// agent): of two bindings, the second is refused and changes nothing.
func bindIsConditional(t *testing.T, s Store) {
	ctx := t.Context()
	wantCredential(t, s, "g1", "", "", false)
	if ok, err := s.BindCredential(ctx, "g1", "d1", t0); err != nil || !ok {
		t.Fatalf("the first binding: %v, %v", ok, err)
	}
	if ok, err := s.BindCredential(ctx, "g1", "d2", t0.Add(time.Second)); err != nil || ok {
		t.Fatalf("a second binding: %v, %v; want refused", ok, err)
	}
	wantCredential(t, s, "g1", "d1", "", false)
	_ = getAgent(t, s, "g1") // the binding created the agent
}

// A rotation offers next only to the holder of the current credential,
// answering an operator's request; the offer becomes the credential when
// presented, and the old one is gone. A reset forgets all of it.
func offerAndPromote(t *testing.T, s Store) {
	ctx := t.Context()
	saveAgent(t, s, connected("g1", "task-a", t0))
	if found, had, err := s.RequestCredentialRotation(ctx, "g1"); err != nil || !found || had {
		t.Fatalf("a rotation without a credential: found %v had %v (%v)", found, had, err)
	}
	wantCredential(t, s, "g1", "", "", false)
	must(t, second(s.BindCredential(ctx, "g1", "d1", t0)))
	if found, had, err := s.RequestCredentialRotation(ctx, "g1"); err != nil || !found || !had {
		t.Fatalf("a rotation: found %v had %v (%v)", found, had, err)
	}
	wantCredential(t, s, "g1", "d1", "", true)
	for _, bad := range [][2]string{{"d0", "n1"}, {"", "n1"}, {"d1", ""}} {
		if ok, err := s.OfferCredential(ctx, "g1", bad[0], bad[1]); err != nil || ok {
			t.Fatalf("an offer of %q while %q: %v, %v; want refused", bad[1], bad[0], ok, err)
		}
	}
	if ok, err := s.OfferCredential(ctx, "g1", "d1", "n1"); err != nil || !ok {
		t.Fatalf("the offer: %v, %v", ok, err)
	}
	wantCredential(t, s, "g1", "d1", "n1", false)
	if ok, err := s.PromoteCredential(ctx, "g1", "n2", t0.Add(time.Hour)); err != nil || ok {
		t.Fatalf("a promotion of what was not offered: %v, %v", ok, err)
	}
	if ok, err := s.PromoteCredential(ctx, "g1", "n1", t0.Add(time.Hour)); err != nil || !ok {
		t.Fatalf("the promotion: %v, %v", ok, err)
	}
	wantCredential(t, s, "g1", "n1", "", false)
	if _, _, at, _, _ := s.AgentCredential(ctx, "g1"); !at.Equal(t0.Add(time.Hour)) {
		t.Fatalf("bound at %v, want the promotion's time", at)
	}
	if ok, err := s.OfferCredential(ctx, "g1", "d1", "n3"); err != nil || ok {
		t.Fatalf("an offer to the replaced credential: %v, %v", ok, err)
	}
	if found, had, err := s.ResetAgentCredential(ctx, "g1"); err != nil || !found || !had {
		t.Fatalf("the reset: found %v had %v (%v)", found, had, err)
	}
	wantCredential(t, s, "g1", "", "", false)
	if found, _, err := s.ResetAgentCredential(ctx, "g-none"); err != nil || found {
		t.Fatalf("a reset of an unknown agent: found %v (%v)", found, err)
	}
}

// A task's lease is renewed by the process that holds it until it ends it;
// another process of the task id, or a renewal after the end, is
// rollout.ErrConflict and changes nothing.
func leaseRenewAndEnd(t *testing.T, s Store) {
	ctx := t.Context()
	started, other := t0, t0.Add(time.Second)
	must(t, s.RenewLease(ctx, "task-a", started, t0.Add(90*time.Second)))
	must(t, s.RenewLease(ctx, "task-a", started, t0.Add(120*time.Second)))
	wantConflict(t, "a renewal by another process", s.RenewLease(ctx, "task-a", other, t0.Add(time.Hour)))
	wantConflict(t, "an end by another process", s.EndLease(ctx, "task-a", other, t0.Add(time.Hour)))
	wantLease(t, s, "task-a", agent.Lease{Until: t0.Add(120 * time.Second)})
	must(t, s.EndLease(ctx, "task-a", started, t0.Add(100*time.Second)))
	wantConflict(t, "a renewal after the end", s.RenewLease(ctx, "task-a", started, t0.Add(time.Hour)))
	wantLease(t, s, "task-a", agent.Lease{Until: t0.Add(100 * time.Second), Ended: true})
	must(t, s.EndLease(ctx, "task-b", other, t0)) // a task that never renewed ends all the same
	wantLease(t, s, "task-b", agent.Lease{Until: t0, Ended: true})
}

func wantLease(t *testing.T, s Store, task string, want agent.Lease) {
	t.Helper()
	ls, err := s.Leases(t.Context())
	must(t, err)
	if got, ok := ls[task]; !ok || !got.Until.Equal(want.Until) || got.Ended != want.Ended {
		t.Fatalf("lease of %s: %+v (%v), want %+v", task, got, ok, want)
	}
}
