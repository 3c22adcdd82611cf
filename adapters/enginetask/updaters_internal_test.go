package enginetask

import (
	"context"
	"testing"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

type linked map[string]agent.Agent

func (l linked) LinkedUpdaters(_ context.Context, ids []string) (map[string]agent.Agent, error) {
	out := map[string]agent.Agent{}
	for _, id := range ids {
		if u, ok := l[id]; ok {
			out[id] = u
		}
	}
	return out, nil
}

// A version evaluation judges a collector that takes no packages itself with its
// linked updater's steps and package status (an INSTALL_FAILED there fails
// the target); a collector that takes its own, and every configuration
// evaluation, are judged on their own reports.
func TestEvaluate_CollectorsWithTheirUpdaters(t *testing.T) {
	failed := agent.PackageStatus{Version: "0.150.0", Status: agent.PackageInstallFailed, Error: "verifying: signature"}
	p := Evaluator{Updaters: linked{
		"c1": {ID: "u1", Update: &agent.UpdateComponent{Status: "failed"}, Package: failed},
		"c2": {ID: "u2", Package: failed},
	}}
	agents := map[string]agent.Agent{
		"c1": {ID: "c1", Capabilities: agent.CapabilityReportsHealth, ServiceVersion: "0.149.0"},
		"c2": {ID: "c2", Capabilities: agent.CapabilityReportsHealth | agent.CapabilityAcceptsPackages},
	}
	got, err := p.withUpdaters(context.Background(), rollout.Rollout{Kind: policy.KindVersion}, agents)
	if err != nil {
		t.Fatal(err)
	}
	if c1 := got["c1"]; c1.Package != failed || c1.Update == nil || c1.ServiceVersion != "0.149.0" {
		t.Errorf("c1 without its updater's reports: %+v", c1)
	}
	if got["c2"].Package == failed {
		t.Error("a collector that takes its own packages was judged with another agent's")
	}
	if agents["c1"].Update != nil {
		t.Error("the caller's map was changed")
	}
	cfg, _ := p.withUpdaters(context.Background(), rollout.Rollout{Kind: policy.KindConfig}, agents)
	if cfg["c1"].Update != nil {
		t.Error("a configuration evaluation took an updater's reports")
	}
}
