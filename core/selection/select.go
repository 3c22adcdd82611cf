package selection

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/myriarch/myriarch/core/audit"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/issue"
)

// SelectRequest is the body of selectFleetVersion.
type SelectRequest struct {
	Version string `json:"version"`
	Reason  string `json:"reason,omitempty"`
	// ExpectedTargetVersion guards against a concurrent change: nil means not
	// given; "" means "no target".
	ExpectedTargetVersion *string `json:"expectedTargetVersion,omitempty"`
}

// SelectInput is what selectFleetVersion knows.
type SelectInput struct {
	Input
	Request              SelectRequest
	GitCommit            string          // the applied Git revision
	Releases             []string        // known releases; the catalog is authoritative
	ActiveVersionRollout *RolloutSummary // the fleet's active version rollout, if any
}

// SelectDecision adds to Decision the selection to store (nil: nothing) and
// the message of a 200. planned and rolloutId are the API's, after it asked
// the planner; it may add rolloutId to the audit details then.
type SelectDecision struct {
	Decision
	Store   *Selection
	Message string
}

// DecideSelect decides selectFleetVersion. The checks run in this order and
// the first refusal answers:
//
//	404 fleet_not_found      the fleet is not in Git
//	400 request_invalid      version empty or not a semantic version, reason over 500 characters
//	412 selection_disabled | no_executor | blocking_rollout
//	409 target_changed       expectedTargetVersion differs from the effective target
//	200 noop                 the version already is the effective target: nothing stored
//	422 selection_rejected   issues: the version's (unknown_version, prerelease_not_allowed,
//	                         version_not_allowed, downgrade_not_allowed: the first that
//	                         applies) and reason_required
//
// 412 comes before 409 because no expectation makes a refused fleet
// selectable; the noop comes before 422 because nothing is chosen, so
// neither the frame nor requireReason has anything to judge. A leading v
// of the version is trimmed.
func DecideSelect(in SelectInput) SelectDecision {
	f := in.Fleet
	cur := Reconciled(f, in.Selection)
	before := ResolveVersionTarget(f, cur)
	version := fleet.NormalizeVersion(in.Request.Version)
	reason := strings.TrimSpace(in.Request.Reason)
	details := map[string]any{
		"version": version, "reason": reason, "previousVersion": before.Version, "previousSource": string(before.Source),
		"gitVersion": gitVersion(f), "gitCommit": in.GitCommit, "noop": false,
	}
	c := selectChecks(in, cur, before, version, reason)
	if c.refused() {
		return SelectDecision{Decision: Decision{
			Status: c.status, Code: c.code, Detail: c.detail, Issues: c.issues, Target: before,
			Audit: entry(in.Input, audit.ActionVersionSelect, c, details),
		}}
	}
	if version == before.Version {
		details["noop"] = true
		if cur != nil && cur.RolloutID != "" {
			details["rolloutId"] = cur.RolloutID
		}
		return SelectDecision{
			Decision: Decision{Status: http.StatusOK, Target: before, Noop: true, Audit: entry(in.Input, audit.ActionVersionSelect, check{}, details)},
			Message:  fmt.Sprintf("version %s is already the effective target of fleet %s (source %s); nothing changed", version, f.Name, before.Source),
		}
	}
	next := &Selection{
		Fleet: f.Name, Version: version, State: Active,
		GitVersion: f.GitTarget(), GitCommit: in.GitCommit,
		SelectedBy: in.Actor, SelectedAt: in.Now, Reason: reason, UpdatedAt: in.Now,
		Revision: 1,
	}
	if in.Selection != nil {
		next.Revision = in.Selection.Revision + 1
	}
	return SelectDecision{
		Decision: Decision{Status: http.StatusOK, Target: Target{Version: version, Source: SourceUI}, Audit: entry(in.Input, audit.ActionVersionSelect, check{}, details)},
		Store:    next,
		Message:  fmt.Sprintf("version %s selected for fleet %s", version, f.Name),
	}
}

// selectChecks runs the checks of DecideSelect up to the noop and the 422.
func selectChecks(in SelectInput, cur *Selection, before Target, version, reason string) check {
	f := in.Fleet
	if f == nil {
		return fleetMissing(in.FleetName)
	}
	if c := badSelectRequest(in.Request.Version, version, in.Request.Reason); c.refused() {
		return c
	}
	if code := notAllowed(f, in.ActiveVersionRollout); code != "" {
		return check{http.StatusPreconditionFailed, code, notAllowedDetail(code, f, in.ActiveVersionRollout), nil}
	}
	if exp := in.Request.ExpectedTargetVersion; exp != nil && fleet.NormalizeVersion(*exp) != before.Version {
		return check{http.StatusConflict, CodeTargetChanged, fmt.Sprintf(
			"the effective target of fleet %s is %s, but the request expected %s; someone else changed it",
			f.Name, describe(before), expected(*exp)), nil}
	}
	if version == before.Version {
		return check{}
	}
	var l issue.List
	ch := newChooser(f, cur, in.Releases, in.MemberVersions)
	versionIssue(&l, ch, version)
	l = append(l, reasonRequired(f, reason)...)
	if len(l) > 0 {
		return unprocessable(l)
	}
	return check{}
}

func badSelectRequest(raw, version, reason string) check {
	switch {
	case raw == "":
		return check{http.StatusBadRequest, CodeRequestInvalid, "version is required", nil}
	case !validVersion(version):
		return check{http.StatusBadRequest, CodeRequestInvalid, fmt.Sprintf("version %q is not a semantic version", raw), nil}
	}
	return badReason(reason)
}

// validVersion is a strict check: the leading v was trimmed once already.
func validVersion(v string) bool {
	_, err := semver.StrictNewVersion(v)
	return err == nil
}

// versionIssue turns the reasonCode of the version into the 422 issue.
func versionIssue(l *issue.List, c chooser, v string) {
	switch c.reason(v) {
	case ReasonUnknownVersion:
		l.Errorf(IssueUnknownVersion, "version", "version %s is not a known release", v)
	case ReasonPrereleaseNotAllowed:
		l.Errorf(IssuePrereleaseNotAllowed, "version", "version %s is a prerelease, which update.selection (%s) does not admit", v, c.frame)
	case ReasonOutsideFrame:
		l.Errorf(IssueVersionNotAllowed, "version", "version %s is outside update.selection (%s)", v, c.frame)
	case ReasonDowngradeNotAllowed:
		ref := "the current target"
		if !c.refIsGoal {
			ref = "the highest version among the fleet members"
		}
		l.Errorf(IssueDowngradeNotAllowed, "version", "version %s is lower than %s, %s, and update.selection.allowDowngrade is false", v, c.reference, ref)
	}
}

func notAllowedDetail(code string, f *fleet.Fleet, active *RolloutSummary) string {
	switch code {
	case NotAllowedSelectionDisabled:
		return fmt.Sprintf("fleet %s does not let operators choose the version: update.selection is not enabled", f.Name)
	case NotAllowedNoExecutor:
		return fmt.Sprintf("fleet %s has no update executor (update.executor is none)", f.Name)
	}
	return fmt.Sprintf("version rollout %s of fleet %s is %s; abort it first", active.ID, f.Name, active.Status)
}

func expected(v string) string {
	if v == "" {
		return "no target"
	}
	return fleet.NormalizeVersion(v)
}
