// Package fleettest holds the documents of the Fleet parser's table tests
// with what Parse and Validate must say of each, so that another test can run
// on the same documents: core/fleet's tests check the parser against them, and
// api/schema's test checks that the JSON Schema agrees with the parser. A row
// added here is checked by both.
package fleettest

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/issue"
)

// Full is a fleet with every field set.
const Full = `
apiVersion: myriarch.dev/v1alpha1
kind: Fleet
metadata: {name: edge-gateway}
spec:
  collector:
    distribution: otelcol-contrib
    version: v0.161.0
  update:
    executor: webhook
    executorRef: ansible-hook
    selection:
      enabled: true
      versionRange: ">=0.161.0, <=0.162.0"
      allowDowngrade: true
      requireReason: true
      rolloutPolicy: ui-canary
  rollout:
    configPolicy: cfg
    versionPolicy: gateway-version
  selector:
    matchAttributes: {labels.role: gateway, site.region: eu}
  config:
    hash: sha256:abc
`

// Defaults is a fleet with an empty selection block: every default.
const Defaults = "apiVersion: myriarch.dev/v1alpha1\nkind: Fleet\nmetadata: {name: a}\nspec:\n  update:\n    selection:\n"

const head = "apiVersion: myriarch.dev/v1alpha1\nkind: Fleet\nmetadata: {name: a}\n"

// ParseIssue is a document with one problem: Parse reports exactly Want.
type ParseIssue struct {
	Name string
	Doc  string
	Want issue.Issue
}

// ParseIssues are the structural problems Parse reports.
var ParseIssues = []ParseIssue{
	{"misspelled versionrange", head + "spec: {update: {selection: {versionrange: '>=1.0.0'}}}", issue.Issue{Code: "unknown_field", Severity: issue.Error, Path: "spec.update.selection.versionrange", Message: `unknown field "versionrange" in spec.update.selection (did you mean "versionRange"?)`}},
	{"unknown top-level key", head + "status: {}", issue.Issue{Code: "unknown_field", Severity: issue.Error, Path: "status", Message: `unknown field "status"`}},
	{"unknown spec key", head + "spec: {waves: []}", issue.Issue{Code: "unknown_field", Severity: issue.Error, Path: "spec.waves", Message: `unknown field "waves" in spec`}},
	{"enabled as a string", head + "spec: {update: {selection: {enabled: 'yes'}}}", issue.Issue{Code: "field_invalid", Severity: issue.Error, Path: "spec.update.selection.enabled", Message: "spec.update.selection.enabled must be true or false"}},
	{"versions as a scalar", head + "spec: {update: {selection: {versions: 0.1.0}}}", issue.Issue{Code: "field_invalid", Severity: issue.Error, Path: "spec.update.selection.versions", Message: "spec.update.selection.versions must be a list"}},
	{"versions entry a mapping", head + "spec: {update: {selection: {versions: [{a: b}]}}}", issue.Issue{Code: "field_invalid", Severity: issue.Error, Path: "spec.update.selection.versions[0]", Message: "spec.update.selection.versions[0] must be a string"}},
	{"spec as a list", head + "spec: [a]", issue.Issue{Code: "field_invalid", Severity: issue.Error, Path: "spec", Message: "spec must be a mapping"}},
	{"version as a mapping", head + "spec: {collector: {version: {a: 1}}}", issue.Issue{Code: "field_invalid", Severity: issue.Error, Path: "spec.collector.version", Message: "spec.collector.version must be a string"}},
	{"matchAttributes value a list", head + "spec: {selector: {matchAttributes: {a: [1]}}}", issue.Issue{Code: "field_invalid", Severity: issue.Error, Path: "spec.selector.matchAttributes.a", Message: "spec.selector.matchAttributes.a must be a string"}},
	{"key listed twice", head + "spec: {rollout: {versionPolicy: a, versionPolicy: b}}", issue.Issue{Code: "field_invalid", Severity: issue.Error, Path: "spec.rollout.versionPolicy", Message: "spec.rollout.versionPolicy is listed twice"}},
	{"not YAML", "a: [", issue.Issue{Code: "yaml_invalid", Severity: issue.Error, Path: "", Message: "the document is not valid YAML: yaml: line 1: did not find expected node content"}},
	{"empty document", "", issue.Issue{Code: "yaml_invalid", Severity: issue.Error, Path: "", Message: "the document is empty"}},
	{"top level a list", "- a", issue.Issue{Code: "yaml_invalid", Severity: issue.Error, Path: "", Message: "the document must be a mapping with apiVersion, kind, metadata and spec"}},
	{"apiVersion missing", "kind: Fleet", issue.Issue{Code: "field_required", Severity: issue.Error, Path: "apiVersion", Message: "apiVersion is required (myriarch.dev/v1alpha1)"}},
	{"apiVersion wrong", "apiVersion: v1\nkind: Fleet", issue.Issue{Code: "field_invalid", Severity: issue.Error, Path: "apiVersion", Message: `apiVersion "v1" is not myriarch.dev/v1alpha1`}},
	{"kind missing", "apiVersion: myriarch.dev/v1alpha1", issue.Issue{Code: "field_required", Severity: issue.Error, Path: "kind", Message: "kind is required (Fleet)"}},
	{"kind wrong", "apiVersion: myriarch.dev/v1alpha1\nkind: RolloutPolicy", issue.Issue{Code: "field_invalid", Severity: issue.Error, Path: "kind", Message: `kind "RolloutPolicy" is not Fleet`}},
}

