package enginetask

import (
	"os"
	"runtime/debug"
)

// GCPercent is the garbage collector's target (GOGC) of a process that
// evaluates whole rollouts: the heap may grow to 5 times what is live
// before the collector runs, instead of twice (GOGC=100).
//
// An evaluation over 100,000 targets allocates about 420 MB and holds about
// 100 MB, and the engine copies the 100,000 targets (25 MB, in one piece
// that cannot be preempted) in each of its rounds. At GOGC=100 collections
// ran during those copies: the copies paid the write barriers, and the
// collector's workers spun waiting for the copying goroutine to stop (of
// 2.65 s sampled, 0.73 s in the workers, 0.53 s of it waiting). At 400 the
// workers took 0.03 s of 1.88 s, for a peak heap of 175-230 MB instead of
// 120 (peak resident 220-265 MB instead of 160-190).
const GCPercent = 400

// SetGC sets GCPercent, unless GOGC is set in the environment, and returns
// a function that sets the previous value again. The memory limit stays
// the process's (GOMEMLIMIT: the functions are given 90 % of their memory,
// infra/functions.go): near it the collector runs as often as it must,
// so that a rollout much larger than 100,000 targets is collected more
// often rather than stopped for memory.
func SetGC() (restore func()) {
	if _, set := os.LookupEnv("GOGC"); set {
		return func() {}
	}
	before := debug.SetGCPercent(GCPercent)
	return func() { debug.SetGCPercent(before) }
}
