package windows

import "time"

// How a window maps to absolute time. For a day B on which the window begins
// (B is a calendar day in the window's zone and one of Days, or any day when
// Days is empty) the window is the half-open interval
//
//	[wall(B, Start), wall(B, End))    when End > Start
//	[wall(B, Start), wall(B+1, End))  when End <= Start (across midnight; 24 h wall time when equal)
//
// where wall(day, t) is the instant at which the zone's clock shows t on that
// day. Start and end are wall-clock times, so on the days of a DST change a
// window lasts as long as the clock says, not as the hours say: in
// Europe/Berlin 22:00–05:00 lasts 6 real hours across the March change and 8
// across the October change, and 00:00–00:00 lasts 23 or 25 hours, so that a
// daily 00:00–00:00 window is open without a gap. Example: a Monday-only
// 22:00–05:00 window is open Mon 23:00 and Tue 04:59, closed Tue 05:00 and
// Tue 23:00.
//
// wall resolves the two wall times of a DST change as RFC 5545 (3.3.5)
// resolves a DTSTART (and java.time does), the same in every zone:
//   - a wall time that occurs twice (fall back) is its first occurrence:
//     02:30 on the last Sunday of October in Europe/Berlin is 02:30 CEST;
//   - a wall time that the clock skips (spring forward) is read with the offset
//     before the gap, so it moves forward by the gap: 02:30 on the last Sunday
//     of March in Europe/Berlin is 03:30 CEST.
//
// A window whose end lands before its start after that shift (02:30–03:15 on
// the March change day) is empty that day and does not open.
//
// time.Date is no such rule: its documentation leaves both cases open, and
// its result depends on the sign of the offset. In Europe/Berlin it gives
// 02:30 CET (the second 02:30) in October and 03:30 CEST in March; in
// America/New_York it gives the first 01:30 in November but moves the
// skipped 02:30 back to 01:30 EST in March.

// Open reports whether now lies inside at least one of ws. Without windows a
// target may always start. A window whose timezone does not load, or whose
// start or end is out of range, never opens: validation refuses such policies,
// and a target must not start outside the windows its policy meant.
func Open(ws []Window, agentZone *time.Location, now time.Time) bool {
	if len(ws) == 0 {
		return true
	}
	for i := range ws {
		if ws[i].openAt(agentZone, now) {
			return true
		}
	}
	return false
}

// lookBackDays covers windows that began before today and are still open: a
// window ends at most one calendar day after it begins; the second day covers
// zones that skipped a whole date (Pacific/Apia, 2011-12-30).
const lookBackDays = 2

// lookAheadDays bounds NextOpen: a window opens at least once a week, and the
// one day per year on which DST may empty it is followed by the next week's.
const lookAheadDays = 8

// A civil day is the wall-clock time of its midnight read as if it were UTC
// (Unix seconds): days are then exactly 86400 apart and a wall time on a day
// is day + minutes*60, whatever the zone's offsets do.
const secondsPerDay = 86400

func (w *Window) openAt(agentZone *time.Location, now time.Time) bool {
	loc, ok := w.zone(agentZone)
	if !ok || !w.Start.Valid() || !w.End.Valid() {
		return false
	}
	today := civilDay(now, loc)
	for k := int64(-lookBackDays); k <= 0; k++ {
		if w.contains(loc, today+k*secondsPerDay, now) {
			return true
		}
	}
	return false
}

// contains reports whether the interval that begins on day holds now. It
// computes the end only when now is past the start: the hot path of Open.
func (w *Window) contains(loc *time.Location, day int64, now time.Time) bool {
	if !w.beginsOn(weekday(day)) {
		return false
	}
	if now.Before(wall(loc, day+int64(w.Start)*60)) {
		return false
	}
	return now.Before(w.end(loc, day))
}

// NextOpen returns the earliest instant at or after now at which Open is true:
// now itself when a window is open (or there are none), otherwise the
// earliest beginning of a window. ok is false when no window opens within
// lookAheadDays, which happens only when no window can open at all (every
// zone invalid, no valid day, times out of range).
func NextOpen(ws []Window, agentZone *time.Location, now time.Time) (next time.Time, ok bool) {
	if Open(ws, agentZone, now) {
		return now, true
	}
	for i := range ws {
		w := &ws[i]
		loc, valid := w.zone(agentZone)
		if !valid || !w.Start.Valid() || !w.End.Valid() {
			continue
		}
		today := civilDay(now, loc)
		for k := int64(-lookBackDays); k <= lookAheadDays; k++ {
			day := today + k*secondsPerDay
			if !w.beginsOn(weekday(day)) {
				continue
			}
			start := wall(loc, day+int64(w.Start)*60)
			if w.end(loc, day).After(start) && !start.Before(now) && (!ok || start.Before(next)) {
				next, ok = start, true
			}
		}
	}
	return next, ok
}

