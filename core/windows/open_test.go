package windows

import (
	"testing"
	"time"
)

// at parses an RFC 3339 instant; the offset in the literal is the fixed truth
// that the window arithmetic is checked against.
func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func zone(name string) *time.Location {
	loc, err := LoadZone(name)
	if err != nil {
		panic(err)
	}
	return loc
}

var (
	mon      = []time.Weekday{time.Monday}
	sat      = []time.Weekday{time.Saturday}
	sun      = []time.Weekday{time.Sunday}
	weekend  = []time.Weekday{time.Saturday, time.Sunday}
	weekdays = []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday}
)

func hm(s string) TimeOfDay {
	t, err := ParseTimeOfDay(s)
	if err != nil {
		panic(err)
	}
	return t
}

func win(days []time.Weekday, start, end, tz string) Window {
	return Window{Days: days, Start: hm(start), End: hm(end), Timezone: tz}
}

// 2025-06-02 is a Monday without a DST change anywhere in Europe.
func TestOpen_Rules(t *testing.T) {
	utc := time.UTC
	tests := []struct {
		ws   []Window
		now  string
		want bool
	}{
		{ws: nil, now: "2025-06-02T12:00:00Z", want: true},                                                                                                  // no windows: always open
		{ws: []Window{win(mon, "22:00", "05:00", "")}, now: "2025-06-02T21:59:59Z", want: false},                                                            // before start
		{ws: []Window{win(mon, "22:00", "05:00", "")}, now: "2025-06-02T22:00:00Z", want: true},                                                             // start is inclusive
		{ws: []Window{win(mon, "22:00", "05:00", "")}, now: "2025-06-02T23:00:00Z", want: true},                                                             // Mon 23:00
		{ws: []Window{win(mon, "22:00", "05:00", "")}, now: "2025-06-03T04:59:00Z", want: true},                                                             // Tue 04:59: Monday's window crosses midnight
		{ws: []Window{win(mon, "22:00", "05:00", "")}, now: "2025-06-03T05:00:00Z", want: false},                                                            // end is exclusive
		{ws: []Window{win(mon, "22:00", "05:00", "")}, now: "2025-06-03T23:00:00Z", want: false},                                                            // Tue 23:00: Tuesday is no beginning day
		{ws: []Window{win(mon, "22:00", "05:00", "")}, now: "2025-06-02T04:00:00Z", want: false},                                                            // Mon 04:00 would belong to Sunday's window
		{ws: []Window{win(nil, "22:00", "05:00", "")}, now: "2025-06-04T03:00:00Z", want: true},                                                             // empty days: every day
		{ws: []Window{win(nil, "22:00", "05:00", "")}, now: "2025-06-04T12:00:00Z", want: false},                                                            // every day, but not at noon
		{ws: []Window{win(nil, "09:00", "17:00", "")}, now: "2025-06-04T08:59:00Z", want: false},                                                            // same-day window, before
		{ws: []Window{win(nil, "09:00", "17:00", "")}, now: "2025-06-04T16:59:59Z", want: true},                                                             // same-day window, last second
		{ws: []Window{win(nil, "09:00", "17:00", "")}, now: "2025-06-04T17:00:00Z", want: false},                                                            // same-day window, end
		{ws: []Window{win(mon, "10:00", "10:00", "")}, now: "2025-06-02T09:59:00Z", want: false},                                                            // start == end: not before start
		{ws: []Window{win(mon, "10:00", "10:00", "")}, now: "2025-06-02T10:00:00Z", want: true},                                                             // start == end: 24 h from start
		{ws: []Window{win(mon, "10:00", "10:00", "")}, now: "2025-06-03T09:59:00Z", want: true},                                                             // start == end: still open next morning
		{ws: []Window{win(mon, "10:00", "10:00", "")}, now: "2025-06-03T10:00:00Z", want: false},                                                            // start == end: closed after 24 h
		{ws: []Window{win(weekend, "00:00", "00:00", "")}, now: "2025-06-06T23:59:00Z", want: false},                                                        // Fri 23:59
		{ws: []Window{win(weekend, "00:00", "00:00", "")}, now: "2025-06-07T00:00:00Z", want: true},                                                         // Sat 00:00
		{ws: []Window{win(weekend, "00:00", "00:00", "")}, now: "2025-06-08T23:59:00Z", want: true},                                                         // Sun 23:59
		{ws: []Window{win(weekend, "00:00", "00:00", "")}, now: "2025-06-09T00:00:00Z", want: false},                                                        // Mon 00:00
		{ws: []Window{win(mon, "09:00", "10:00", ""), win([]time.Weekday{time.Wednesday}, "09:00", "10:00", "")}, now: "2025-06-04T09:30:00Z", want: true},  // the second window is open
		{ws: []Window{win(mon, "09:00", "10:00", ""), win([]time.Weekday{time.Wednesday}, "09:00", "10:00", "")}, now: "2025-06-03T09:30:00Z", want: false}, // neither is
		{ws: []Window{win(mon, "22:00", "05:00", "")}, now: "1969-12-30T04:59:00Z", want: true},                                                             // before 1970 (negative seconds): Tue 04:59 of Monday's window
		{ws: []Window{win(mon, "22:00", "05:00", "")}, now: "1969-12-31T04:59:00Z", want: false},                                                            // ... and not Wednesday
		{ws: []Window{win(nil, "00:00", "00:00", "Mars/Olympus")}, now: "2025-06-02T12:00:00Z", want: false},                                                // a zone that does not load never opens
		{ws: []Window{win(nil, "00:00", "00:00", "Local")}, now: "2025-06-02T12:00:00Z", want: false},                                                       // Local is refused
		{ws: []Window{{Start: 1440, End: 0}}, now: "2025-06-02T12:00:00Z", want: false},                                                                     // start out of range never opens
		{ws: []Window{{Days: []time.Weekday{9}, Start: 0, End: 0}}, now: "2025-06-02T12:00:00Z", want: false},                                               // no valid day never opens
	}
	for _, tt := range tests {
		if got := Open(tt.ws, utc, at(tt.now)); got != tt.want {
			t.Errorf("Open(%v, UTC, %s) = %v, want %v", tt.ws, tt.now, got, tt.want)
		}
	}
}

