package selection

import (
	"net/http"
	"strings"

	"github.com/myriarch/myriarch/core/audit"
)

// ClearInput is what clearFleetVersionSelection knows.
type ClearInput struct {
	Input
	Reason string
}

// ClearDecision adds to Decision the stored selection to delete (nil:
// nothing; the store deletes on the condition that its revision is still
// Delete.Revision) and whether the Git target that applies again is lower
// than the cleared version or than a member's version, which the UI warns
// about: the updater refuses most downgrades.
type ClearDecision struct {
	Decision
	Delete            *Selection
	PossibleDowngrade bool
}

// DecideClear decides clearFleetVersionSelection, allowed even when the frame
// is disabled and while a version rollout is failed or rolling_back (clearing
// is a way out after a rollback, docs/version-selection.md "Downgrades"). It clears the stored
// selection even when Git already superseded it and the planner has not yet
// deleted it: the end state is the same and the operator's intent is audited.
// The checks in order:
//
//	404 fleet_not_found     the fleet is not in Git
//	400 request_invalid     reason over 500 characters
//	200 noop                no stored selection: the current target
//	422 selection_rejected  reason_required (requireReason of an enabled frame)
//	200                     the selection is deleted and the Git target applies
func DecideClear(in ClearInput) ClearDecision {
	f, stored := in.Fleet, in.Selection
	cur := Reconciled(f, stored)
	before := ResolveVersionTarget(f, cur)
	reason := strings.TrimSpace(in.Reason)
	details := map[string]any{"version": "", "reason": reason, "gitVersion": gitVersion(f), "noop": false}
	if stored != nil {
		details["version"] = stored.Version
	}
	refuse := func(c check) ClearDecision {
		return ClearDecision{Decision: Decision{
			Status: c.status, Code: c.code, Detail: c.detail, Issues: c.issues, Target: before,
			Audit: entry(in.Input, audit.ActionVersionClear, c, details),
		}}
	}
	if f == nil {
		return refuse(fleetMissing(in.FleetName))
	}
	if c := badReason(in.Reason); c.refused() {
		return refuse(c)
	}
	if stored == nil {
		details["noop"] = true
		return ClearDecision{Decision: Decision{
			Status: http.StatusOK, Target: before, Noop: true, Audit: entry(in.Input, audit.ActionVersionClear, check{}, details),
		}}
	}
	if l := reasonRequired(f, reason); len(l) > 0 {
		return refuse(unprocessable(l))
	}
	after := ResolveVersionTarget(f, nil)
	return ClearDecision{
		Decision:          Decision{Status: http.StatusOK, Target: after, Audit: entry(in.Input, audit.ActionVersionClear, check{}, details)},
		Delete:            stored,
		PossibleDowngrade: after.Version != "" && (below(after.Version, before.Version) || below(after.Version, highest(in.MemberVersions))),
	}
}
