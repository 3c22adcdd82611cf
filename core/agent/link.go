package agent

import (
	"strings"

	"github.com/google/uuid"
)

// AttrLinkedCollector is the attribute with which a myriarch-updater names
// the collector it installs versions for: the collector's instance UID, as
// the updater reads it from the collector's OpAMP supervisor (or its own
// configuration). The updater is an OpAMP agent of its own; this attribute
// is the whole link. It is the updater's word: it decides where a
// collector's package offers go and whose steps its progress shows, never
// whether an update succeeded (that is the collector's own version).
const AttrLinkedCollector = "myriarch.updater.collector"

// CapabilityAcceptsPackages is OpAMP's AgentCapabilities_AcceptsPackages bit.
const CapabilityAcceptsPackages uint64 = 0x8

// LinkedCollector is the id of the collector this agent installs versions
// for, "" when it is not an updater (or names no valid instance UID).
func (a Agent) LinkedCollector() string {
	v := strings.TrimSpace(a.Attributes[AttrLinkedCollector])
	if v == "" {
		return ""
	}
	id, err := uuid.Parse(v)
	if err != nil || id == uuid.Nil {
		return ""
	}
	return id.String()
}

// IsUpdater reports whether the agent is a myriarch-updater linked to a
// collector: it belongs to no fleet and is never a rollout's target.
func (a Agent) IsUpdater() bool { return a.LinkedCollector() != "" }

// InstallsOwnPackages reports whether the agent takes package offers for
// itself (it declares AcceptsPackages: an updater built into the agent, as
// the simulated fleet's). Unknown capabilities count as taking them, so
// that agents recorded before capabilities were stored are served as before.
func (a Agent) InstallsOwnPackages() bool {
	return a.Capabilities == 0 || a.Capabilities&CapabilityAcceptsPackages != 0
}

// PickUpdater is the updater that serves a collector among those that name
// it (a reinstalled host may leave an old one behind): an online one before
// an offline one, then the one connected last, then the smallest id, so
// that every reader picks the same.
func PickUpdater(candidates []Agent) (Agent, bool) {
	var best Agent
	found := false
	for _, u := range candidates {
		switch {
		case !found:
		case u.Online != best.Online:
			if !u.Online {
				continue
			}
		case !u.ConnectedAt.Equal(best.ConnectedAt):
			if u.ConnectedAt.Before(best.ConnectedAt) {
				continue
			}
		case u.ID > best.ID:
			continue
		}
		best, found = u, true
	}
	return best, found
}

// WithUpdater is the collector as a version rollout judges it: its own
// reports, with the update steps and the package status that its linked
// updater reported (the collector's own version still decides success).
func (a Agent) WithUpdater(u Agent) Agent {
	a.Update, a.Package = u.Update, u.Package
	return a
}

// LinkUpdaters is, among agents, the updater that serves each collector of
// ids (PickUpdater among those that name it); collectors without one are
// absent. It is the rule a store's index lookup applies, for stores that
// hold every agent at hand.
func LinkUpdaters(agents []Agent, ids []string) map[string]Agent {
	named := map[string][]Agent{}
	for _, a := range agents {
		if c := a.LinkedCollector(); c != "" {
			named[c] = append(named[c], a)
		}
	}
	out := map[string]Agent{}
	for _, c := range ids {
		if u, ok := PickUpdater(named[c]); ok {
			out[c] = u
		}
	}
	return out
}
