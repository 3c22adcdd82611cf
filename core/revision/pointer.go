package revision

import "time"

// Pointer is the pointer to the applied revision: applying a revision
// stores its objects under its commit, then moves this one pointer (a
// conditional write on Version), so that a reader sees one revision whole.
type Pointer struct {
	Commit    string
	Previous  string // the revision applied before, kept for readers that read the old pointer
	AppliedAt time.Time
	Version   int64 // the pointer's write counter: it orders assignments
}
