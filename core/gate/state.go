package gate

import (
	"fmt"
	"time"
)

// The rules of a bake with a gate (docs/policy.md, "Gates"): the checks are
// read every interval from the start of the bake, and once more when it
// ends. The gate fails as soon as failuresToStop consecutive readings are
// red, and at the end the last reading must be green. Example, bake 2m,
// interval 30s, failuresToStop 2: readings at +30s, +1m, +1m30s, +2m; red at
// +1m and +1m30s fails the gate at +1m30s; red only at +2m fails it too (the
// last reading is red); red only at +1m passes.
//
// State is stored on the rollout after every reading, so a retried task or a
// restarted engine neither repeats elapsed bake time nor loses a reading.

// KeepReadings is how many readings State keeps to show; the rules need only
// the counters.
const KeepReadings = 10

// keepResults bounds the red results kept per reading: a probe of a
// thousand hosts that all fail must not fill the rollout item.
const keepResults = 20

// State of the gate of one bake.
type State struct {
	Since time.Time `json:"since"`
	Until time.Time `json:"until"`
	// NextAt is when the next reading is due; nil when no more is: the last
	// one was taken at or after Until, or the gate has no checks (a bake).
	NextAt      *time.Time `json:"nextAt,omitempty"`
	Readings    int        `json:"readings"`
	Consecutive int        `json:"consecutiveRed"` // blocking red readings in a row, up to the last
	// LastRed is the last blocking red result, as operators see it.
	LastRed string    `json:"lastRed,omitempty"`
	Recent  []Reading `json:"recent,omitempty"` // the last KeepReadings readings, oldest first
}

// Reading is one reading as State keeps it: when, whether it was red, how
// many results it had and the red ones (dry-run ones included, marked).
type Reading struct {
	At      time.Time `json:"at"`
	Red     bool      `json:"red"`
	Checked int       `json:"checked"`
	Results []Result  `json:"results,omitempty"`
}

// Outcome of a gate.
type Outcome int

const (
	Pending Outcome = iota
	Passed
	Failed
)

// Begin starts the gate of a bake from since for bake. With checks false
// nothing is read: the gate is the wait alone.
func Begin(since time.Time, bake, interval time.Duration, checks bool) State {
	s := State{Since: since, Until: since.Add(bake)}
	if checks {
		first := since.Add(interval)
		if first.After(s.Until) || interval <= 0 {
			first = s.Until
		}
		s.NextAt = &first
	}
	return s
}

// Due reports whether a reading is due at now.
func (s State) Due(now time.Time) bool { return s.NextAt != nil && !now.Before(*s.NextAt) }

// Record adds the reading taken at at. A reading is red when one of its
// results blocks (red and not a dry run).
func (s State) Record(at time.Time, results []Result, interval time.Duration) State {
	red, kept := false, []Result(nil)
	for _, r := range results {
		if r.Blocking() {
			if !red {
				s.LastRed = r.String()
			}
			red = true
		}
		if r.Red && len(kept) < keepResults {
			kept = append(kept, r)
		}
	}
	s.Readings++
	s.Consecutive++
	if !red {
		s.Consecutive = 0
	}
	s.Recent = append(append([]Reading(nil), s.Recent...), Reading{At: at, Red: red, Checked: len(results), Results: kept})
	if n := len(s.Recent); n > KeepReadings {
		s.Recent = s.Recent[n-KeepReadings:]
	}
	s.NextAt = s.next(at, interval)
	return s
}

// next is the first reading time after at on the grid Since + k×interval,
// or Until; nil once at reached Until.
func (s State) next(at time.Time, interval time.Duration) *time.Time {
	if !at.Before(s.Until) {
		return nil
	}
	n := s.Until
	if interval > 0 {
		k := at.Sub(s.Since)/interval + 1
		if t := s.Since.Add(k * interval); t.Before(s.Until) {
			n = t
		}
	}
	return &n
}

// Verdict of the gate at now.
func (s State) Verdict(failuresToStop int, now time.Time) Outcome {
	switch {
	case s.Consecutive >= max(failuresToStop, 1):
		return Failed
	case now.Before(s.Until) || s.NextAt != nil:
		return Pending
	case s.Readings > 0 && s.Consecutive > 0:
		return Failed // the last reading at the end of the bake is red
	}
	return Passed
}

// Reason says why a failed gate failed.
func (s State) Reason(failuresToStop int) string {
	if s.Consecutive >= max(failuresToStop, 1) && failuresToStop > 1 {
		return fmt.Sprintf("%d consecutive red readings: %s", s.Consecutive, s.LastRed)
	}
	if s.Consecutive >= max(failuresToStop, 1) {
		return s.LastRed
	}
	return "the last reading of the bake is red: " + s.LastRed
}
