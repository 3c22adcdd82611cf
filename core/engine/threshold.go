package engine

import "github.com/myriarch/myriarch/core/policy"

// ThresholdReached applies the failure threshold of a wave.
//
// It is reached if maxFailed > 0 and failed >= maxFailed, or if
// maxFailedPercent > 0 and failed*100 >= maxFailedPercent*total. If both are 0,
// maxFailed 1 applies; if only maxFailedPercent is set, only the percentage
// rule is used. Example: maxFailedPercent 10 on a wave of 25 targets is
// reached at 3 failed (300 >= 250), not at 2 (200 < 250).
func ThresholdReached(th policy.Threshold, failed, total int) bool {
	if failed <= 0 {
		return false
	}
	maxFailed := th.MaxFailed
	if maxFailed == 0 && th.MaxFailedPercent == 0 {
		maxFailed = policy.DefaultMaxFailed
	}
	if maxFailed > 0 && failed >= maxFailed {
		return true
	}
	return th.MaxFailedPercent > 0 && failed*100 >= th.MaxFailedPercent*total
}