// Base is a valid fleet with an enabled frame; the Validate cases edit it.
const Base = `apiVersion: myriarch.dev/v1alpha1
kind: Fleet
metadata: {name: edge-gateway}
spec:
  collector: {version: 0.161.0}
  update: {executor: updater, selection: {enabled: true, versionRange: ">=0.161.0, <=0.162.0"}}
  rollout: {versionPolicy: gateway-version}
`

// Fragments of Base that the cases edit.
const (
	rangeField = `versionRange: ">=0.161.0, <=0.162.0"`
	selection  = `, selection: {enabled: true, ` + rangeField + `}`
	collector  = "  collector: {version: 0.161.0}\n"
)

// Edit is Base with each old string of the pairs (old, new, old, new, ...)
// replaced by its new one. An old string must occur in Base exactly once.
func Edit(pairs ...string) string {
	doc := Base
	for i := 0; i+1 < len(pairs); i += 2 {
		if n := strings.Count(doc, pairs[i]); n != 1 {
			panic(fmt.Sprintf("fleettest.Edit: %q occurs %d times", pairs[i], n))
		}
		doc = strings.Replace(doc, pairs[i], pairs[i+1], 1)
	}
	return doc
}

// Policies are the RolloutPolicy objects the Validate cases' revision has.
var Policies = []string{"gateway-version"}

// PolicyExists answers Validate's question with Policies.
func PolicyExists(name string) bool {
	for _, p := range Policies {
		if p == name {
			return true
		}
	}
	return false
}

// ValidateCase is a document that Parse reads without an issue and of which
// Validate, with PolicyExists, reports exactly Want.
type ValidateCase struct {
	Name string
	Doc  string
	Want issue.List
}

func errIssue(code, path, msg string) issue.Issue {
	return issue.Issue{Code: code, Severity: issue.Error, Path: path, Message: msg}
}

func warnIssue(code, path, msg string) issue.Issue {
	return issue.Issue{Code: code, Severity: issue.Warning, Path: path, Message: msg}
}

const sel = "spec.update.selection"

