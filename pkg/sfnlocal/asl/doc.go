// Package asl parses, validates and evaluates the parts of the Amazon States Language
// (https://states-language.net/spec.html) that the local Step Functions endpoint runs:
// definitions and their states, paths, payload templates, intrinsic functions, choice
// rules, error names, retriers and catchers.
//
// The package is pure: no clock, no goroutines, no I/O. JSON values are the Go values
// that encoding/json produces with UseNumber: nil, bool, json.Number, string, []any and
// map[string]any. Numbers stay json.Number so that a number passes through a state
// machine with the text it had (0.0 stays 0.0), as it does on the service.
//
// Paths are evaluated by a small evaluator of the restricted syntax that the
// specification allows (see path.go) rather than by a general JSONPath library: the
// maintained Go libraries accept a larger language (scripts, functions, different
// filter semantics) and report missing fields differently from the service, so they do
// not fit the specification exactly.
package asl
