package selection

import (
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/myriarch/myriarch/core/audit"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/issue"
)

// MaxReasonChars bounds the reason of select and clear (in characters).
const MaxReasonChars = 500

// Problem codes of select and clear. The 412 codes are the notAllowedCodes;
// a 422 carries issues with the codes below.
const (
	CodeFleetNotFound     = "fleet_not_found"    // 404
	CodeRequestInvalid    = "request_invalid"    // 400
	CodeTargetChanged     = "target_changed"     // 409
	CodeSelectionRejected = "selection_rejected" // 422, see Issues
)

// Issue codes of a 422 (issues[].code).
const (
	IssueVersionNotAllowed    = "version_not_allowed"
	IssueDowngradeNotAllowed  = "downgrade_not_allowed"
	IssueUnknownVersion       = "unknown_version"
	IssuePrereleaseNotAllowed = "prerelease_not_allowed"
	IssueReasonRequired       = "reason_required"
)

// Decision is the part that select and clear share: the HTTP status, on a
// refusal the problem (a stable code, an English detail and for 422 the
// issues), the effective target after the decision, and the audit entry to
// write for successes and refusals alike.
type Decision struct {
	Status int
	Code   string
	Detail string
	Issues issue.List
	Target Target
	Noop   bool // 200 and nothing changed
	Audit  audit.Entry
}

// Input is what select and clear know of the fleet and the caller.
type Input struct {
	FleetName      string       // from the path, also when the fleet does not exist
	Fleet          *fleet.Fleet // nil: not in Git (404)
	Selection      *Selection   // as stored; nil when none
	Actor          string       // user:<uuid> or token:<uuid>
	MemberVersions []string     // reported versions of the member agents
	Now            time.Time
}

// check is one refusal; the zero value lets the request pass.
type check struct {
	status int
	code   string
	detail string
	issues issue.List
}

func (c check) refused() bool { return c.status != 0 }

// badReason is the 400 of a reason that is too long, shared by select and clear.
func badReason(reason string) check {
	if n := utf8.RuneCountInString(reason); n > MaxReasonChars {
		return check{http.StatusBadRequest, CodeRequestInvalid,
			fmt.Sprintf("reason has %d characters, more than %d", n, MaxReasonChars), nil}
	}
	return check{}
}

// reasonRequired is the 422 issue when the frame wants a reason and got
// none. A disabled frame declares nothing, so it requires nothing either.
func reasonRequired(f *fleet.Fleet, reason string) issue.List {
	var l issue.List
	if fr := f.Update.Selection; fr.Enabled && fr.RequireReason && reason == "" {
		l.Errorf(IssueReasonRequired, "reason", "update.selection.requireReason is set: a reason is required")
	}
	return l
}

func fleetMissing(name string) check {
	return check{http.StatusNotFound, CodeFleetNotFound, fmt.Sprintf("fleet %s does not exist", name), nil}
}

func unprocessable(l issue.List) check {
	msgs := make([]string, len(l))
	for i, is := range l {
		msgs[i] = is.Message
	}
	return check{http.StatusUnprocessableEntity, CodeSelectionRejected, strings.Join(msgs, "; "), l}
}

// entry is the audit entry of an operator action; a refusal has result
// failure and names the problem in details.error (English) and details.code.
func entry(c Input, action string, refusal check, details map[string]any) audit.Entry {
	e := audit.Entry{
		At: c.Now, Actor: c.Actor, Action: action, TargetType: audit.TargetFleet, TargetID: c.FleetName,
		Result: audit.ResultSuccess, Details: details,
	}
	if refusal.refused() {
		e.Result = audit.ResultFailure
		details["error"] = refusal.detail
		details["code"] = refusal.code
	}
	return e
}

func gitVersion(f *fleet.Fleet) string {
	if f == nil {
		return ""
	}
	return f.GitTarget()
}

func describe(t Target) string {
	if t.Version == "" {
		return fmt.Sprintf("no target (source %s)", t.Source)
	}
	return fmt.Sprintf("%s (source %s)", t.Version, t.Source)
}
