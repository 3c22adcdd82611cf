package enginetask

import (
	"context"
	"time"

	"github.com/myriarch/myriarch/core/audit"
	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/rollout"
)

// AuditLog receives the audit entries of decisions nobody took through the
// API: an approval that expired is decided by the engine, at its deadline,
// and must be audited like an approval or a rejection.
type AuditLog interface {
	AppendAudit(ctx context.Context, es []audit.Entry) error
}

// auditedEvents are the engine events that are decisions of their own, by
// the audit action they are recorded as.
var auditedEvents = map[string]string{
	rollout.EventApprovalExpired: "rollout.approval_expire",
}

// SystemActor is the actor of the engine's own decisions.
const SystemActor = "system"

// audit records the audited events of a stored evaluation; a failure is logged,
// since what it records has already happened.
func (p Evaluator) audit(ctx context.Context, res engine.Result, now time.Time) {
	if p.Audit == nil {
		return
	}
	var es []audit.Entry
	for _, e := range res.Events {
		if action, ok := auditedEvents[e.Type]; ok {
			es = append(es, audit.Entry{At: now.UTC(), Actor: SystemActor, Action: action, TargetType: "rollout",
				TargetID: res.Rollout.ID, Result: audit.ResultSuccess, Details: map[string]any{"reason": e.Reason}})
		}
	}
	if len(es) == 0 {
		return
	}
	if err := p.Audit.AppendAudit(ctx, es); err != nil {
		p.logger().Error("write audit entries", "rollout", res.Rollout.ID, "error", err.Error())
	}
}
