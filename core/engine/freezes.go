package engine

import (
	"fmt"
	"slices"
	"time"

	"github.com/myriarch/myriarch/core/freeze"
	"github.com/myriarch/myriarch/core/rollout"
)

// frozen holds stage s, before it starts, while a freeze of one of its
// regions is active (core/freeze). The stage and the rollout show frozen, the
// rollout's reason names the freeze and its end, and the stage starts by
// itself when the freeze ends. A freeze override bypasses every freeze.
func (e *evaluation) frozen(s int) bool {
	st := &e.r.Stages[s]
	var h freeze.Hold
	held := false
	if e.r.FreezeOverride == nil && len(e.r.Policy.Freezes) > 0 {
		h, held = freeze.Active(e.r.Policy.Freezes, e.stageRegions(s), e.now)
	}
	if !held {
		if st.Status == rollout.StageFrozen {
			st.Status, st.Held = rollout.StagePending, ""
			e.emit(rollout.EventUnfrozen, fmt.Sprintf("stage %s is no longer held by a freeze", st.Name))
		}
		if e.r.Status == rollout.Frozen {
			e.r.Status, e.r.StatusReason = rollout.Running, ""
		}
		return false
	}
	what := fmt.Sprintf("freeze %q (%s) until %s", h.Freeze.Name, h.Names(), h.Until.UTC().Format(time.RFC3339))
	if st.Status != rollout.StageFrozen || st.Held != what {
		st.Status, st.Held = rollout.StageFrozen, what
		e.emit(rollout.EventFrozen, fmt.Sprintf("stage %s held by %s", st.Name, what))
	}
	e.r.Status = rollout.Frozen
	e.r.StatusReason = fmt.Sprintf("stage %s held by %s", st.Name, what)
	e.dl.at(h.Until)
	return true
}

// stageRegions lists the regions of stage s: those of its passes when the
// wave splits by region or zone, else the regions its agents report.
func (e *evaluation) stageRegions(s int) []string {
	var out []string
	for _, ps := range e.r.Stages[s].Passes {
		if ps.Region != "" && !slices.Contains(out, ps.Region) {
			out = append(out, ps.Region)
		}
	}
	if len(out) > 0 {
		return out
	}
	attr := e.r.Policy.Topology.RegionAttribute
	for _, t := range e.all.inStage(s) {
		a, _ := e.agent(t.AgentID)
		if r := a.Attributes[attr]; r != "" && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}
