package executor

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/rollout"
)

type offers map[string]string

func (o offers) SetPackageOffer(_ context.Context, id, v string) error { o[id] = v; return nil }

func TestManual_StartsWithoutCalls(t *testing.T) {
	ref, err := ManualExecutor{}.Start(context.Background(), Call{Target: rollout.Target{AgentID: "a"}, Version: "0.161.0", Operation: OpStart})
	if err != nil || ref != "manual" {
		t.Fatalf("ref %q err %v, want manual", ref, err)
	}
}

func TestUpdater_RecordsAndWithdrawsTheOffer(t *testing.T) {
	o := offers{}
	u := UpdaterExecutor{Offers: o}
	ctx := context.Background()
	if ref, err := u.Start(ctx, Call{Target: rollout.Target{AgentID: "a"}, Version: "0.161.0"}); err != nil || ref != "updater" || o["a"] != "0.161.0" {
		t.Fatalf("start: ref %q err %v offers %v", ref, err, o)
	}
	if _, err := u.Start(ctx, Call{Target: rollout.Target{AgentID: "a", Attempt: 2}, Version: "0.161.0"}); err != nil || o["a"] != "0.161.0#2" {
		t.Fatalf("retry: err %v offers %v, want the offer key of attempt 2", err, o)
	}
	if err := u.Cancel(ctx, Call{Target: rollout.Target{AgentID: "a"}, Operation: OpCancel}); err != nil || o["a"] != "" {
		t.Fatalf("cancel: err %v offers %v", err, o)
	}
	if err := (UpdaterExecutor{}).Validate(ctx, rollout.Rollout{}); err == nil {
		t.Fatal("an updater without an offer store is misconfigured")
	}
}

func TestRegistry_UnknownExecutor(t *testing.T) {
	reg := Registry{Manual: ManualExecutor{}}
	if _, err := reg.For("webhook"); err == nil {
		t.Fatal("an unknown executor must be refused")
	}
}

type updaters map[string]agent.Agent

func (u updaters) LinkedUpdaters(_ context.Context, ids []string) (map[string]agent.Agent, error) {
	out := map[string]agent.Agent{}
	for _, id := range ids {
		if a, ok := u[id]; ok {
			out[id] = a
		}
	}
	return out, nil
}

// A collector that takes no packages itself gets its offer only when a
// myriarch-updater names it; without one, Start fails at once and offers
// nothing. A collector that takes packages itself needs no updater.
func TestUpdater_StartNeedsSomeoneToTakeTheOffer(t *testing.T) {
	const health = agent.CapabilityReportsHealth
	o := offers{}
	u := UpdaterExecutor{Offers: o, Updaters: updaters{"linked": {ID: "upd"}}}
	call := func(id string, caps uint64) Call {
		return Call{Target: rollout.Target{AgentID: id, Attempt: 1}, Version: "0.150.0",
			Agent: agent.Agent{ID: id, Capabilities: caps, Attributes: map[string]string{"host.name": "vm-" + id}}}
	}
	if _, err := u.Start(context.Background(), call("alone", health)); !errors.Is(err, ErrNoUpdater) ||
		!strings.Contains(err.Error(), "vm-alone") || !strings.Contains(err.Error(), agent.AttrLinkedCollector) {
		t.Fatalf("a collector without an updater: %v", err)
	}
	if _, offered := o["alone"]; offered {
		t.Fatal("an offer was recorded that nobody takes")
	}
	if _, err := u.Start(context.Background(), call("linked", health)); err != nil || o["linked"] != "0.150.0" {
		t.Fatalf("a collector with a linked updater: %v, offer %q", err, o["linked"])
	}
	if _, err := u.Start(context.Background(), call("self", health|agent.CapabilityAcceptsPackages)); err != nil || o["self"] != "0.150.0" {
		t.Fatalf("a collector that takes its own packages: %v, offer %q", err, o["self"])
	}
}