// The window's own timezone wins over the agent's; "" and "agent" follow the agent.
func TestOpen_WindowZoneVersusAgentZone(t *testing.T) {
	berlin, tokyo := zone("Europe/Berlin"), zone("Asia/Tokyo")
	tests := []struct {
		w     Window
		agent *time.Location
		now   string
		want  bool
	}{
		{w: win(nil, "09:00", "10:00", "Asia/Tokyo"), agent: berlin, now: "2025-06-02T00:30:00Z", want: true},  // 09:30 in Tokyo
		{w: win(nil, "09:00", "10:00", "Asia/Tokyo"), agent: berlin, now: "2025-06-02T07:30:00Z", want: false}, // 09:30 in Berlin does not count
		{w: win(nil, "09:00", "10:00", ""), agent: berlin, now: "2025-06-02T07:30:00Z", want: true},            // "" follows the agent: 09:30 CEST
		{w: win(nil, "09:00", "10:00", "agent"), agent: berlin, now: "2025-06-02T07:30:00Z", want: true},       // "agent" follows the agent
		{w: win(nil, "09:00", "10:00", "agent"), agent: tokyo, now: "2025-06-02T07:30:00Z", want: false},       // 16:30 in Tokyo
		{w: win(nil, "09:00", "10:00", "UTC"), agent: tokyo, now: "2025-06-02T09:30:00Z", want: true},          // a fixed UTC window ignores the agent
		{w: win(nil, "09:00", "10:00", ""), agent: nil, now: "2025-06-02T09:30:00Z", want: true},               // no agent zone: UTC
		{w: win(mon, "22:00", "05:00", "Asia/Tokyo"), agent: berlin, now: "2025-06-02T13:30:00Z", want: true},  // Mon 22:30 in Tokyo; days are read in the window's zone
		{w: win(mon, "22:00", "05:00", "Asia/Tokyo"), agent: berlin, now: "2025-06-01T21:30:00Z", want: false}, // Sun 23:30 in Berlin is Mon 06:30 in Tokyo
	}
	for _, tt := range tests {
		if got := Open([]Window{tt.w}, tt.agent, at(tt.now)); got != tt.want {
			t.Errorf("Open(%v, %v, %s) = %v, want %v", tt.w, tt.agent, tt.now, got, tt.want)
		}
	}
}

