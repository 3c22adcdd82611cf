package fleet

import "regexp"

// MaxNameLength is the longest fleet name: a DNS label, so that a name fits
// wherever a label does (hostnames, Kubernetes objects, metric labels).
const MaxNameLength = 63

// NamePattern is the shape of a fleet name: lowercase letters, digits and
// '-', starting and ending with a letter or digit, at most MaxNameLength
// characters. Revision validation and the REST API both use it, so a name
// that Git may declare is exactly a name that the API may be asked for.
var NamePattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// ValidName reports whether s is a fleet name of NamePattern.
func ValidName(s string) bool {
	return len(s) <= MaxNameLength && NamePattern.MatchString(s)
}
