package gateway

import (
	"bytes"
	"context"
	"encoding/hex"
	"testing"
	"time"

	"github.com/open-telemetry/opamp-go/protobufs"

	"github.com/myriarch/myriarch/adapters/store"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/local/storetest"
)

var (
	_ Agents    = (*store.Store)(nil)
	_ PushAcker = (*store.Store)(nil)
	_ Configs   = (*store.Store)(nil)
)

// TestGateway_WithStore runs a real opamp-go client through the gateway
// into adapters/store on DynamoDB Local: recorded, pushed through the lagging
// index, acknowledged out of it, offered a package, quiet heartbeats cost
// nothing, offline on close.
func TestGateway_WithStore(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	h := startHarness(t, st)
	get := func() agent.Agent {
		a, _, err := st.GetAgent(ctx, id1)
		must(t, err)
		return a
	}
	a := h.startAgent("ws", token)
	h.eventually("the agent recorded", func() bool { return get().Health.Status == agent.StatusOK })
	if got := get(); !got.Online || got.ServiceVersion != "0.110.0" || got.Attributes["host.name"] != "host-1" {
		t.Fatalf("recorded %+v", got)
	}

	must(t, st.SetDesiredHash(ctx, []string{id1}, "abcd01"))
	rc := receive(t, a.configs, "the remote configuration")
	if !bytes.Equal(rc.ConfigHash, hashA) {
		t.Fatalf("received %v", rc)
	}
	must(t, a.c.SetRemoteConfigStatus(&protobufs.RemoteConfigStatus{LastRemoteConfigHash: rc.ConfigHash, Status: applied}))
	h.eventually("APPLIED recorded", func() bool { return get().RemoteConfig.Status == agent.ConfigApplied })
	h.eventually("out of the lagging index", func() bool {
		page, _, _, err := st.LaggingAgents(ctx, "", 10)
		return err == nil && len(page) == 0
	})

	must(t, st.SetPackageOffer(ctx, id1, "0.111.0"))
	if offer := receive(t, a.offers, "the package offer"); offer.Packages[""].GetVersion() != "0.111.0" {
		t.Fatalf("offer %v", offer)
	}
	// The offer's acknowledgement is written after the send, on a goroutine
	// of its own: wait for it, so that it is not counted below.
	h.eventually("the offer acknowledged", func() bool {
		page, _, _, err := st.LaggingAgents(ctx, "", 10)
		return err == nil && len(page) == 0
	})

	// The first agent goes: offline in the store once its connection closes.
	// It goes before the writes are counted below, which would otherwise
	// count its own late writes too (its report of the offer, the ack).
	must(t, a.stop())
	h.eventually("offline in the store", func() bool { return !get().Online })

	// Reports that change nothing cost nothing: no read, no write, ever.
	uid2 := bytes.Repeat([]byte{2}, 16)
	as2 := func(m *protobufs.AgentToServer) *protobufs.AgentToServer { m.InstanceUid = uid2; return m }
	w, _, err := h.dialWS(token)
	must(t, err)
	w.send(as2(msg(withVersion("0.110.0"))))
	st.ResetUsage()
	for range 20 {
		h.clock.advance(30 * time.Second)
		w.send(as2(msg()))
	}
	if u := st.Usage(); u.ItemsWritten != 0 || u.ItemsRead != 0 {
		t.Errorf("20 quiet heartbeats cost %s, want nothing", u)
	}
	// A changed report is one write on the version the session holds.
	w.send(as2(msg(withVersion("0.111.0"))))
	if u := st.Usage(); u.ItemsWritten != 1 || u.ItemsRead != 0 {
		t.Errorf("a changed report cost %s, want 1 write and no read", u)
	}
}

// TestGateway_SeveralTasks runs two gateway tasks over one store: the agent
// holds a connection to the second; a desired state written through the
// store (as the engine writes it) reaches the agent from that task, through
// the lagging index, while the first task, which does not hold the agent,
// sends nothing and leaves it in the index.
func TestGateway_SeveralTasks(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	first := startHarness(t, st)
	second := startHarness(t, st)
	a := second.startAgent("ws", token)
	second.eventually("the agent recorded", func() bool {
		got, _, err := st.GetAgent(ctx, id1)
		return err == nil && got.Online
	})
	if first.g.Len() != 0 || second.g.Len() != 1 {
		t.Fatalf("sessions: first %d, second %d; want the agent on the second task only", first.g.Len(), second.g.Len())
	}
	must(t, st.SetDesiredHash(ctx, []string{id1}, "abcd02"))
	rc := receive(t, a.configs, "the remote configuration from the task that holds the agent")
	if want, _ := hex.DecodeString("abcd02"); !bytes.Equal(rc.ConfigHash, want) {
		t.Fatalf("received %x, want abcd02", rc.ConfigHash)
	}
	if first.logged("INFO", "push configuration") {
		t.Fatal("the task that does not hold the agent pushed to it")
	}
}

// TestGateway_MovedAgentAndDeadTask runs two tasks over DynamoDB Local: the
// agent moves from the first task to the second before its old connection
// is seen to close, and that late close does not take it offline; then the
// second task dies (no renewal, no drain) and the readers' rule over the
// stored leases takes the agent offline when the lease runs out.
func TestGateway_MovedAgentAndDeadTask(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	first, second := startHarness(t, st), startHarness(t, st)
	first.g.RenewLease(ctx)
	second.g.RenewLease(ctx)
	old, _, err := first.dialWS(token)
	must(t, err)
	old.send(msg(withVersion("1.0")))
	second.clock.advance(time.Second)
	moved, _, err := second.dialWS(token)
	must(t, err)
	moved.send(msg(withVersion("1.0")))
	_ = old.conn.Close()
	first.eventually("the old connection closed", func() bool { return first.g.Len() == 0 })
	first.g.waitWrites(ctx)
	got, _, err := st.GetAgent(ctx, id1)
	must(t, err)
	if !got.Online || got.Task != second.g.Task() {
		t.Fatalf("after the late close of the old connection: online %v on %q, want online on %q", got.Online, got.Task, second.g.Task())
	}
	live := agent.Liveness{Silence: 90 * time.Second, ReconnectGrace: 10 * time.Second, Source: st}
	judge := func(at time.Time) bool {
		l, err := live.Snapshot(ctx)
		must(t, err)
		online, _ := l.Online(got, at)
		return online
	}
	// second renewed at t0: its lease runs until t0 + 90 s.
	if !judge(t0.Add(90 * time.Second)) {
		t.Error("offline while its task's lease lives")
	}
	if judge(t0.Add(90*time.Second + time.Millisecond)) {
		t.Error("online after its task's lease ran out")
	}
}