// Europe/Berlin: 2025-03-30 (Sun) 02:00 CET -> 03:00 CEST at 01:00Z;
// 2025-10-26 (Sun) 03:00 CEST -> 02:00 CET at 01:00Z.
func TestOpen_DSTBerlin(t *testing.T) {
	berlin := zone("Europe/Berlin")
	tests := []struct {
		w    Window
		now  string
		want bool
	}{
		// March, 22:00-05:00 from Saturday: Sat 22:00 CET to Sun 05:00 CEST, 6 real hours.
		{w: win(sat, "22:00", "05:00", ""), now: "2025-03-29T20:59:59Z", want: false}, // before Sat 22:00 CET
		{w: win(sat, "22:00", "05:00", ""), now: "2025-03-29T21:00:00Z", want: true},  // Sat 22:00 CET
		{w: win(sat, "22:00", "05:00", ""), now: "2025-03-30T02:59:59Z", want: true},  // Sun 04:59:59 CEST
		{w: win(sat, "22:00", "05:00", ""), now: "2025-03-30T03:00:00Z", want: false}, // Sun 05:00 CEST
		// March, 01:00-04:00 on Sunday: 01:00 CET to 04:00 CEST, 2 real hours.
		{w: win(sun, "01:00", "04:00", ""), now: "2025-03-29T23:59:59Z", want: false}, // 00:59:59 CET
		{w: win(sun, "01:00", "04:00", ""), now: "2025-03-30T00:00:00Z", want: true},  // 01:00 CET
		{w: win(sun, "01:00", "04:00", ""), now: "2025-03-30T01:59:59Z", want: true},  // 03:59:59 CEST
		{w: win(sun, "01:00", "04:00", ""), now: "2025-03-30T02:00:00Z", want: false}, // 04:00 CEST
		// March, a start that does not exist moves forward by the gap: 02:30 -> 03:30 CEST.
		{w: win(sun, "02:30", "04:00", ""), now: "2025-03-30T01:00:00Z", want: false}, // 03:00 CEST, the clock never showed 02:30
		{w: win(sun, "02:30", "04:00", ""), now: "2025-03-30T01:29:59Z", want: false}, // 03:29:59 CEST
		{w: win(sun, "02:30", "04:00", ""), now: "2025-03-30T01:30:00Z", want: true},  // 03:30 CEST
		{w: win(sun, "02:30", "04:00", ""), now: "2025-03-30T01:59:59Z", want: true},  // 03:59:59 CEST
		{w: win(sat, "23:00", "02:30", ""), now: "2025-03-30T01:29:59Z", want: true},  // an end in the gap moves too: open until 03:30 CEST
		{w: win(sat, "23:00", "02:30", ""), now: "2025-03-30T01:30:00Z", want: false}, // 03:30 CEST
		{w: win(sun, "02:30", "03:15", ""), now: "2025-03-30T01:20:00Z", want: false}, // 03:30-03:15 is empty: no window that day
		{w: win(sun, "02:30", "03:15", ""), now: "2025-03-30T01:40:00Z", want: false}, // ... also not after 03:30
		// March, start == end on the short day: 23 real hours.
		{w: win(sun, "00:00", "00:00", ""), now: "2025-03-29T22:59:59Z", want: false}, // Sat 23:59:59 CET
		{w: win(sun, "00:00", "00:00", ""), now: "2025-03-29T23:00:00Z", want: true},  // Sun 00:00 CET
		{w: win(sun, "00:00", "00:00", ""), now: "2025-03-30T21:59:59Z", want: true},  // Sun 23:59:59 CEST
		{w: win(sun, "00:00", "00:00", ""), now: "2025-03-30T22:00:00Z", want: false}, // Mon 00:00 CEST
		// October, 22:00-05:00 from Saturday: Sat 22:00 CEST to Sun 05:00 CET, 8 real hours.
		{w: win(sat, "22:00", "05:00", ""), now: "2025-10-25T19:59:59Z", want: false}, // before Sat 22:00 CEST
		{w: win(sat, "22:00", "05:00", ""), now: "2025-10-25T20:00:00Z", want: true},  // Sat 22:00 CEST
		{w: win(sat, "22:00", "05:00", ""), now: "2025-10-26T03:59:59Z", want: true},  // Sun 04:59:59 CET, 8 h later
		{w: win(sat, "22:00", "05:00", ""), now: "2025-10-26T04:00:00Z", want: false}, // Sun 05:00 CET
		// October, 01:00-04:00 on Sunday: 01:00 CEST to 04:00 CET, 4 real hours.
		{w: win(sun, "01:00", "04:00", ""), now: "2025-10-25T22:59:59Z", want: false}, // 00:59:59 CEST
		{w: win(sun, "01:00", "04:00", ""), now: "2025-10-25T23:00:00Z", want: true},  // 01:00 CEST
		{w: win(sun, "01:00", "04:00", ""), now: "2025-10-26T02:59:59Z", want: true},  // 03:59:59 CET
		{w: win(sun, "01:00", "04:00", ""), now: "2025-10-26T03:00:00Z", want: false}, // 04:00 CET
		// October, a wall time that occurs twice is its first occurrence.
		{w: win(sun, "02:30", "04:00", ""), now: "2025-10-26T00:29:59Z", want: false}, // 02:29:59 CEST
		{w: win(sun, "02:30", "04:00", ""), now: "2025-10-26T00:30:00Z", want: true},  // 02:30 CEST opens it
		{w: win(sun, "01:00", "02:30", ""), now: "2025-10-26T00:29:59Z", want: true},  // 02:29:59 CEST
		{w: win(sun, "01:00", "02:30", ""), now: "2025-10-26T00:30:00Z", want: false}, // 02:30 CEST ends it
		{w: win(sun, "01:00", "02:30", ""), now: "2025-10-26T01:15:00Z", want: false}, // 02:15 CET, the second 02:15: still closed
		// October, start == end on the long day: 25 real hours.
		{w: win(sun, "00:00", "00:00", ""), now: "2025-10-25T22:00:00Z", want: true},  // Sun 00:00 CEST
		{w: win(sun, "00:00", "00:00", ""), now: "2025-10-26T22:59:59Z", want: true},  // Sun 23:59:59 CET, 25 h minus 1 s later
		{w: win(sun, "00:00", "00:00", ""), now: "2025-10-26T23:00:00Z", want: false}, // Mon 00:00 CET
		// A daily 00:00-00:00 window has no gap on either change day.
		{w: win(nil, "00:00", "00:00", ""), now: "2025-03-30T21:59:59Z", want: true}, // end of the short day
		{w: win(nil, "00:00", "00:00", ""), now: "2025-10-26T22:59:59Z", want: true}, // end of the long day
	}
	for _, tt := range tests {
		if got := Open([]Window{tt.w}, berlin, at(tt.now)); got != tt.want {
			t.Errorf("Open(%v, Berlin, %s) = %v, want %v", tt.w, tt.now, got, tt.want)
		}
	}
}

