package windows

import (
	"testing"
	"time"

	"pgregory.net/rapid"
)

// Zones with DST (both hemispheres, 30-minute changes), without, and with a
// skipped date, so that random windows meet every case of wall.
var propertyZones = []string{"", "UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "America/Santiago", "Asia/Kolkata", "Pacific/Apia"}

// Instants near DST changes are drawn more often than others.
var propertyBases = []time.Time{
	at("2025-03-30T01:00:00Z"), at("2025-10-26T01:00:00Z"), // Europe
	at("2025-03-09T07:00:00Z"), at("2025-11-02T06:00:00Z"), // New York
	at("2025-10-04T15:30:00Z"), at("2025-04-05T15:00:00Z"), // Lord Howe
	at("2011-12-30T10:00:00Z"), // Apia skips a date
	at("2025-06-02T00:00:00Z"), // an ordinary week
}

func drawWindow(t *rapid.T) Window {
	days := rapid.SliceOfNDistinct(rapid.IntRange(0, 6), 0, 7, rapid.ID[int]).Draw(t, "days")
	w := Window{
		Start:    TimeOfDay(rapid.IntRange(0, MinutesPerDay-1).Draw(t, "start")),
		End:      TimeOfDay(rapid.IntRange(0, MinutesPerDay-1).Draw(t, "end")),
		Timezone: rapid.SampledFrom(propertyZones).Draw(t, "tz"),
	}
	for _, d := range days {
		w.Days = append(w.Days, time.Weekday(d))
	}
	return w
}

func drawNow(t *rapid.T) time.Time {
	base := rapid.SampledFrom(propertyBases).Draw(t, "base")
	offsetSeconds := rapid.Int64Range(-4*86400, 4*86400).Draw(t, "offsetSeconds")
	return base.Add(time.Duration(offsetSeconds) * time.Second)
}

// NextOpen is the first open instant: not before now, open, and nothing open
// in between (checked every minute and one second before it).
func TestNextOpen_Property(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ws := rapid.SliceOfN(rapid.Custom(drawWindow), 1, 3).Draw(t, "windows")
		agent := zone(rapid.SampledFrom(propertyZones[1:]).Draw(t, "agent"))
		now := drawNow(t)

		next, ok := NextOpen(ws, agent, now)
		if !ok {
			t.Fatalf("NextOpen found no opening within %d days for valid windows", lookAheadDays)
		}
		if next.Before(now) {
			t.Fatalf("NextOpen = %s, before now %s", next, now)
		}
		if !Open(ws, agent, next) {
			t.Fatalf("not open at NextOpen %s", next)
		}
		if next.After(now) && Open(ws, agent, next.Add(-time.Second)) {
			t.Fatalf("already open one second before NextOpen %s", next)
		}
		for m := now; m.Before(next); m = m.Add(time.Minute) {
			if Open(ws, agent, m) {
				t.Fatalf("open at %s, before NextOpen %s", m, next)
			}
		}
	})
}

// In zones without DST the rule is plain modular arithmetic over the minutes
// of a week; Open must agree with it.
func TestOpen_FixedOffsetOracle(t *testing.T) {
	const week = 7 * MinutesPerDay
	rapid.Check(t, func(t *rapid.T) {
		w := drawWindow(t)
		w.Timezone = rapid.SampledFrom([]string{"UTC", "Asia/Kolkata", "Etc/GMT+5"}).Draw(t, "fixedTZ")
		now := drawNow(t)

		local := now.In(zone(w.Timezone))
		minuteOfWeek := int(local.Weekday())*MinutesPerDay + local.Hour()*60 + local.Minute()
		length := int(w.End - w.Start)
		if length <= 0 {
			length += MinutesPerDay
		}
		want := false
		for d := time.Sunday; d <= time.Saturday; d++ {
			if !w.beginsOn(d) {
				continue
			}
			begin := int(d)*MinutesPerDay + int(w.Start)
			if ((minuteOfWeek-begin)%week+week)%week < length {
				want = true
			}
		}
		if got := Open([]Window{w}, nil, now); got != want {
			t.Fatalf("Open(%v, %s) = %v, want %v (local %s)", w, now, got, want, local)
		}
	})
}
