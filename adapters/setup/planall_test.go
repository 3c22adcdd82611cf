package setup

import (
	"context"
	"errors"
	"testing"

	"github.com/myriarch/myriarch/adapters/plannertask"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/policy"
)

type twoFleets struct{}

func (twoFleets) Fleets(context.Context) ([]fleet.Fleet, string, error) {
	return []fleet.Fleet{{Name: "edge"}, {Name: "core"}}, "c1", nil
}

type plans []string

func (p *plans) PlanFleet(_ context.Context, f string, k policy.Kind) (plannertask.Reply, error) {
	*p = append(*p, f+"/"+string(k))
	if f == "edge" && k == policy.KindVersion {
		return plannertask.Reply{}, errors.New("throttled")
	}
	return plannertask.Reply{}, nil
}

func TestPlanAll_EveryFleetBothKinds_ErrorsDoNotStopOthers(t *testing.T) {
	var p plans
	runs, err := PlanAll(context.Background(), twoFleets{}, &p)
	want := []string{"edge/config", "edge/version", "core/config", "core/version"}
	if runs != 4 || len(p) != 4 || err == nil {
		t.Fatalf("runs %d plans %v err %v, want %v and the error of edge/version", runs, p, err, want)
	}
	for i := range want {
		if p[i] != want[i] {
			t.Fatalf("plans %v, want %v", p, want)
		}
	}
}
