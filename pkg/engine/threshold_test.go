package engine

import (
	"testing"

	"github.com/myriarch/myriarch/pkg/policy"
)

func TestThresholdReached(t *testing.T) {
	cases := []struct {
		th            policy.Threshold
		failed, total int
		want          bool
	}{
		{policy.Threshold{}, 0, 10, false},                                 // nothing failed
		{policy.Threshold{}, 1, 10, true},                                  // both 0: maxFailed 1 applies
		{policy.Threshold{MaxFailed: 2}, 1, 10, false},                     // one below maxFailed
		{policy.Threshold{MaxFailed: 2}, 2, 10, true},                      // exactly at maxFailed
		{policy.Threshold{MaxFailed: 2}, 3, 10, true},                      // above
		{policy.Threshold{MaxFailedPercent: 10}, 2, 25, false},             // 200 < 250
		{policy.Threshold{MaxFailedPercent: 10}, 3, 25, true},              // 300 >= 250
		{policy.Threshold{MaxFailedPercent: 20}, 2, 10, true},              // exactly 20 %
		{policy.Threshold{MaxFailedPercent: 20}, 1, 10, false},             // only percent set: no maxFailed 1
		{policy.Threshold{MaxFailedPercent: 50, MaxFailed: 5}, 3, 4, true}, // percent reached first
		{policy.Threshold{MaxFailedPercent: 90, MaxFailed: 2}, 2, 10, true},
		{policy.Threshold{MaxFailedPercent: 100}, 0, 0, false}, // empty wave
	}
	for _, c := range cases {
		if got := ThresholdReached(c.th, c.failed, c.total); got != c.want {
			t.Errorf("ThresholdReached(%+v, %d, %d) = %v, want %v", c.th, c.failed, c.total, got, c.want)
		}
	}
}
