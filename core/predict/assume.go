package predict

import (
	"fmt"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

// assumptions are what the prediction took for granted, in the words the
// plan shows.
func assumptions(r rollout.Rollout, ts []rollout.Target, agents map[string]agent.Agent, apply ApplyTime, tr trace) []string {
	out := []string{applyAssumption(r.Kind, apply)}
	if r.Policy.Health != nil {
		out = append(out, "every reading of the health gates is green (a red one would stop its stage); bakes last as long as the policy says")
	}
	if len(tr.approvals) > 0 {
		a := "each approval is given the moment it is asked for: the times after it are offsets from it"
		if len(r.Policy.MaintenanceWindows) > 0 {
			a += "; a later approval may move what follows into a later maintenance window"
		}
		out = append(out, a)
	}
	if n := offline(ts, agents); n > 0 {
		out = append(out, fmt.Sprintf("%d agent(s) offline now stay offline and are skipped offlineGracePeriod (%s) after their wave or stage starts",
			n, shortDuration(r.Policy.OfflineGracePeriod)))
	}
	return append(out, "the fleet keeps its agents: none joins (a straggler) or leaves during the rollout")
}

func applyAssumption(k policy.Kind, a ApplyTime) string {
	what := "configuration"
	if k == policy.KindVersion {
		what = "version"
	}
	if a.Source == SourceHistory {
		return fmt.Sprintf("every agent reports the new %s %s after its start, the median of %d targets of this fleet's recent rollouts (%s, their 90th percentile, for the pessimistic finish), and stays healthy",
			what, shortDuration(a.Median), a.Samples, shortDuration(a.P90))
	}
	return fmt.Sprintf("every agent reports the new %s %s after its start, the default (the fleet has %d of the %d targets of history it takes; %s for the pessimistic finish), and stays healthy",
		what, shortDuration(a.Median), a.Samples, MinSamples, shortDuration(a.P90))
}

// offline counts the targets yet to start whose agents are offline or gone.
func offline(ts []rollout.Target, agents map[string]agent.Agent) int {
	n := 0
	for _, t := range ts {
		if !t.Status.NotStarted() {
			continue
		}
		if a, ok := agents[t.AgentID]; !ok || !a.Online {
			n++
		}
	}
	return n
}

func hasPercentWave(r rollout.Rollout) bool {
	for _, w := range r.Waves {
		if w.Percent > 0 {
			return true
		}
	}
	return false
}

// shortDuration writes a duration as a person does: 20s, 1m30s, 2m, 1h,
// to the tenth of a second below a minute (2.4s).
func shortDuration(d time.Duration) string {
	if d < time.Minute {
		d = d.Round(100 * time.Millisecond)
	} else {
		d = d.Round(time.Second)
	}
	s := d.String()
	for _, suffix := range []string{"m0s", "h0m"} {
		if len(s) > len(suffix) && s[len(s)-len(suffix):] == suffix {
			s = s[:len(s)-len(suffix)+1]
		}
	}
	return s
}