// wall decides the DST cases that time.Date leaves unspecified.
func TestWall(t *testing.T) {
	tests := []struct {
		zone    string
		y, m, d int
		clock   string
		want    string
	}{
		{zone: "Europe/Berlin", y: 2025, m: 6, d: 2, clock: "22:00", want: "2025-06-02T22:00:00+02:00"},        // an ordinary day
		{zone: "Europe/Berlin", y: 2025, m: 3, d: 30, clock: "02:30", want: "2025-03-30T03:30:00+02:00"},       // skipped: forward by the gap
		{zone: "Europe/Berlin", y: 2025, m: 3, d: 30, clock: "02:00", want: "2025-03-30T03:00:00+02:00"},       // skipped: the first skipped minute
		{zone: "Europe/Berlin", y: 2025, m: 3, d: 30, clock: "03:00", want: "2025-03-30T03:00:00+02:00"},       // the first minute after the gap
		{zone: "Europe/Berlin", y: 2025, m: 10, d: 26, clock: "02:30", want: "2025-10-26T02:30:00+02:00"},      // repeated: the first occurrence
		{zone: "Europe/Berlin", y: 2025, m: 10, d: 26, clock: "03:00", want: "2025-10-26T03:00:00+01:00"},      // after the repeated hour
		{zone: "Europe/Berlin", y: 2040, m: 3, d: 25, clock: "02:30", want: "2040-03-25T03:30:00+02:00"},       // beyond the transition table (TZ rule)
		{zone: "Europe/Berlin", y: 2040, m: 10, d: 28, clock: "02:30", want: "2040-10-28T02:30:00+02:00"},      // beyond the table, repeated
		{zone: "America/New_York", y: 2025, m: 3, d: 9, clock: "02:30", want: "2025-03-09T03:30:00-04:00"},     // skipped, west of UTC
		{zone: "America/New_York", y: 2025, m: 11, d: 2, clock: "01:30", want: "2025-11-02T01:30:00-04:00"},    // repeated, west of UTC
		{zone: "Australia/Lord_Howe", y: 2025, m: 10, d: 5, clock: "02:10", want: "2025-10-05T02:40:00+11:00"}, // a 30-minute gap
		{zone: "Australia/Lord_Howe", y: 2025, m: 4, d: 6, clock: "01:45", want: "2025-04-06T01:45:00+11:00"},  // a 30-minute repeat
		{zone: "Pacific/Apia", y: 2011, m: 12, d: 30, clock: "12:00", want: "2011-12-31T12:00:00+14:00"},       // a skipped date: forward by a day
		{zone: "Europe/Berlin", y: 2025, m: 3, d: 31, clock: "00:00", want: "2025-03-31T00:00:00+02:00"},       // d normalizes: March 31
		{zone: "Europe/Berlin", y: 2025, m: 4, d: 0, clock: "00:00", want: "2025-03-31T00:00:00+02:00"},        // day 0 of April is March 31
	}
	for _, tt := range tests {
		got := wall(zone(tt.zone), time.Date(tt.y, time.Month(tt.m), tt.d, 0, int(hm(tt.clock)), 0, 0, time.UTC).Unix())
		if want := at(tt.want); !got.Equal(want) {
			t.Errorf("wall(%s, %d-%02d-%02d %s) = %s, want %s", tt.zone, tt.y, tt.m, tt.d, tt.clock, got.Format(time.RFC3339), tt.want)
		}
	}
}

