// Package asl parses, validates and evaluates the parts of the Amazon States Language
// (https://states-language.net/spec.html) that the local Step Functions endpoint runs —
// the parts that statemachines/ uses: definitions and their states, reference paths,
// payload templates, choice rules, error names, retriers and catchers. Parse refuses a
// definition that needs any other feature, naming the feature and the state.
//
// The package is pure: no clock, no goroutines, no I/O. JSON values are the Go values
// that encoding/json produces with UseNumber: nil, bool, json.Number, string, []any and
// map[string]any. Numbers stay json.Number so that a number passes through a state
// machine with the text it had (0.0 stays 0.0), as it does on the service.
//
// Paths are Reference Paths (names and indexes), evaluated here rather than by a
// general JSONPath library: the maintained Go libraries accept a larger language and
// report missing fields differently from the service, and a reference path is a few
// lines.
package asl
