// Package issue is the shape of a validation finding shared by every object
// Myriarch validates (policies, fleets, revisions): a stable code that clients
// translate by, a severity, the field path it concerns, and an English message
// a person can act on.
package issue

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Severity of an issue. Only errors make an object invalid.
type Severity string

const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// Issue is one validation finding.
type Issue struct {
	Code     string   `json:"code"`
	Severity Severity `json:"severity"`
	Path     string   `json:"path"`
	Message  string   `json:"message"`
}

func (i Issue) String() string {
	if i.Path == "" {
		return fmt.Sprintf("%s %s: %s", i.Severity, i.Code, i.Message)
	}
	return fmt.Sprintf("%s %s at %s: %s", i.Severity, i.Code, i.Path, i.Message)
}

// List is an ordered collection of issues.
type List []Issue

// Errorf appends an error-severity issue.
func (l *List) Errorf(code, path, format string, args ...any) {
	*l = append(*l, Issue{Code: code, Severity: Error, Path: path, Message: fmt.Sprintf(format, args...)})
}

// Warnf appends a warning-severity issue.
func (l *List) Warnf(code, path, format string, args ...any) {
	*l = append(*l, Issue{Code: code, Severity: Warning, Path: path, Message: fmt.Sprintf(format, args...)})
}

// HasErrors reports whether any issue is an error.
func (l List) HasErrors() bool {
	for _, i := range l {
		if i.Severity == Error {
			return true
		}
	}
	return false
}

// Errors returns only the error-severity issues.
func (l List) Errors() List {
	var out List
	for _, i := range l {
		if i.Severity == Error {
			out = append(out, i)
		}
	}
	return out
}

// WithCode returns the issues that carry code.
func (l List) WithCode(code string) List {
	var out List
	for _, i := range l {
		if i.Code == code {
			out = append(out, i)
		}
	}
	return out
}

// Err turns the error-severity issues into an error, or nil when there are none.
func (l List) Err() error {
	errs := l.Errors()
	if len(errs) == 0 {
		return nil
	}
	return &InvalidError{Issues: errs}
}

// InvalidError carries the issues that made an object invalid.
type InvalidError struct{ Issues List }

func (e *InvalidError) Error() string {
	parts := make([]string, len(e.Issues))
	for i, is := range e.Issues {
		parts[i] = is.String()
	}
	return "invalid: " + strings.Join(parts, "; ")
}

// Child appends a key to a field path: spec.waves, or
// matchAttributes["labels.wave"] when the key is not a plain word (letters,
// digits after the first, '_'), so that every path reads back to one key.
func Child(path, key string) string {
	plain := key != ""
	for i, r := range key {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			plain = false
			break
		}
	}
	switch {
	case !plain:
		return path + "[" + strconv.Quote(Clip(key)) + "]"
	case path == "":
		return key
	default:
		return path + "." + key
	}
}

// Clip cuts user text that a message quotes to 64 bytes, at a character's
// start, with "..." where it was cut.
func Clip(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
