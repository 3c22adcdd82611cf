package api

import (
	"testing"

	"github.com/myriarch/myriarch/pkg/planner"
	"github.com/myriarch/myriarch/pkg/rollout"
)

// The reply crosses the Lambda boundary: what the API reports of a
// decision must survive the round trip.
func TestPlanReply_RoundTripKeepsWhatTheAPIReports(t *testing.T) {
	d := planner.Decision{Target: "0.162.0", Note: "n",
		Created:    &planner.Active{Rollout: rollout.Rollout{ID: "r-new"}, Targets: make([]rollout.Target, 4)},
		Ended:      &planner.Ended{Rollout: rollout.Rollout{ID: "r-old"}},
		Stragglers: make([]rollout.Target, 2)}
	back := ReplyOf(d).Decision()
	if back.Target != "0.162.0" || back.Note != "n" || back.Created.Rollout.ID != "r-new" || len(back.Created.Targets) != 4 ||
		back.Ended.Rollout.ID != "r-old" || len(back.Stragglers) != 2 || back.Updated != nil {
		t.Errorf("round trip %+v", back)
	}
	upd := ReplyOf(planner.Decision{Updated: &rollout.Rollout{ID: "r-1"}}).Decision()
	if upd.Updated == nil || upd.Updated.ID != "r-1" || upd.Created != nil || upd.Ended != nil {
		t.Errorf("updated round trip %+v", upd)
	}
}
