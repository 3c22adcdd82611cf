package selection

import "github.com/myriarch/myriarch/core/fleet"

// Judgement is what the version options would say about one version for a
// fleet, whether or not the version is one of its candidates: the release
// views (getRelease's updatableFleets, the fleets behind the latest release)
// ask it of every fleet of a distribution.
type Judgement struct {
	Target         Target `json:"target"`
	Allowed        bool   `json:"allowed"`                  // the fleet admits a choice at all
	NotAllowedCode string `json:"notAllowedCode,omitempty"` // selection_disabled, no_executor, blocking_rollout
	Selectable     bool   `json:"selectable"`               // allowed and nothing speaks against the version
	ReasonCode     string `json:"reasonCode,omitempty"`     // current_target, unknown_version, ... (see the constants)
}

// Judge judges version (a leading v is trimmed) for the fleet of in with
// the rules of Options: the same notAllowedCode, the same reasonCode in the
// same order, and selectable exactly when Options would offer it as
// selectable. A fleet that does not exist admits nothing (selection_disabled).
func Judge(in OptionsInput, version string) Judgement {
	f := in.Fleet
	if f == nil {
		return Judgement{Target: ResolveVersionTarget(nil, nil), NotAllowedCode: NotAllowedSelectionDisabled}
	}
	v := fleet.NormalizeVersion(version)
	c := newChooser(f, Reconciled(f, in.Selection), in.Releases, in.MemberVersions)
	j := Judgement{Target: c.target, NotAllowedCode: notAllowed(f, in.ActiveVersionRollout), ReasonCode: c.reason(v)}
	j.Allowed = j.NotAllowedCode == ""
	j.Selectable = j.Allowed && j.ReasonCode == ""
	return j
}
