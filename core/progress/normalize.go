package progress

// Normalize repairs a stored progress for reading. A final target status with
// a phase that is not final (for example after a mass abort, which ends
// targets without deriving their progress) takes its phase from the status,
// and steps still running become skipped for a cancelled target and failed
// otherwise (done for a succeeded one, which marks every step done). A
// consistent value, including one that follows the host, is returned as is.
func Normalize(p *TargetProgress, status string) *TargetProgress {
	if p == nil || !finalStatus(status) || p.Phase.Final() {
		return p
	}
	q := *p
	q.Phase = statusPhase(status)
	q.Steps = cloneSteps(p.Steps)
	for i := range q.Steps {
		finish(&q.Steps[i], StepRunning, runningBecomes(status), nil)
	}
	return &q
}
