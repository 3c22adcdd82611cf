// Package selection is the version an operator chooses for a fleet inside
// the frame Git declares (docs/version-selection.md): the stored choice, the
// resolver of the effective target, the conflict rules that reconcile a
// choice with Git, the version options the UI offers, and the select and
// clear operations as pure decisions. Nothing here stores, reads a clock or
// talks to the network: the caller passes the current state and `now`, and
// carries out the returned decision.
package selection

import (
	"time"

	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/rollout"
)

// State of a UI selection.
type State string

const (
	Active      State = "active"
	Invalidated State = "invalidated" // Git removed the version from the frame (K2b): the fleet is in hold
)

// Selection is the UI selection of one fleet (FleetVersionSelection), at most
// one per fleet.
type Selection struct {
	Fleet       string     `json:"fleet"`
	Version     string     `json:"version"`
	State       State      `json:"state"`
	StateReason string     `json:"stateReason,omitempty"`
	GitVersion  string     `json:"gitVersion,omitempty"` // the Git target when the choice was made
	GitCommit   string     `json:"gitCommit,omitempty"`  // the applied Git revision at that time
	SelectedBy  string     `json:"selectedBy"`           // actor reference: user:<uuid> or token:<uuid>
	SelectedAt  time.Time  `json:"selectedAt"`
	Reason      string     `json:"reason,omitempty"`
	RolloutID   string     `json:"rolloutId,omitempty"`
	PlannedAt   *time.Time `json:"plannedAt,omitempty"`
	UpdatedAt   time.Time  `json:"updatedAt"`

	// Revision is the optimistic-concurrency counter of the stored item. A
	// decision that writes returns the selection with Revision one above the
	// stored one (1 for a fleet without a stored selection); the store writes
	// it on the condition that the stored revision is Revision-1 (absent for 1).
	Revision int64 `json:"revision"`
}

// Source is where the effective target comes from (VersionTargetSource).
type Source string

const (
	SourceGit  Source = "git"
	SourceUI   Source = "ui"
	SourceHold Source = "hold"
	SourceNone Source = "none"
)

// Target is the effective target of a fleet (FleetVersionTarget). Version is
// empty for the sources hold and none.
type Target struct {
	Version string `json:"version,omitempty"`
	Source  Source `json:"source"`
}

// ResolveVersionTarget is the single place that decides the target version
// of a fleet; every consumer uses it:
//
//	active selection               → its version, ui
//	invalidated selection          → empty, hold
//	no selection, Git target set   → the Git target, git
//	no selection, no Git target    → empty, none
//
// A selection in any state other than active counts as a hold: an unknown
// state never rolls a version out. The caller passes the selection as the
// conflict rules left it (see Reconciled).
func ResolveVersionTarget(f *fleet.Fleet, s *Selection) Target {
	switch {
	case s != nil && s.State == Active:
		return Target{Version: s.Version, Source: SourceUI}
	case s != nil:
		return Target{Source: SourceHold}
	case f != nil && f.GitTarget() != "":
		return Target{Version: f.GitTarget(), Source: SourceGit}
	}
	return Target{Source: SourceNone}
}

// Reconciled is the selection as the conflict rules leave it against f: nil
// when a rule deletes it, invalidated when K2b applies, else s. Options and
// the decisions read through it, so that they never act on a choice that Git
// superseded before the planner stored the outcome of Reconcile.
func Reconciled(f *fleet.Fleet, s *Selection) *Selection {
	if s == nil {
		return nil
	}
	o := Reconcile(f, *s, "", time.Time{})
	switch o.Effect {
	case Delete:
		return nil
	case Invalidate:
		return &o.Selection
	}
	return s
}

// RolloutSummary is what the version options and the preconditions need of
// the fleet's active version rollout; Options passes it through.
type RolloutSummary struct {
	ID        string         `json:"id"`
	Status    rollout.Status `json:"status"`
	Origin    rollout.Origin `json:"origin,omitempty"`
	ToRef     string         `json:"toRef,omitempty"`
	CreatedBy string         `json:"createdBy,omitempty"`
}

// blocking reports whether the rollout refuses a new selection: failed or
// rolling_back are never superseded automatically, so a person aborts first.
func (r *RolloutSummary) blocking() bool {
	return r != nil && (r.Status == rollout.Failed || r.Status == rollout.RollingBack)
}
