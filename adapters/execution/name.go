package execution

import "strconv"

// Name is the name of the n-th execution of a rollout: the rollout id for
// the first, then <id>-<n>. A name is unique per state machine, which makes
// every start idempotent.
//
//	Name("r-1", 1) == "r-1"
//	Name("r-1", 3) == "r-1-3"
func Name(rolloutID string, n int) string {
	if n <= 1 {
		return rolloutID
	}
	return rolloutID + "-" + strconv.Itoa(n)
}
