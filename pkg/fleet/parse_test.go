package fleet

import (
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/myriarch/myriarch/pkg/issue"
	"github.com/myriarch/myriarch/pkg/selector"
)

const fullFleet = `
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

func TestParse_FullFleet(t *testing.T) {
	got, issues := Parse([]byte(fullFleet))
	want := Fleet{
		Name:      "edge-gateway",
		Collector: Collector{Distribution: "otelcol-contrib", Version: "0.161.0"}, // leading v trimmed
		Update: Update{Executor: ExecutorWebhook, ExecutorRef: "ansible-hook", Selection: Frame{
			Enabled: true, VersionRange: ">=0.161.0, <=0.162.0", AllowDowngrade: true, RequireReason: true, RolloutPolicy: "ui-canary",
		}},
		Rollout:  RolloutPolicies{ConfigPolicy: "cfg", VersionPolicy: "gateway-version"},
		Selector: selector.Selector{MatchAttributes: map[string]string{"labels.role": "gateway", "site.region": "eu"}},
		Config:   Config{Hash: "sha256:abc"},
	}
	if len(issues) != 0 {
		t.Fatalf("Parse issues = %v, want none", issues)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Parse =\n%+v\nwant\n%+v", got, want)
	}
}

func TestParse_Defaults(t *testing.T) {
	got, issues := Parse([]byte("apiVersion: myriarch.dev/v1alpha1\nkind: Fleet\nmetadata: {name: a}\nspec:\n  update:\n    selection:\n"))
	if len(issues) != 0 {
		t.Fatalf("Parse issues = %v, want none", issues)
	}
	if got.Update.Executor != ExecutorNone || got.Update.Selection.Enabled || got.Update.Selection.AllowDowngrade || got.Update.Selection.RequireReason {
		t.Errorf("defaults = %+v, want executor none and a disabled frame", got.Update)
	}
}

func TestParse_VersionsKeepDocumentIndexes(t *testing.T) {
	got, _ := Parse([]byte(head + "spec:\n  update:\n    selection:\n      versions: [0.161.0, ~, v0.162.0, 0.163]\n"))
	want := []string{"0.161.0", "", "v0.162.0", "0.163"} // raw: Validate judges each entry at its index
	if !reflect.DeepEqual(got.Update.Selection.Versions, want) {
		t.Errorf("versions = %q, want %q", got.Update.Selection.Versions, want)
	}
}

const head = "apiVersion: myriarch.dev/v1alpha1\nkind: Fleet\nmetadata: {name: a}\n"

func TestParse_Issues(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want issue.Issue
	}{
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
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, issues := Parse([]byte(tt.doc))
			if len(issues) != 1 || issues[0] != tt.want {
				t.Errorf("Parse issues =\n%v\nwant exactly\n%v", issues, tt.want)
			}
		})
	}
}

func TestParse_AliasesResolve(t *testing.T) {
	got, issues := Parse([]byte(head + "x: &p gateway-version\nspec: {rollout: {versionPolicy: *p}}"))
	if got.Rollout.VersionPolicy != "gateway-version" || len(issues.WithCode("unknown_field")) != 1 {
		t.Errorf("Parse = %+v, %v; want the alias resolved and x reported", got.Rollout, issues)
	}
}

// Parse must turn any input into issues, never a panic.
func TestParse_NeverPanics(t *testing.T) {
	pieces := []string{"apiVersion: ", "kind: Fleet\n", "spec:", " update:", " selection:", " versions: ", "[", "]", "{", "}",
		"- ", "&a ", "*a", "~", "true", "0.1.0", "\n  ", "\n", ": ", "versionRange: ", "'", "\"", "<<: *a", "!!binary ", ","}
	rapid.Check(t, func(t *rapid.T) {
		var b strings.Builder
		for _, i := range rapid.SliceOf(rapid.IntRange(0, len(pieces)-1)).Draw(t, "pieces") {
			b.WriteString(pieces[i])
		}
		f, _ := Parse([]byte(b.String()))
		Validate(f, func(string) bool { return false })
	})
}
