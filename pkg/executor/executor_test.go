package executor

import (
	"context"
	"testing"

	"github.com/myriarch/myriarch/pkg/rollout"
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
