package rollout

// Event types: what a rollout tells the world as it moves (the engine's
// decisions, an operator's actions, the planner's replacement). They live
// here, beside the statuses they announce, so that the engine that emits
// them and the catalogue of core/notify that describes them name the same
// constants; docs/notifications.md lists them.
const (
	EventStarted         = "rollout.started"
	EventWaitingApproval = "rollout.waiting_approval"
	EventApproved        = "rollout.approved"
	EventRejected        = "rollout.rejected"
	EventApprovalExpired = "rollout.approval_expired"
	EventStageStarted    = "rollout.stage_started"
	EventStagePassed     = "rollout.stage_passed"
	EventGateRed         = "rollout.gate_red"
	EventFrozen          = "rollout.frozen"
	EventUnfrozen        = "rollout.unfrozen"
	EventFreezeOverride  = "rollout.freeze_override"
	EventPaused          = "rollout.paused"
	EventResumed         = "rollout.resumed"
	EventRetried         = "rollout.retried"
	EventRollingBack     = "rollout.rolling_back"
	EventRolledBack      = "rollout.rolled_back"
	EventCompleted       = "rollout.completed"
	EventFailed          = "rollout.failed"
	EventAborted         = "rollout.aborted"
	EventSuperseded      = "rollout.superseded"
)
