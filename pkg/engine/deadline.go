package engine

import "time"

// deadline keeps the earliest future moment seen.
type deadline struct{ t time.Time }

// at records t if it is the earliest so far; moments at or before now are
// ignored by the caller's logic, which acts on them in the same pass.
func (d *deadline) at(t time.Time) {
	if t.IsZero() {
		return
	}
	if d.t.IsZero() || t.Before(d.t) {
		d.t = t
	}
}
