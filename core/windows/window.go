// Package windows is the arithmetic of maintenance windows: when a target may
// start, in which time zone, and when the next window opens. All functions are
// pure; the caller passes the current time.
package windows

import (
	"time"
)

// TimeOfDay is a wall-clock time as minutes after midnight (0..1439).
type TimeOfDay int

// Window is one maintenance window of a policy.
//
// Days lists the weekdays on which the window begins; empty means every day.
// When End is not later than Start the window crosses midnight and ends on the
// next day; when End equals Start it lasts 24 hours of wall-clock time, from
// Start to the same time on the next day (23 or 25 real hours on the days of
// a DST change, so that a daily 00:00-00:00 window never closes). open.go
// says how wall times map to instants.
type Window struct {
	Days     []time.Weekday `json:"days,omitempty"`
	Start    TimeOfDay      `json:"start"`
	End      TimeOfDay      `json:"end"`
	Timezone string         `json:"timezone,omitempty"` // "" or "agent" means the agent's zone
}

// AgentZone is the zone name that makes a window follow the agent's time zone.
const AgentZone = "agent"

// Zones says how the time zone "agent" is resolved for one agent: the
// attribute named by Attribute, else PolicyDefault, else ServerDefault, else UTC.
type Zones struct {
	Attribute     string // timezoneAttribute of the policy (default site.timezone)
	PolicyDefault string // defaultTimezone of the policy
	ServerDefault string // the deployment's default zone (MYRIARCH_DEFAULT_TIMEZONE)
}