// ValidateCases are the rules of spec/version-selection.md ("Validation
// rules") and the executor, name and policy references.
var ValidateCases = []ValidateCase{
	{"valid fleet", Base, nil},
	{"enabled with neither", Edit(", "+rangeField, ""), issue.List{errIssue(fleet.CodeSelectionInvalid, sel, "exactly one of update.selection.versionRange or update.selection.versions is required")}},
	{"enabled with both", Edit(rangeField, rangeField+", versions: [0.161.0]"), issue.List{errIssue(fleet.CodeSelectionInvalid, sel, "exactly one of update.selection.versionRange or update.selection.versions is required")}},
	{"range unparsable", Edit(rangeField, `versionRange: ">=0.161.0 <<0.2"`), issue.List{errIssue(fleet.CodeSelectionInvalid, sel+".versionRange", `versionRange ">=0.161.0 <<0.2" is not a valid semantic version constraint`)}},
	{"versions entry not semver", Edit(rangeField, "versions: [0.161.0, '0.162']"), issue.List{errIssue(fleet.CodeSelectionInvalid, sel+".versions[1]", `versions[1] "0.162" must be a semantic version without "v"`)}},
	{"versions entry with v", Edit(rangeField, "versions: [v0.161.0]"), issue.List{errIssue(fleet.CodeSelectionInvalid, sel+".versions[0]", `versions[0] "v0.161.0" must be a semantic version without "v"`)}},
	{"versions entry empty", Edit(rangeField, "versions: [0.161.0, '']"), issue.List{errIssue(fleet.CodeSelectionInvalid, sel+".versions[1]", `versions[1] "" must be a semantic version without "v"`)}},
	{"versions entry twice", Edit(rangeField, "versions: [0.161.0, 0.162.0, 0.161.0]"), issue.List{errIssue(fleet.CodeSelectionInvalid, sel+".versions[2]", `versions[2] "0.161.0" is listed twice`)}},
	{"versions prerelease entry is valid", Edit(rangeField, "versions: [0.161.0, 0.162.0-rc.1]"), nil},
	{"enabled with executor none", Edit("executor: updater", "executor: none"), issue.List{errIssue(fleet.CodeSelectionInvalid, "spec.update.executor", "UI-triggered updates need an update executor (update.executor is none)")}},
	{"enabled with no executor", Edit("executor: updater, ", ""), issue.List{errIssue(fleet.CodeSelectionInvalid, "spec.update.executor", "UI-triggered updates need an update executor (update.executor is none)")}},
	{"collector.version outside range", Edit("version: 0.161.0", "version: 0.160.0"), issue.List{errIssue(fleet.CodeSelectionInvalid, "spec.collector.version", `collector.version 0.160.0 is outside update.selection (versionRange ">=0.161.0, <=0.162.0")`)}},
	{"collector.version outside list", Edit(rangeField, "versions: [0.162.0]"), issue.List{errIssue(fleet.CodeSelectionInvalid, "spec.collector.version", "collector.version 0.161.0 is outside update.selection (versions [0.162.0])")}},
	{"collector.version with v inside", Edit("version: 0.161.0", "version: v0.161.0"), nil}, // normalized before the test
	{"collector.version empty with frame", Edit(collector, ""), nil},                             // optional when selection is enabled; no version_missing warning
	{"outside a disabled frame", Edit("version: 0.161.0", "version: 0.1.0", selection, ""), nil}, // no frame, no rule
	{"outside an invalid frame not reported", Edit("version: 0.161.0", "version: 0.1.0", rangeField, rangeField+", versions: [0.2.0]"), issue.List{errIssue(fleet.CodeSelectionInvalid, sel, "exactly one of update.selection.versionRange or update.selection.versions is required")}},
	{"rolloutPolicy missing", Edit(rangeField, rangeField+", rolloutPolicy: ui-canary"), issue.List{errIssue(fleet.CodePolicyNotFound, sel+".rolloutPolicy", `update.selection.rolloutPolicy "ui-canary" names a policy that does not exist`)}},
	{"rolloutPolicy default missing", Edit(rangeField, rangeField+", rolloutPolicy: default"), nil}, // the built-in policy applies
	{"configPolicy missing", Edit("{versionPolicy: gateway-version}", "{configPolicy: cfg, versionPolicy: gateway-version}"), issue.List{errIssue(fleet.CodePolicyNotFound, "spec.rollout.configPolicy", `rollout.configPolicy "cfg" names a policy that does not exist`)}},
	{"versionPolicy missing", Edit("versionPolicy: gateway-version", "versionPolicy: gone"), issue.List{errIssue(fleet.CodePolicyNotFound, "spec.rollout.versionPolicy", `rollout.versionPolicy "gone" names a policy that does not exist`)}},
	{"disabled with range", Edit("enabled: true", "enabled: false"), issue.List{warnIssue(fleet.CodeSelectionInvalid, sel, "update.selection is disabled: versionRange/versions are ignored")}},
	{"disabled with versions", Edit(selection, ", selection: {versions: [0.161.0]}"), issue.List{warnIssue(fleet.CodeSelectionInvalid, sel, "update.selection is disabled: versionRange/versions are ignored")}},
	{"disabled with bad entry still checked", Edit(selection, ", selection: {versions: [v1]}"), issue.List{errIssue(fleet.CodeSelectionInvalid, sel+".versions[0]", `versions[0] "v1" must be a semantic version without "v"`), warnIssue(fleet.CodeSelectionInvalid, sel, "update.selection is disabled: versionRange/versions are ignored")}},
	{"manual with executorRef", Edit("executor: updater", "executor: manual, executorRef: x"), issue.List{warnIssue(fleet.CodeExecutorInvalid, "spec.update.executorRef", "executor manual is built in and has no executor object: the reference is ignored")}},
	{"updater with executorRef", Edit("executor: updater", "executor: updater, executorRef: x"), issue.List{warnIssue(fleet.CodeExecutorInvalid, "spec.update.executorRef", "executor updater is built in and has no executor object: the reference is ignored")}},
	{"webhook without executorRef", Edit("executor: updater", "executor: webhook"), issue.List{errIssue(fleet.CodeExecutorInvalid, "spec.update.executorRef", "update.executor webhook needs update.executorRef (the name of an executor object)")}},
	{"awx with executorRef", Edit("executor: updater", "executor: awx, executorRef: tower"), nil},
	{"unknown executor", Edit("executor: updater", "executor: ansible"), issue.List{errIssue(fleet.CodeExecutorInvalid, "spec.update.executor", `update.executor "ansible" is not one of none, updater, webhook, awx, manual`)}},
	{"executor without version, no frame", Edit(collector, "", selection, ""), issue.List{warnIssue(fleet.CodeVersionMissing, "spec.collector.version", "executor is updater but collector.version is empty")}},
	{"executor none without version", Edit(collector, "", "  update: {executor: updater"+selection+"}\n", ""), nil},
	{"name missing", Edit("{name: edge-gateway}", "{}"), issue.List{errIssue(fleet.CodeFieldRequired, "metadata.name", "metadata.name is required")}},
	{"name with a path", Edit("name: edge-gateway", "name: ../../x"), issue.List{errIssue(fleet.CodeNameInvalid, "metadata.name", `fleet name "../../x" must be at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit`)}},
}

