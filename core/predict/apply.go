package predict

import (
	"slices"
	"time"

	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

// The apply time of a target is how long it takes from its start to the
// moment the engine sees the agent report the change: startedAt →
// verifiedAt. That includes the push of the change, the collector's work
// and the delivery of its report, everything but the health wait, which the
// engine itself counts.

// Defaults when a fleet has too little history: DefaultApplyConfig and
// DefaultApplyVersion are the medians, the pessimistic run takes twice as
// long (a configuration is pushed and reloaded in seconds; a version update
// downloads, installs and restarts the collector).
const (
	DefaultApplyConfig  = 20 * time.Second
	DefaultApplyVersion = 2 * time.Minute
	// MinSamples is how many targets of history it takes to trust it.
	MinSamples = 5
)

// Sources of ApplyTime.
const (
	SourceHistory = "history"
	SourceDefault = "default"
)

// ApplyTime is the apply time a simulation assumes: every target applies
// in Median; the pessimistic run assumes P90.
type ApplyTime struct {
	Median, P90 time.Duration
	Source      string // SourceHistory or SourceDefault
	Samples     int    // targets of history it was drawn from
}

// ApplyTimes draws the apply time of kind k from samples (Samples of the
// fleet's recent targets): with at least MinSamples, their median and 90th
// percentile; else the default of the kind.
func ApplyTimes(k policy.Kind, samples []time.Duration) ApplyTime {
	if len(samples) < MinSamples {
		med := DefaultApplyConfig
		if k == policy.KindVersion {
			med = DefaultApplyVersion
		}
		return ApplyTime{Median: med, P90: 2 * med, Source: SourceDefault, Samples: len(samples)}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	return ApplyTime{Median: quantile(s, 50), P90: quantile(s, 90), Source: SourceHistory, Samples: len(s)}
}

// quantile is the nearest-rank percentile p of sorted samples: the
// smallest sample at or above p percent of them, at rank ⌈p·n/100⌉.
// Example: 10 samples, p 90 → rank 9, the 9th smallest; p 50 → rank 5.
func quantile(sorted []time.Duration, p int) time.Duration {
	rank := (p*len(sorted) + 99) / 100
	return sorted[max(rank, 1)-1]
}

// Samples are the apply times of targets that reported the change
// (startedAt → verifiedAt), in the order of ts.
func Samples(ts []rollout.Target) []time.Duration {
	var out []time.Duration
	for _, t := range ts {
		if t.StartedAt == nil || t.VerifiedAt == nil {
			continue
		}
		if d := t.VerifiedAt.Sub(*t.StartedAt); d >= 0 {
			out = append(out, d)
		}
	}
	return out
}

// seconds is d in seconds, to the millisecond.
func seconds(d time.Duration) float64 { return float64(d.Milliseconds()) / 1000 }
