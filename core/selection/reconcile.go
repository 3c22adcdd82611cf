package selection

import (
	"fmt"
	"time"

	"github.com/myriarch/myriarch/core/audit"
	"github.com/myriarch/myriarch/core/fleet"
)

// Rule is the conflict rule that decided an Outcome.
type Rule string

const (
	RuleK4  Rule = "K4"  // the fleet is gone from Git
	RuleK1  Rule = "K1"  // the Git target changed since the choice
	RuleK2a Rule = "K2a" // Git withdrew the UI control
	RuleK2b Rule = "K2b" // the chosen version left the frame
	RuleK5  Rule = "K5"  // nothing to do
)

// Effect is what the store does with the selection.
type Effect string

const (
	Unchanged  Effect = "unchanged"
	Delete     Effect = "delete"
	Invalidate Effect = "invalidate"
)

// SupersedeReasonNotManaged is the reason of a version rollout that K2b supersedes.
const SupersedeReasonNotManaged = "the fleet no longer manages the collector version"

// Outcome of reconciling one selection with Git.
type Outcome struct {
	Rule   Rule
	Effect Effect
	// Selection is the selection to store for Invalidate (Revision already
	// increased); for the other effects it is the input.
	Selection Selection
	// Audit is the entry to write; nil for K5.
	Audit *audit.Entry
	// SupersedeVersionRollout asks the planner to supersede a running version
	// rollout of the fleet with SupersedeReason. Collectors that already
	// updated stay on their version.
	SupersedeVersionRollout bool
	SupersedeReason         string
}

// Changed reports whether the store has to write (and fleet.updated be sent).
func (o Outcome) Changed() bool { return o.Effect != Unchanged }

// Reconcile applies the conflict rules to one stored selection; f is nil when
// the fleet no longer exists in Git, commit is the applied revision. The
// first matching rule wins:
//
//	K4  fleet gone                                → delete,     fleet.version.removed
//	K1  Git target ≠ gitVersion of the selection  → delete,     fleet.version.superseded
//	K2a frame missing/disabled or executor none   → delete,     fleet.version.superseded
//	K2b active, version outside the frame         → invalidate, fleet.version.invalidated
//	K5  otherwise                                 → unchanged
//
// It is idempotent: an invalidated selection matches neither K2b nor, while
// Git stays as it is, anything else, so widening the frame later does not
// reactivate it. allowDowngrade and requireReason are not looked at: they
// apply only when a version is chosen.
func Reconcile(f *fleet.Fleet, s Selection, commit string, now time.Time) Outcome {
	if f == nil {
		reason := fmt.Sprintf("fleet %s no longer exists in Git", s.Fleet)
		return deleted(RuleK4, s, now, audit.ActionVersionRemoved,
			map[string]any{"version": s.Version, "commit": commit, "reason": reason})
	}
	gitBefore, gitNow := fleet.NormalizeVersion(s.GitVersion), f.GitTarget()
	superseded := func(rule Rule, reason string) Outcome {
		return deleted(rule, s, now, audit.ActionVersionSuperseded, map[string]any{
			"version": s.Version, "gitVersionBefore": gitBefore, "gitVersionNow": gitNow, "commit": commit, "reason": reason,
		})
	}
	switch {
	case gitBefore != gitNow:
		return superseded(RuleK1, gitChange(gitBefore, gitNow))
	case !f.Update.Selection.Enabled:
		return superseded(RuleK2a, "update.selection is disabled in Git")
	case f.UpdateExecutor() == fleet.ExecutorNone:
		return superseded(RuleK2a, "update.executor is none in Git")
	case s.State == Active && !f.Update.Selection.Contains(s.Version):
		return invalidated(f.Update.Selection, s, commit, now)
	}
	return Outcome{Rule: RuleK5, Effect: Unchanged, Selection: s}
}

func deleted(rule Rule, s Selection, now time.Time, action string, details map[string]any) Outcome {
	return Outcome{Rule: rule, Effect: Delete, Selection: s, Audit: gitopsEntry(s.Fleet, now, action, details)}
}

func invalidated(frame fleet.Frame, s Selection, commit string, now time.Time) Outcome {
	reason := fmt.Sprintf("version %s is outside update.selection (%s)", s.Version, frame)
	if commit != "" {
		reason += " as of commit " + commit
	}
	next := s
	next.State, next.StateReason, next.UpdatedAt = Invalidated, reason, now
	next.Revision++
	return Outcome{
		Rule: RuleK2b, Effect: Invalidate, Selection: next,
		Audit: gitopsEntry(s.Fleet, now, audit.ActionVersionInvalidated, map[string]any{
			"version": s.Version, "frame": frame.String(), "commit": commit, "reason": reason,
		}),
		SupersedeVersionRollout: true, SupersedeReason: SupersedeReasonNotManaged,
	}
}

// gitChange says how collector.version moved: changed, newly set or removed.
func gitChange(before, now string) string {
	switch {
	case before == "":
		return fmt.Sprintf("collector.version was set to %s in Git", now)
	case now == "":
		return fmt.Sprintf("collector.version %s was removed from Git", before)
	}
	return fmt.Sprintf("collector.version changed from %s to %s in Git", before, now)
}

func gitopsEntry(fleetName string, at time.Time, action string, details map[string]any) *audit.Entry {
	return &audit.Entry{
		At: at, Actor: audit.ActorGitOps, Action: action,
		TargetType: audit.TargetFleet, TargetID: fleetName,
		Result: audit.ResultSuccess, Details: details,
	}
}
