// Package freeze decides whether a freeze of a rollout policy holds a stage:
// a period in which no stage of the listed regions starts. It is pure; the
// caller passes the current time.
package freeze

import (
	"slices"
	"time"

	"github.com/myriarch/myriarch/core/policy"
)

// Hold is an active freeze that holds a stage, and when it ends.
type Hold struct {
	Freeze policy.Freeze
	Until  time.Time
}

// Active returns the freeze that holds a stage of regions at now: the one
// that ends last among those active for one of the regions (a freeze
// without regions covers every region, and a stage whose agents report no
// region). ok is false when none is active.
//
//	holidays [us-east-1] 2026-12-20..2027-01-04, stage in us-east-1 on 2026-12-24 → held until 2027-01-04
//	the same stage in eu-west-1 → not held
func Active(fs []policy.Freeze, regions []string, now time.Time) (h Hold, ok bool) {
	for _, f := range fs {
		if !covers(f, regions) {
			continue
		}
		until, active := activeUntil(f, now)
		if active && (!ok || until.After(h.Until)) {
			h, ok = Hold{Freeze: f, Until: until}, true
		}
	}
	return h, ok
}

func covers(f policy.Freeze, regions []string) bool {
	if len(f.Regions) == 0 {
		return true
	}
	for _, r := range regions {
		if slices.Contains(f.Regions, r) {
			return true
		}
	}
	return false
}

// activeUntil: an absolute freeze holds from From (inclusive) to Until
// (exclusive); a daily window in its zone, UTC when it names none.
func activeUntil(f policy.Freeze, now time.Time) (time.Time, bool) {
	if f.Window != nil {
		w := *f.Window
		if w.Timezone == "" {
			w.Timezone = "UTC"
		}
		return w.OpenUntil(time.UTC, now)
	}
	if f.From == nil || f.Until == nil || now.Before(*f.From) || !now.Before(*f.Until) {
		return time.Time{}, false
	}
	return *f.Until, true
}

// Names is the list of regions of a hold for messages: "us-east-1" or
// "every region".
func (h Hold) Names() string {
	if len(h.Freeze.Regions) == 0 {
		return "every region"
	}
	out := ""
	for i, r := range h.Freeze.Regions {
		if i > 0 {
			out += ", "
		}
		out += r
	}
	return out
}
