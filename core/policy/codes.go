package policy

import "github.com/myriarch/myriarch/core/issue"

// Issue codes of a RolloutPolicy. They are stable: clients and the CLI match
// on them, and docs/policy.md lists each with an example message.
const (
	CodeYAMLInvalid       = "yaml_invalid"        // not YAML, not one mapping, duplicate key, merge key
	CodeYAMLTagInvalid    = issue.CodeYAMLTag     // an explicit tag (!!int, !!python/object:...), the rule of every object
	CodeAPIVersionInvalid = "api_version_invalid" // apiVersion missing or not myriarch.dev/v1alpha1
	CodeKindInvalid       = "kind_invalid"        // kind missing or not RolloutPolicy
	CodeNameRequired      = "name_required"       // metadata.name missing or empty
	CodeUnknownField      = "unknown_field"       // a key the schema does not know, at any level
	CodeTypeInvalid       = "type_invalid"        // wrong YAML type (a list for a string, 30 for "30s")
	CodeDurationInvalid   = "duration_invalid"    // unparseable or negative duration
	CodeWaveInvalid       = "wave_invalid"        // selector/percent rules of a wave
	CodeWaveNameInvalid   = "wave_name_invalid"   // empty, duplicate or misplaced "rest"
	CodeValueInvalid      = "value_invalid"       // a number or enum out of its range
	CodeWindowInvalid     = "window_invalid"      // bad time of day, weekday, missing start/end
	CodeTimezoneInvalid   = "timezone_invalid"    // not an IANA zone, Local, agent where not allowed
	CodeSelectorInvalid   = "selector_invalid"    // conditions that cannot be read
	CodeBakeInvalid       = "bake_invalid"        // a bake longer than 24h
	// CodeMaxUnavailableInvalid: below 1, a percentage outside 1%..100%.
	CodeMaxUnavailableInvalid = "max_unavailable_invalid"
	// CodeTopologyInvalid: by, parallelRegions, regions, topology attributes.
	CodeTopologyInvalid = "topology_invalid"
	// CodeGateInvalid: health checks (probe URLs, metric queries and
	// thresholds, alert conditions, interval, batchBake).
	CodeGateInvalid = "gate_invalid"
	// CodePlaceholderUnknown: a {name} in a gate's template (a metric
	// query, a CloudWatch dimension, an alarm name or prefix, a probe URL)
	// that the field does not substitute: a typo, or {host} in a metric.
	CodePlaceholderUnknown = "placeholder_unknown"
	// CodeApprovalInvalid: approvalsBetween names no wave, approvals rules.
	CodeApprovalInvalid = "approval_invalid"
	// CodeFreezeInvalid: a freeze without a period, until before from.
	CodeFreezeInvalid = "freeze_invalid"
)

// Codes lists every code, for documentation and tests.
var Codes = []string{
	CodeYAMLInvalid, CodeYAMLTagInvalid, CodeAPIVersionInvalid, CodeKindInvalid, CodeNameRequired,
	CodeUnknownField, CodeTypeInvalid, CodeDurationInvalid, CodeWaveInvalid,
	CodeWaveNameInvalid, CodeValueInvalid, CodeWindowInvalid, CodeTimezoneInvalid,
	CodeSelectorInvalid, CodeBakeInvalid, CodeMaxUnavailableInvalid, CodeTopologyInvalid,
	CodeGateInvalid, CodePlaceholderUnknown, CodeApprovalInvalid, CodeFreezeInvalid,
}
