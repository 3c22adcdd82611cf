package fleet

import (
	"time"

	"github.com/myriarch/myriarch/core/agent"
)

// Counts are a fleet's statistics, as GET /fleets/{name} shows them.
type Counts struct {
	Total            int // members that are not gone
	Online           int // of those, online by the liveness rule
	OnTargetVersion  int // reporting the fleet's effective target version
	OnConfigHash     int // running the fleet's assigned configuration (APPLIED)
	Drifted          int // reporting another configuration than the one desired for them
	Gone             int // members offline for longer than the retention (not in Total)
	AssignmentErrors int // agents this fleet selects that have an assignment error (not members)
}

// Count computes the statistics of fleet f from its members, the agents
// with an assignment error (the fleet counts those its selector matches),
// its effective target version and the liveness rule at now.
func Count(f Fleet, members, errored []agent.Agent, targetVersion string, live agent.Liveness, now time.Time) Counts {
	var c Counts
	for _, a := range members {
		if live.Gone(a, now) {
			c.Gone++
			continue
		}
		c.Total++
		if online, _ := live.Online(a, now); online {
			c.Online++
		}
		if targetVersion != "" && a.ServiceVersion == targetVersion {
			c.OnTargetVersion++
		}
		rc := a.RemoteConfig
		if f.Config.Hash != "" && rc.Hash == f.Config.Hash && rc.Status == agent.ConfigApplied {
			c.OnConfigHash++
		}
		if a.DesiredHash != "" && rc.Hash != a.DesiredHash {
			c.Drifted++
		}
	}
	for _, a := range errored {
		if a.AssignmentError != "" && f.Selector.Matches(a) {
			c.AssignmentErrors++
		}
	}
	return c
}
