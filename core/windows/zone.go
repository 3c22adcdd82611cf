package windows

import "time"

// DefaultZoneAttribute is the agent attribute that holds the agent's zone when
// the policy names none (timezoneAttribute).
const DefaultZoneAttribute = "site.timezone"

// Attributes is the attribute view of an agent (agent.Agent, selector.Map).
type Attributes interface {
	Attr(name string) (string, bool)
}

// Resolve returns the zone that "agent" means for one agent, taking the first
// of these that is a valid IANA zone: the attribute named by z.Attribute,
// z.PolicyDefault, z.ServerDefault, UTC. "Local" is never valid (LoadZone), so
// an agent that reports it falls through like any other bad value. It never
// returns nil.
func (z Zones) Resolve(attrs Attributes) *time.Location {
	name := z.Attribute
	if name == "" {
		name = DefaultZoneAttribute
	}
	if attrs != nil {
		if v, ok := attrs.Attr(name); ok {
			if loc, err := LoadZone(v); err == nil {
				return loc
			}
		}
	}
	for _, fallback := range [...]string{z.PolicyDefault, z.ServerDefault} {
		if loc, err := LoadZone(fallback); err == nil {
			return loc
		}
	}
	return time.UTC
}

// ZoneFor returns the zone in which w is evaluated: its own timezone, or
// agentZone (from Zones.Resolve) when that is "" or "agent". A nil agentZone
// counts as UTC, the last step of the resolution order.
func ZoneFor(w Window, agentZone *time.Location) (*time.Location, error) {
	if w.Timezone == "" || w.Timezone == AgentZone {
		if agentZone == nil {
			return time.UTC, nil
		}
		return agentZone, nil
	}
	return LoadZone(w.Timezone)
}