// Apia skipped 2011-12-30: a window that began on Thursday the 29th ended on
// Saturday the 31st by the calendar, two days after it began.
func TestOpen_SkippedDate(t *testing.T) {
	thu := []time.Weekday{time.Thursday}
	w := []Window{win(thu, "22:00", "05:00", "Pacific/Apia")}
	if !Open(w, nil, at("2011-12-31T04:00:00+14:00")) {
		t.Errorf("Thursday's window is closed on Sat 04:00 after the skipped Friday, want open")
	}
	if Open(w, nil, at("2011-12-31T05:00:00+14:00")) {
		t.Errorf("Thursday's window is open on Sat 05:00, want closed")
	}
}

func TestNextOpen(t *testing.T) {
	berlin := zone("Europe/Berlin")
	tests := []struct {
		ws    []Window
		agent *time.Location
		now   string
		want  string // "" means no window opens
	}{
		{ws: nil, agent: nil, now: "2025-06-02T12:00:00Z", want: "2025-06-02T12:00:00Z"},                                                                      // no windows: now
		{ws: []Window{win(mon, "22:00", "05:00", "")}, agent: nil, now: "2025-06-02T23:00:00Z", want: "2025-06-02T23:00:00Z"},                                 // inside a window: now
		{ws: []Window{win(mon, "22:00", "05:00", "")}, agent: nil, now: "2025-06-02T21:00:00Z", want: "2025-06-02T22:00:00Z"},                                 // later today
		{ws: []Window{win(mon, "22:00", "05:00", "")}, agent: nil, now: "2025-06-03T05:00:00Z", want: "2025-06-09T22:00:00Z"},                                 // just after close: next Monday
		{ws: []Window{win(sat, "10:00", "11:00", "")}, agent: nil, now: "2025-06-07T11:00:00Z", want: "2025-06-14T10:00:00Z"},                                 // across a whole week
		{ws: []Window{win(nil, "10:00", "11:00", "")}, agent: nil, now: "2025-06-07T11:00:01Z", want: "2025-06-08T10:00:00Z"},                                 // every day: tomorrow
		{ws: []Window{win(sat, "10:00", "11:00", ""), win(mon, "08:00", "09:00", "")}, agent: nil, now: "2025-06-07T12:00:00Z", want: "2025-06-09T08:00:00Z"}, // the earliest of several
		{ws: []Window{win(nil, "09:00", "10:00", "Asia/Tokyo")}, agent: berlin, now: "2025-06-02T02:00:00Z", want: "2025-06-03T00:00:00Z"},                    // the window's zone: 09:00 JST
		{ws: []Window{win(nil, "09:00", "10:00", "")}, agent: berlin, now: "2025-06-02T02:00:00Z", want: "2025-06-02T07:00:00Z"},                              // the agent's zone: 09:00 CEST
		{ws: []Window{win(sun, "02:30", "04:00", "")}, agent: berlin, now: "2025-03-29T12:00:00Z", want: "2025-03-30T01:30:00Z"},                              // March: opens 03:30 CEST
		{ws: []Window{win(sun, "02:30", "04:00", "")}, agent: berlin, now: "2025-03-30T01:20:00Z", want: "2025-03-30T01:30:00Z"},                              // March: 03:20 CEST, not yet
		{ws: []Window{win(sun, "02:30", "03:15", "")}, agent: berlin, now: "2025-03-29T12:00:00Z", want: "2025-04-06T00:30:00Z"},                              // March: empty that day, next Sunday
		{ws: []Window{win(sat, "22:00", "05:00", "")}, agent: berlin, now: "2025-03-30T03:00:00Z", want: "2025-04-05T20:00:00Z"},                              // March: just after close, next Saturday in CEST
		{ws: []Window{win(sun, "01:00", "04:00", "")}, agent: berlin, now: "2025-10-25T12:00:00Z", want: "2025-10-25T23:00:00Z"},                              // October: 01:00 CEST
		{ws: []Window{win(sun, "02:30", "04:00", "")}, agent: berlin, now: "2025-10-26T00:00:00Z", want: "2025-10-26T00:30:00Z"},                              // October: the first 02:30
		{ws: []Window{win(sun, "01:00", "02:30", "")}, agent: berlin, now: "2025-10-26T00:30:00Z", want: "2025-11-02T00:00:00Z"},                              // October: closed in the second 02:xx, next Sunday in CET
		{ws: []Window{win(nil, "00:00", "00:00", "Local")}, agent: nil, now: "2025-06-02T12:00:00Z", want: ""},                                                // no window can open
		{ws: []Window{{Days: []time.Weekday{-1}, Start: 0, End: 60}}, agent: nil, now: "2025-06-02T12:00:00Z", want: ""},                                      // no valid day
	}
	for _, tt := range tests {
		got, ok := NextOpen(tt.ws, tt.agent, at(tt.now))
		if tt.want == "" {
			if ok {
				t.Errorf("NextOpen(%v, %s) = %s, want none", tt.ws, tt.now, got.Format(time.RFC3339))
			}
			continue
		}
		if !ok || !got.Equal(at(tt.want)) {
			t.Errorf("NextOpen(%v, %s) = %s, %v, want %s", tt.ws, tt.now, got.Format(time.RFC3339), ok, tt.want)
		}
	}
}

