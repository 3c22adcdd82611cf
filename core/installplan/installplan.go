// Package installplan decides which collector version a host that is not
// enrolled yet installs to join a fleet (GET /fleets/{name}/install-plan).
// It is the named exception among the consumers of the effective target:
// the plan gives the fleet's effective target, except
//
//   - the version the fleet's version rollout updates from while that
//     rollout is pending, running or waiting for approval: the new host then
//     enrolls as one more agent on the old version, and the planner adds it
//     to the rollout's last wave as a straggler, so that the rollout's waves
//     and approvals still decide when it gets the new version;
//   - nothing yet while the planner has not handled the target: a UI
//     selection it has not planned, or a Git target that differs from what
//     it last recorded. The caller asks again after RetryAfterSeconds.
//
// Decide is pure: the API gathers the input from the store.
package installplan

import (
	"fmt"
	"sort"

	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/releases"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/selection"
)

// Reasons why a plan is not ready.
const (
	// ReasonSelectionNotPlanned: the UI selection has no plannedAt yet.
	ReasonSelectionNotPlanned = "selection_not_planned"
	// ReasonTargetNotPlanned: the planner's last record (the target versions
	// it wrote to the members, or the toRef of the active version rollout)
	// names another version than the effective target.
	ReasonTargetNotPlanned = "target_not_planned"
)

// How long to wait before asking again. The API asks the planner at once
// after a selection (and waits up to 10 s for it), so a selection is
// usually planned within seconds; a Git target waits for the planner's
// run after the revision was applied, or its schedule (every minute).
const (
	RetrySelectionSeconds = 10
	RetryTargetSeconds    = 60
)

// Source of the version of a ready plan: the effective target's source, or
// rollout for the version the active version rollout updates from.
type Source string

const (
	SourceGit     Source = "git"
	SourceUI      Source = "ui"
	SourceRollout Source = "rollout"
)

// Rollout is what the plan needs of the fleet's active version rollout.
type Rollout struct {
	ID       string
	Status   rollout.Status
	ToRef    string
	FromRefs []string // the fromRef of each of its targets (the version the agent ran when it was planned)
}

// Input is what the API knows of the fleet.
type Input struct {
	Fleet        string
	Distribution string
	// Target is the effective target: selection.ResolveVersionTarget over
	// the selection as the conflict rules leave it (selection.Reconciled).
	Target selection.Target
	// Selection is that reconciled selection; nil when none.
	Selection *selection.Selection
	// RecordedVersions are the TargetVersion of every member agent: the
	// planner writes the effective target to all members on every version
	// run, so they are its record of which target it handled.
	RecordedVersions []string
	// Rollout is the fleet's active version rollout (any active status), nil
	// when there is none.
	Rollout *Rollout
}

// Plan is the answer (the schema InstallPlan).
type Plan struct {
	Fleet             string           `json:"fleet"`
	Ready             bool             `json:"ready"`
	Version           string           `json:"version,omitempty"`
	Distribution      string           `json:"distribution,omitempty"`
	Source            Source           `json:"source,omitempty"`
	RolloutID         string           `json:"rolloutId,omitempty"`
	Target            selection.Target `json:"target"`
	Reason            string           `json:"reason,omitempty"`
	Detail            string           `json:"detail"`
	RetryAfterSeconds int              `json:"retryAfterSeconds,omitempty"`
	// NoTarget: the fleet has no target (hold or none), so there is no
	// version to install and waiting does not change that: a person or Git
	// must act. The API answers 409 no_version_target.
	NoTarget bool `json:"-"`
}

