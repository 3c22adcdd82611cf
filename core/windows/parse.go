package windows

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	// The embedded IANA database: zones load on hosts without zoneinfo
	// (minimal Lambda and container images) instead of failing there.
	_ "time/tzdata"
)

// MinutesPerDay bounds TimeOfDay: valid values are 0..MinutesPerDay-1.
const MinutesPerDay = 24 * 60

// ParseTimeOfDay reads exactly "HH:MM" from 00:00 to 23:59, two digits each.
// "24:00" is refused: a window that ends at midnight is written "00:00".
func ParseTimeOfDay(s string) (TimeOfDay, error) {
	if len(s) != 5 || s[2] != ':' || !digits(s[0:2]) || !digits(s[3:5]) {
		return 0, fmt.Errorf("time of day %q: want HH:MM with two digits each, from 00:00 to 23:59", s)
	}
	h := int(s[0]-'0')*10 + int(s[1]-'0')
	m := int(s[3]-'0')*10 + int(s[4]-'0')
	if h > 23 {
		return 0, fmt.Errorf("time of day %q: hour %02d is out of range 00..23 (midnight is 00:00)", s, h)
	}
	if m > 59 {
		return 0, fmt.Errorf("time of day %q: minute %02d is out of range 00..59", s, m)
	}
	return TimeOfDay(h*60 + m), nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Valid reports whether t is a time of day (00:00..23:59).
func (t TimeOfDay) Valid() bool { return t >= 0 && t < MinutesPerDay }

// String is "HH:MM"; an out-of-range value shows as "invalid(n)".
func (t TimeOfDay) String() string {
	if !t.Valid() {
		return fmt.Sprintf("invalid(%d)", int(t))
	}
	return fmt.Sprintf("%02d:%02d", int(t)/60, int(t)%60)
}

// MarshalJSON writes "HH:MM".
func (t TimeOfDay) MarshalJSON() ([]byte, error) {
	if !t.Valid() {
		return nil, fmt.Errorf("time of day %d: out of range 0..%d minutes", int(t), MinutesPerDay-1)
	}
	return json.Marshal(t.String())
}

// UnmarshalJSON reads "HH:MM".
func (t *TimeOfDay) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("time of day: want a string \"HH:MM\": %w", err)
	}
	v, err := ParseTimeOfDay(s)
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// weekdayNames are the only spellings a policy accepts, indexed by time.Weekday.
var weekdayNames = [7]string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}

// ParseWeekday reads exactly one of Mon Tue Wed Thu Fri Sat Sun.
func ParseWeekday(s string) (time.Weekday, error) {
	for d, name := range weekdayNames {
		if s == name {
			return time.Weekday(d), nil
		}
	}
	return 0, fmt.Errorf("weekday %q: want one of Mon, Tue, Wed, Thu, Fri, Sat, Sun", s)
}

// WeekdayName is the policy's spelling of d ("Mon"); an out-of-range value
// shows as "invalid(n)".
func WeekdayName(d time.Weekday) string {
	if d < time.Sunday || d > time.Saturday {
		return fmt.Sprintf("invalid(%d)", int(d))
	}
	return weekdayNames[d]
}

// windowJSON is the wire form of Window: weekday names instead of numbers.
type windowJSON struct {
	Days     []string  `json:"days,omitempty"`
	Start    TimeOfDay `json:"start"`
	End      TimeOfDay `json:"end"`
	Timezone string    `json:"timezone,omitempty"`
}

// MarshalJSON writes days as ["Mon", ...] and start and end as "HH:MM".
func (w Window) MarshalJSON() ([]byte, error) {
	out := windowJSON{Start: w.Start, End: w.End, Timezone: w.Timezone}
	for _, d := range w.Days {
		if d < time.Sunday || d > time.Saturday {
			return nil, fmt.Errorf("window day %d: out of range", int(d))
		}
		out.Days = append(out.Days, weekdayNames[d])
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads the form MarshalJSON writes.
func (w *Window) UnmarshalJSON(b []byte) error {
	var in windowJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	out := Window{Start: in.Start, End: in.End, Timezone: in.Timezone}
	for i, s := range in.Days {
		d, err := ParseWeekday(s)
		if err != nil {
			return fmt.Errorf("days[%d]: %w", i, err)
		}
		out.Days = append(out.Days, d)
	}
	*w = out
	return nil
}

// Errors of LoadZone, for errors.Is.
var (
	ErrZoneEmpty = errors.New("empty time zone name")
	ErrZoneLocal = errors.New("the zone name Local is never accepted, so the result does not depend on the server host")
	ErrZoneAgent = errors.New(`"agent" is not a zone: it means the agent's zone and is resolved per agent`)
)

// zoneCache maps a zone name to *time.Location or to the error of loading it.
// Open runs for every target of a wave on every evaluation, and LoadLocation
// reads and parses the database each time, so every name is loaded once.
var zoneCache sync.Map

// Names that fail are cached too (agent attributes may hold garbage on every
// target), but only up to maxCachedFailures so agents cannot grow the cache
// without bound.
const maxCachedFailures = 1024

var cachedFailures atomic.Int64

// LoadZone loads an IANA zone such as "Europe/Berlin" or "UTC". It refuses ""
// and "Local" (the result must not depend on the host) and "agent" (a
// placeholder resolved by Zones.Resolve, not a zone).
func LoadZone(name string) (*time.Location, error) {
	switch name {
	case "":
		return nil, ErrZoneEmpty
	case "Local":
		return nil, ErrZoneLocal
	case AgentZone:
		return nil, ErrZoneAgent
	}
	if v, ok := zoneCache.Load(name); ok {
		return zoneResult(v)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		err = fmt.Errorf("time zone %q: %w", name, err)
		if cachedFailures.Add(1) <= maxCachedFailures {
			zoneCache.Store(name, err)
		}
		return nil, err
	}
	v, _ := zoneCache.LoadOrStore(name, loc)
	return zoneResult(v)
}

func zoneResult(v any) (*time.Location, error) {
	if err, ok := v.(error); ok {
		return nil, err
	}
	return v.(*time.Location), nil
}