func TestCivilDayAndWeekday(t *testing.T) {
	tests := []struct {
		now  string
		zone string
		want string // the calendar day in zone
		wd   time.Weekday
	}{
		{now: "2025-06-02T23:30:00Z", zone: "UTC", want: "2025-06-02", wd: time.Monday},             // an ordinary day
		{now: "2025-06-02T23:30:00Z", zone: "Europe/Berlin", want: "2025-06-03", wd: time.Tuesday},  // already Tuesday in Berlin
		{now: "1969-12-31T23:00:00Z", zone: "UTC", want: "1969-12-31", wd: time.Wednesday},          // negative seconds round down, not toward zero
		{now: "1969-12-31T23:30:00Z", zone: "Europe/Berlin", want: "1970-01-01", wd: time.Thursday}, // the epoch day
		{now: "1969-12-30T00:00:00Z", zone: "UTC", want: "1969-12-30", wd: time.Tuesday},            // a negative midnight
	}
	for _, tt := range tests {
		day := civilDay(at(tt.now), zone(tt.zone))
		if got := time.Unix(day, 0).UTC().Format(time.DateOnly); got != tt.want || weekday(day) != tt.wd {
			t.Errorf("civilDay(%s, %s) = %s %v, want %s %v", tt.now, tt.zone, got, weekday(day), tt.want, tt.wd)
		}
	}
}

func TestOpenUntil(t *testing.T) {
	w := Window{Start: 22 * 60, End: 5 * 60, Timezone: "UTC"}
	at := time.Date(2026, 3, 3, 1, 0, 0, 0, time.UTC)
	end, open := w.OpenUntil(nil, at)
	if !open || !end.Equal(time.Date(2026, 3, 3, 5, 0, 0, 0, time.UTC)) {
		t.Fatalf("across midnight: open %v until %v, want 05:00 the same day", open, end)
	}
	if _, open := w.OpenUntil(nil, at.Add(5*time.Hour)); open {
		t.Fatal("06:00 is outside 22:00-05:00")
	}
}
