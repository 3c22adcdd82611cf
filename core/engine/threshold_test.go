package engine

import (
	"testing"

	"github.com/myriarch/myriarch/core/policy"
)

func TestThresholdReached(t *testing.T) {
	cases := []struct {
		th            policy.Threshold
		failed, total int
		want          bool
	}{
		{th: policy.Threshold{}, failed: 0, total: 10, want: false},                                  // nothing failed
		{th: policy.Threshold{}, failed: 1, total: 10, want: true},                                   // both 0: maxFailed 1 applies
		{th: policy.Threshold{MaxFailed: 2}, failed: 1, total: 10, want: false},                      // one below maxFailed
		{th: policy.Threshold{MaxFailed: 2}, failed: 2, total: 10, want: true},                       // exactly at maxFailed
		{th: policy.Threshold{MaxFailed: 2}, failed: 3, total: 10, want: true},                       // above
		{th: policy.Threshold{MaxFailedPercent: 10}, failed: 2, total: 25, want: false},              // 200 < 250
		{th: policy.Threshold{MaxFailedPercent: 10}, failed: 3, total: 25, want: true},               // 300 >= 250
		{th: policy.Threshold{MaxFailedPercent: 20}, failed: 2, total: 10, want: true},               // exactly 20 %
		{th: policy.Threshold{MaxFailedPercent: 20}, failed: 1, total: 10, want: false},              // only percent set: no maxFailed 1
		{th: policy.Threshold{MaxFailedPercent: 50, MaxFailed: 5}, failed: 3, total: 4, want: true},  // percent reached first
		{th: policy.Threshold{MaxFailedPercent: 90, MaxFailed: 2}, failed: 2, total: 10, want: true}, // maxFailed reached first
		{th: policy.Threshold{MaxFailedPercent: 100}, failed: 0, total: 0, want: false},              // empty wave
	}
	for _, c := range cases {
		if got := ThresholdReached(c.th, c.failed, c.total); got != c.want {
			t.Errorf("ThresholdReached(%+v, %d, %d) = %v, want %v", c.th, c.failed, c.total, got, c.want)
		}
	}
}
