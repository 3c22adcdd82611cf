package selection

import (
	"github.com/myriarch/myriarch/core/fleet"
)

// Why a fleet refuses any selection (FleetVersionOptions.notAllowedCode, and
// the problem code of the 412 of select).
const (
	NotAllowedSelectionDisabled = "selection_disabled" // frame missing or disabled
	NotAllowedNoExecutor        = "no_executor"        // update.executor is none
	NotAllowedBlockingRollout   = "blocking_rollout"   // a version rollout is failed or rolling_back
)

// Why one version is not selectable (VersionOption.reasonCode). When several
// apply, the first in this order wins: it is the one the operator can least
// change, and current_target is not a refusal at all.
const (
	ReasonCurrentTarget        = "current_target"
	ReasonUnknownVersion       = "unknown_version"
	ReasonPrereleaseNotAllowed = "prerelease_not_allowed"
	ReasonOutsideFrame         = "outside_frame"
	ReasonDowngradeNotAllowed  = "downgrade_not_allowed"
)

// OptionsInput is what getFleetVersionOptions knows of a fleet.
type OptionsInput struct {
	Fleet                *fleet.Fleet    // nil: the fleet does not exist
	Selection            *Selection      // as stored; nil when none
	Releases             []string        // known releases of the distribution; the catalog is authoritative
	MemberVersions       []string        // reported versions of the member agents (downgrade reference without a target)
	ActiveVersionRollout *RolloutSummary // the fleet's active version rollout, if any
}

// FleetVersionOptions is the answer of getFleetVersionOptions. platforms[]
// comes from the release catalog and is the API's to add.
type FleetVersionOptions struct {
	Allowed        bool            `json:"allowed"`
	NotAllowedCode string          `json:"notAllowedCode,omitempty"`
	Target         Target          `json:"target"`
	Executor       fleet.Executor  `json:"executor"`
	VersionPolicy  string          `json:"versionPolicy"` // the policy a UI choice would roll out with
	ActiveRollout  *RolloutSummary `json:"activeRollout,omitempty"`
	Options        []VersionOption `json:"options"`
}

// VersionOption is one candidate version.
type VersionOption struct {
	Version     string `json:"version"`
	Selectable  bool   `json:"selectable"`
	ReasonCode  string `json:"reasonCode,omitempty"`
	IsGitTarget bool   `json:"isGitTarget"`
	IsSelected  bool   `json:"isSelected"` // the version of the stored selection, active or invalidated
	Prerelease  bool   `json:"prerelease"`
}

// Options lists the versions an operator may choose, newest first. It works
// for every fleet: without an enabled frame only the Git target is listed.
// While allowed is false no option is selectable; reasonCode then still
// names what speaks against the version itself.
func Options(in OptionsInput) FleetVersionOptions {
	out := FleetVersionOptions{ActiveRollout: in.ActiveVersionRollout, Options: []VersionOption{}}
	f := in.Fleet
	if f == nil {
		out.Target = ResolveVersionTarget(nil, nil)
		out.NotAllowedCode = NotAllowedSelectionDisabled
		return out
	}
	cur := Reconciled(f, in.Selection)
	c := newChooser(f, cur, in.Releases, in.MemberVersions)
	out.Target = c.target
	out.Executor = f.UpdateExecutor()
	out.VersionPolicy = f.SelectionPolicyName()
	out.NotAllowedCode = notAllowed(f, in.ActiveVersionRollout)
	out.Allowed = out.NotAllowedCode == ""
	for _, v := range candidates(f, cur, in.Releases) {
		reason := c.reason(v)
		out.Options = append(out.Options, VersionOption{
			Version: v, Selectable: out.Allowed && reason == "", ReasonCode: reason,
			IsGitTarget: v == f.GitTarget(), IsSelected: cur != nil && cur.Version == v, Prerelease: isPrerelease(v),
		})
	}
	return out
}

// notAllowed is the first reason why the fleet refuses every selection.
func notAllowed(f *fleet.Fleet, active *RolloutSummary) string {
	switch {
	case !f.Update.Selection.Enabled:
		return NotAllowedSelectionDisabled
	case f.UpdateExecutor() == fleet.ExecutorNone:
		return NotAllowedNoExecutor
	case active.blocking():
		return NotAllowedBlockingRollout
	}
	return ""
}

// candidates are the Git target and, with an enabled frame, the known
// non-prerelease releases inside it, the entries of versions and the
// version of the selection; deduplicated, newest first.
func candidates(f *fleet.Fleet, cur *Selection, releases []string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(v string) {
		v = fleet.NormalizeVersion(v)
		if v != "" && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	add(f.GitTarget())
	if frame := f.Update.Selection; frame.Enabled {
		for _, r := range releases {
			if !isPrerelease(r) && frame.Contains(r) {
				add(r)
			}
		}
		for _, v := range frame.Versions {
			add(v)
		}
		if cur != nil {
			add(cur.Version)
		}
	}
	sortNewestFirst(out)
	return out
}

// chooser judges one version for a fleet: what the frame, the release
// catalog and the downgrade rule say about it.
type chooser struct {
	frame     fleet.Frame
	known     map[string]bool
	target    Target
	reference string // downgrade reference: the effective target, else the highest member version
	refIsGoal bool   // reference is the effective target (for messages)
}

func newChooser(f *fleet.Fleet, cur *Selection, releases, members []string) chooser {
	c := chooser{frame: f.Update.Selection, known: map[string]bool{}, target: ResolveVersionTarget(f, cur)}
	for _, r := range releases {
		c.known[fleet.NormalizeVersion(r)] = true
	}
	c.reference, c.refIsGoal = c.target.Version, true
	if c.reference == "" {
		c.reference, c.refIsGoal = highest(members), false
	}
	return c
}

// reason is the reasonCode of v, "" when selectable (order: see the constants).
func (c chooser) reason(v string) string {
	inFrame := c.frame.Contains(v)
	switch {
	case c.target.Version != "" && v == c.target.Version:
		return ReasonCurrentTarget
	case !c.known[v]:
		return ReasonUnknownVersion
	case !inFrame && isPrerelease(v) && c.frame.ContainsIncludingPrereleases(v):
		return ReasonPrereleaseNotAllowed
	case !inFrame:
		return ReasonOutsideFrame
	case !c.frame.AllowDowngrade && below(v, c.reference):
		return ReasonDowngradeNotAllowed
	}
	return ""
}