// Name is a fleet name and whether Validate accepts it.
type Name struct {
	Name  string
	Valid bool
}

// Names are the shape of a fleet name: a DNS label, since the name is a path
// segment of the API and a file name.
var Names = []Name{
	{Name: "edge", Valid: true},
	{Name: "a", Valid: true},                      // one character
	{Name: "0", Valid: true},                      // a digit may start and end
	{Name: "edge-eu-1", Valid: true},              // '-' inside
	{Name: strings.Repeat("a", 63), Valid: true},  // at the limit
	{Name: strings.Repeat("a", 64), Valid: false}, // one over
	{Name: "-edge", Valid: false},                 // starts with '-'
	{Name: "edge-", Valid: false},                 // ends with '-'
	{Name: "Edge", Valid: false},                  // upper case
	{Name: "edge_eu", Valid: false},               // underscore
	{Name: "edge.eu", Valid: false},               // dot
	{Name: "/", Valid: false},                     // a path
	{Name: "../../x", Valid: false},               // a path out of configs/
	{Name: "edge/eu", Valid: false},               // listed, but /fleets/edge/eu is another route
	{Name: "édge", Valid: false},                  // not ASCII
	{Name: "edge ", Valid: false},                 // trailing space
	{Name: "edge\n", Valid: false},                // $ must not match before a final newline
}

// Doc is Base named n, quoted so that YAML reads it as written.
func (n Name) Doc() string { return Edit("{name: edge-gateway}", "{name: "+strconv.Quote(n.Name)+"}") }

// Case is one document of the tables above, named by its table and row.
type Case struct{ Name, Doc string }

// All is every document of the tables, valid or not, for tests that run
// something else on the same documents.
func All() []Case {
	out := []Case{{"Full", Full}, {"Defaults", Defaults}}
	for _, c := range ParseIssues {
		out = append(out, Case{"ParseIssues/" + c.Name, c.Doc})
	}
	for _, c := range ValidateCases {
		out = append(out, Case{"ValidateCases/" + c.Name, c.Doc})
	}
	for _, n := range Names {
		out = append(out, Case{"Names/" + strconv.Quote(n.Name), n.Doc()})
	}
	return out
}
