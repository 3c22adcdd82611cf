package engine

import (
	"fmt"
	"slices"
	"time"

	"github.com/myriarch/myriarch/pkg/freeze"
	"github.com/myriarch/myriarch/pkg/rollout"
)

// frozen holds stage s, before it starts, while a freeze of one of its
// regions is active (pkg/freeze). The stage and the rollout show frozen, the
// rollout's reason names the freeze and its end, and the stage starts by
// itself when the freeze ends. A freeze override bypasses every freeze.
func (p *pass) frozen(s int) bool {
	st := &p.r.Stages[s]
	var h freeze.Hold
	held := false
	if p.r.FreezeOverride == nil && len(p.r.Policy.Freezes) > 0 {
		h, held = freeze.Active(p.r.Policy.Freezes, p.stageRegions(s), p.now)
	}
	if !held {
		if st.Status == rollout.StageFrozen {
			st.Status, st.Held = rollout.StagePending, ""
			p.emit("rollout.unfrozen", fmt.Sprintf("stage %s is no longer held by a freeze", st.Name))
		}
		if p.r.Status == rollout.Frozen {
			p.r.Status, p.r.StatusReason = rollout.Running, ""
		}
		return false
	}
	what := fmt.Sprintf("freeze %q (%s) until %s", h.Freeze.Name, h.Names(), h.Until.UTC().Format(time.RFC3339))
	if st.Status != rollout.StageFrozen || st.Held != what {
		st.Status, st.Held = rollout.StageFrozen, what
		p.emit("rollout.frozen", fmt.Sprintf("stage %s held by %s", st.Name, what))
	}
	p.r.Status = rollout.Frozen
	p.r.StatusReason = fmt.Sprintf("stage %s held by %s", st.Name, what)
	p.dl.at(h.Until)
	return true
}

// stageRegions lists the regions of stage s: those of its passes when the
// wave splits by region or zone, else the regions its agents report.
func (p *pass) stageRegions(s int) []string {
	var out []string
	for _, ps := range p.r.Stages[s].Passes {
		if ps.Region != "" && !slices.Contains(out, ps.Region) {
			out = append(out, ps.Region)
		}
	}
	if len(out) > 0 {
		return out
	}
	attr := p.r.Policy.Topology.RegionAttribute
	for i := range p.ts {
		if p.ts[i].Stage != s {
			continue
		}
		if r := p.agents[p.ts[i].AgentID].Attributes[attr]; r != "" && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}
