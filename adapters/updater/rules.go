package updater

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// The host rules' errors, for errors.Is.
var (
	ErrURLNotAllowed = errors.New("download URL not allowed")
	ErrDowngrade     = errors.New("downgrade refused")
	ErrBadVersion    = errors.New("not a semantic version")
	ErrNotVerified   = errors.New("archive not verified")
)

// AllowedURL is the rule on where an archive may come from: an http(s) URL
// that starts with one of the prefixes, without user info and without dot
// segments (a mirror could resolve /otelcol/../ out of the allowed prefix).
// The prefixes come from the host's configuration, never from the server,
// so that a compromised server cannot point the host at a file of its
// choice. Example: prefix "https://mirror.example/otelcol/" allows
// "https://mirror.example/otelcol/0.150.0/a.tar.gz", not
// "https://mirror.example/other/a.tar.gz".
func AllowedURL(raw string, prefixes []string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: %q does not parse: %v", ErrURLNotAllowed, raw, err)
	}
	if u.Scheme != "https" && u.Scheme != "http" || u.User != nil || dotSegments(u.Path) {
		return fmt.Errorf("%w: %q is not a plain http(s) URL", ErrURLNotAllowed, raw)
	}
	for _, p := range prefixes {
		if p != "" && strings.HasPrefix(raw, p) {
			return nil
		}
	}
	return fmt.Errorf("%w: %q starts with none of the allowed prefixes %q", ErrURLNotAllowed, raw, prefixes)
}

func dotSegments(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

// bare drops surrounding space and one leading v: "v0.150.0" → "0.150.0".
func bare(v string) string { return strings.TrimPrefix(strings.TrimSpace(v), "v") }

// parseVersion takes a strict X.Y.Z[-pre][+meta] version. Strict also keeps
// it a safe directory name: digits, letters, '.', '-' and '+' only.
func parseVersion(v string) (*semver.Version, error) {
	sv, err := semver.StrictNewVersion(v)
	if err != nil || path.Base(v) != v {
		return nil, fmt.Errorf("%w: %q", ErrBadVersion, v)
	}
	return sv, nil
}

// checkVersion is the downgrade rule: an offer lower than the running
// version is refused, except the one-step return to the previous version
// (whose directory the last switch kept). Nothing running ("") compares
// with nothing: the first install is taken.
//
//	offered  current  previous  result
//	0.150.0  0.149.0  0.148.0   ok (upgrade)
//	0.148.0  0.149.0  0.148.0   ok (the one-step return)
//	0.147.0  0.149.0  0.148.0   refused
//	0.148.0  0.149.0  ""        refused
//	0.150.0  ""       ""        ok (first install)
func checkVersion(offered, current, previous string) error {
	o, err := parseVersion(offered)
	if err != nil {
		return fmt.Errorf("offered version: %w", err)
	}
	if current == "" {
		return nil
	}
	c, err := parseVersion(current)
	if err != nil {
		return fmt.Errorf("running version, which an offer must not be lower than: %w", err)
	}
	if !o.LessThan(c) || offered == previous {
		return nil
	}
	if previous == "" {
		return fmt.Errorf("%w: %s is lower than the running %s, and there is no previous version to return to", ErrDowngrade, offered, current)
	}
	return fmt.Errorf("%w: %s is lower than the running %s; only the one-step return to the previous version %s is allowed", ErrDowngrade, offered, current, previous)
}
