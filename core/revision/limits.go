package revision

import (
	"encoding/json"
	"fmt"

	"github.com/myriarch/myriarch/core/issue"
)

// Limits of a revision. They live here, once, because validation
// (revision.Load, behind myrctl validate and /revisions/validate) and apply
// (/revisions, the store) must agree: a revision that validates without an
// error can be applied, and one over a limit is an issue of validation, not
// a failure of the write.
const (
	// MaxConfigBytes is the largest rendered configuration, per fleet:
	// 4 MiB. Generated collector configurations of a few hundred KB exist;
	// the store keeps a large one in chunks (DynamoDB's items hold 400 KB),
	// and the gateway pushes it whole in one OpAMP message.
	MaxConfigBytes = 4 << 20

	// MaxBytes is the largest revision: the bytes of all its files together,
	// 5 MiB. In AWS the API's request, the revision's JSON inside API
	// Gateway's proxy event, must fit a synchronous Lambda invocation of
	// 6 MiB (api.LambdaRequestBytes); the MiB between the two is for the
	// JSON around the files and for escaping them twice (each newline and
	// quote of a YAML file takes two bytes in JSON, and its backslash two
	// more in the event), so that a revision under MaxBytes fits in any
	// ordinary case. One escaped far beyond that is refused by both
	// /revisions/validate and /revisions with 413.
	MaxBytes = 5 << 20

	// MaxObjectBytes is the largest fleet, policy or executor object as the
	// store keeps it (its JSON), 64 KiB: one item each, and a rollout carries
	// a snapshot of its policy and executor object in its own item next to
	// its waves. Real objects are a few
	// KB; the limit is far below DynamoDB's 400 KB so that those items fit
	// too.
	MaxObjectBytes = 64 << 10
)

// checkSizes reports a revision over MaxBytes and an object over
// MaxObjectBytes (configurations are checked as they are read). An object
// is measured as the store writes it, its JSON, not as its YAML file: an
// alias repeated in the file is expanded there.
func checkSizes(files map[string][]byte, rev Revision, fleetFiles []string) issue.List {
	var l issue.List
	total := 0
	for _, b := range files {
		total += len(b)
	}
	if total > MaxBytes {
		l.Errorf(CodeRevisionTooLarge, "", "the files of the revision are %s together, over the limit of %s: split the fleets over several revisions or shrink their configurations", byteSize(total), byteSize(MaxBytes))
	}
	for i, f := range rev.Fleets {
		if n := jsonSize(f); n > MaxObjectBytes {
			l.Errorf(CodeObjectTooLarge, fleetFiles[i], "fleet %q is %s as stored, over the limit of %s for a fleet", f.Name, byteSize(n), byteSize(MaxObjectBytes))
		}
	}
	for _, p := range rev.Policies {
		if n := jsonSize(p); n > MaxObjectBytes {
			l.Errorf(CodeObjectTooLarge, p.Path, "policy %q is %s as stored, over the limit of %s for a policy", p.Name, byteSize(n), byteSize(MaxObjectBytes))
		}
	}
	for _, o := range rev.Executors {
		if n := jsonSize(o); n > MaxObjectBytes {
			l.Errorf(CodeObjectTooLarge, o.Path, "executor %q is %s as stored, over the limit of %s for an executor object", o.Name, byteSize(n), byteSize(MaxObjectBytes))
		}
	}
	return l
}

// jsonSize is the length of v's JSON; a value that does not encode counts
// as 0 here and fails where it is written.
func jsonSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}

// byteSize says a size in bytes and, from 1 KiB, in the unit a person
// compares with: "5242880 bytes (5.0 MiB)".
func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%d bytes (%.1f MiB)", n, float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d bytes (%.1f KiB)", n, float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