// Decide decides the plan. The rules, in order:
//
//	no effective target (hold, none)                 → no target (409)
//	ui target, the selection has no plannedAt         → not ready, selection_not_planned, retry 10 s
//	git target, members record target versions and
//	  none of them is the target                      → not ready, target_not_planned, retry 60 s
//	active version rollout pending, running or
//	  waiting_approval toward another version         → not ready, target_not_planned, retry 60 s
//	the same toward the target                        → ready: the rollout's fromRef (source rollout)
//	otherwise                                          → ready: the effective target (source git or ui)
//
// A Git target is handled once any member records it: the planner writes
// every member in the same run, and a member assigned since (still
// recording its old fleet's target, or none) must not hold the plan up
// until the next run. Members that record nothing at all (a new fleet, or
// no members) are no record against the target: the planner has nothing
// to record for a fleet without members, and the first host would wait
// for ever.
//
// The fromRef of a rollout is per target; the plan takes the one most
// targets share, on a tie the newest version (the smallest step left to
// the target). A rollout none of whose targets had a version falls back to
// the effective target.
func Decide(in Input) Plan {
	p := Plan{Fleet: in.Fleet, Distribution: in.Distribution, Target: in.Target}
	t := in.Target
	if t.Version == "" {
		p.NoTarget = true
		p.Detail = fmt.Sprintf("fleet %s has no target version (source %s): nothing to install until an operator chooses a version or Git sets one", in.Fleet, t.Source)
		return p
	}
	if t.Source == selection.SourceUI && (in.Selection == nil || in.Selection.PlannedAt == nil) {
		return p.wait(ReasonSelectionNotPlanned, RetrySelectionSeconds,
			fmt.Sprintf("the planner has not yet planned the selection of version %s for fleet %s", t.Version, in.Fleet))
	}
	if t.Source == selection.SourceGit {
		if recorded := nonEmpty(in.RecordedVersions); len(recorded) > 0 && !contains(recorded, t.Version) {
			return p.wait(ReasonTargetNotPlanned, RetryTargetSeconds,
				fmt.Sprintf("the planner has not yet handled the Git target %s of fleet %s (its members still record %s)", t.Version, in.Fleet, mostCommon(recorded)))
		}
	}
	if r := in.Rollout; r != nil && updatesFrom(r.Status) {
		if r.ToRef != t.Version {
			return p.wait(ReasonTargetNotPlanned, RetryTargetSeconds,
				fmt.Sprintf("version rollout %s of fleet %s still runs toward %s; the planner has not yet replaced it with one toward %s", r.ID, in.Fleet, r.ToRef, t.Version))
		}
		p.Ready, p.RolloutID = true, r.ID
		if from := fleet.NormalizeVersion(mostCommon(nonEmpty(r.FromRefs))); from != "" {
			p.Version, p.Source = from, SourceRollout
			p.Detail = fmt.Sprintf("version rollout %s (%s) updates fleet %s from %s to %s: install %s, and the rollout updates the host in its last wave",
				r.ID, r.Status, in.Fleet, from, t.Version, from)
			return p
		}
		p.Version, p.Source = t.Version, Source(t.Source)
		p.Detail = fmt.Sprintf("version rollout %s (%s) of fleet %s updates agents that reported no version: install the target %s", r.ID, r.Status, in.Fleet, t.Version)
		return p
	}
	p.Ready, p.Version, p.Source = true, t.Version, Source(t.Source)
	p.Detail = fmt.Sprintf("install the effective target %s of fleet %s (source %s)", t.Version, in.Fleet, t.Source)
	return p
}

func (p Plan) wait(reason string, seconds int, detail string) Plan {
	p.Reason, p.RetryAfterSeconds, p.Detail = reason, seconds, detail
	return p
}

// updatesFrom: the statuses in which a new host joins the rollout as a
// straggler on the old version (pending, running and waiting_approval;
// docs/version-selection.md, "Installing a new host"). A paused, failed or rolling-back rollout takes no
// stragglers the same way, so the host gets the effective target.
func updatesFrom(s rollout.Status) bool {
	return s == rollout.Pending || s == rollout.Running || s == rollout.WaitingApproval
}

func nonEmpty(vs []string) []string {
	var out []string
	for _, v := range vs {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

func contains(vs []string, v string) bool {
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}

// mostCommon is the value most of vs are, on a tie the newest version
// (strings that are no versions lose to versions, then go by text); "" for
// none.
//
// Example: [0.160.0 0.161.0 0.161.0 0.160.0] → 0.161.0 (two each, newer).
func mostCommon(vs []string) string {
	n := map[string]int{}
	for _, v := range vs {
		n[v]++
	}
	keys := make([]string, 0, len(n))
	for k := range n {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if n[a] != n[b] {
			return n[a] > n[b]
		}
		if c, ok := releases.Compare(a, b); ok {
			return c > 0
		}
		_, aOK := releases.Compare(a, a)
		_, bOK := releases.Compare(b, b)
		if aOK != bOK {
			return aOK
		}
		return a < b
	})
	if len(keys) == 0 {
		return ""
	}
	return keys[0]
}