func (w *Window) zone(agentZone *time.Location) (*time.Location, bool) {
	loc, err := ZoneFor(*w, agentZone)
	return loc, err == nil
}

// end is the end of the interval that begins on day: the same day when End is
// later than Start, else the next day (across midnight, or 24 h when equal).
func (w *Window) end(loc *time.Location, day int64) time.Time {
	if w.End <= w.Start {
		day += secondsPerDay
	}
	return wall(loc, day+int64(w.End)*60)
}

func (w *Window) beginsOn(day time.Weekday) bool {
	if len(w.Days) == 0 {
		return true
	}
	for _, d := range w.Days {
		if d == day {
			return true
		}
	}
	return false
}

// civilDay is the calendar day of loc on which t falls.
func civilDay(t time.Time, loc *time.Location) int64 {
	_, off := t.In(loc).Zone()
	return floorDiv(t.Unix()+int64(off), secondsPerDay) * secondsPerDay
}

// weekday of a civil day; 1970-01-01 was a Thursday.
func weekday(day int64) time.Weekday {
	return time.Weekday((floorDiv(day, secondsPerDay)%7 + 7 + int64(time.Thursday)) % 7)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// maxOffsetChange bounds how far a zone's offset moves in one transition (the
// largest ever is Apia's 24 h); an earlier occurrence of a wall time is
// possible only this close after a transition.
const maxOffsetChange = 2 * secondsPerDay

// wall is the instant at which the clock of loc shows the wall time want
// (Unix seconds of that wall time read as if UTC): the first occurrence of a
// repeated wall time, and a skipped wall time read with the offset before the
// gap (see the comment at the top). time.Date leaves both unspecified.
func wall(loc *time.Location, want int64) time.Time {
	// Like time.Date: guess the offset in force at the instant want, then
	// correct it once with the offset at the guessed instant.
	_, off := time.Unix(want, 0).In(loc).Zone()
	got := time.Unix(want-int64(off), 0).In(loc)
	_, gotOff := got.Zone()
	if gotOff != off {
		got = time.Unix(want-int64(gotOff), 0).In(loc)
		_, gotOff = got.Zone()
	}
	shown := got.Unix() + int64(gotOff)
	zoneStart, _ := got.ZoneBounds()

	if shown == want { // the wall time exists; did it also occur before zoneStart?
		if zoneStart.IsZero() || got.Unix()-zoneStart.Unix() >= maxOffsetChange {
			return got
		}
		_, prevOff := zoneStart.Add(-time.Second).Zone()
		earlier := want - int64(prevOff)
		if prevOff > gotOff && earlier < zoneStart.Unix() && offsetAt(loc, earlier) == prevOff {
			return time.Unix(earlier, 0).In(loc)
		}
		return got
	}

	// Skipped: read want with the offset in force before the gap. got is
	// either after the jump (shown later than want; the offset before is that
	// of the previous zone period) or before it (got's own offset).
	before := gotOff
	if shown > want && !zoneStart.IsZero() {
		_, before = zoneStart.Add(-time.Second).Zone()
	}
	return time.Unix(want-int64(before), 0).In(loc)
}

func offsetAt(loc *time.Location, unix int64) int {
	_, off := time.Unix(unix, 0).In(loc).Zone()
	return off
}

// OpenUntil reports whether w is open at now and, if so, when the interval
// that holds now ends (the latest end, should two intervals overlap).
func (w Window) OpenUntil(agentZone *time.Location, now time.Time) (end time.Time, open bool) {
	loc, ok := w.zone(agentZone)
	if !ok || !w.Start.Valid() || !w.End.Valid() {
		return time.Time{}, false
	}
	today := civilDay(now, loc)
	for k := int64(-lookBackDays); k <= 0; k++ {
		day := today + k*secondsPerDay
		if w.contains(loc, day, now) {
			if e := w.end(loc, day); !open || e.After(end) {
				end, open = e, true
			}
		}
	}
	return end, open
}
