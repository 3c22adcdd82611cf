// Package schema holds the JSON Schemas (draft 2020-12) of the objects of a
// GitOps revision: rolloutpolicy.schema.json (kind RolloutPolicy,
// policies/*.yaml), fleet.schema.json (kind Fleet, fleets/*.yaml) and
// executor.schema.json (kind Executor, executors/*.yaml).
//
// Editors complete and flag fields with them: a file names its schema on its
// first line, relative to the file,
//
//	# yaml-language-server: $schema=../../../api/schema/rolloutpolicy.schema.json
//
// Beside the keywords of the draft, the patterns carry patternErrorMessage,
// which the YAML language server shows instead of the regular expression.
//
// The schemas check the structure of an object; the parsers (core/policy,
// core/fleet, core/executorobject) remain the authority. The test of this
// package proves that they agree: every document a parser accepts, the
// schema accepts, and every structural problem a parser reports, the schema
// reports too; the rules a schema cannot express are listed there with
// their reasons.
package schema

import "embed"

// Files of the schemas, by the kind of their object.
const (
	RolloutPolicyFile = "rolloutpolicy.schema.json"
	FleetFile         = "fleet.schema.json"
	ExecutorFile      = "executor.schema.json"
)

// FS holds the three schema files at its root.
//
//go:embed *.schema.json
var FS embed.FS

// FileOfKind maps the kind of an object to its schema file.
var FileOfKind = map[string]string{
	"RolloutPolicy": RolloutPolicyFile,
	"Fleet":         FleetFile,
	"Executor":      ExecutorFile,
}
