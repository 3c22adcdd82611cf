package fleet

import (
	"reflect"
	"strings"
	"testing"

	"github.com/myriarch/myriarch/pkg/issue"
)

// base is a valid fleet with an enabled frame.
func base() Fleet {
	return Fleet{
		Name:      "edge-gateway",
		Collector: Collector{Version: "0.161.0"},
		Update:    Update{Executor: ExecutorUpdater, Selection: Frame{Enabled: true, VersionRange: ">=0.161.0, <=0.162.0"}},
		Rollout:   RolloutPolicies{VersionPolicy: "gateway-version"},
	}
}

func exists(names ...string) func(string) bool {
	return func(n string) bool {
		for _, x := range names {
			if x == n {
				return true
			}
		}
		return false
	}
}

func errIssue(code, path, msg string) issue.Issue {
	return issue.Issue{Code: code, Severity: issue.Error, Path: path, Message: msg}
}

func warnIssue(code, path, msg string) issue.Issue {
	return issue.Issue{Code: code, Severity: issue.Warning, Path: path, Message: msg}
}

func TestValidate(t *testing.T) {
	const sel = "spec.update.selection"
	tests := []struct {
		name   string
		mutate func(f *Fleet)
		want   issue.List
	}{
		{"valid fleet", func(f *Fleet) {}, nil},
		{"enabled with neither", func(f *Fleet) { f.Update.Selection.VersionRange = "" }, issue.List{errIssue("selection_invalid", sel, "exactly one of update.selection.versionRange or update.selection.versions is required")}},
		{"enabled with both", func(f *Fleet) { f.Update.Selection.Versions = []string{"0.161.0"} }, issue.List{errIssue("selection_invalid", sel, "exactly one of update.selection.versionRange or update.selection.versions is required")}},
		{"range unparsable", func(f *Fleet) { f.Update.Selection.VersionRange = ">=0.161.0 <<0.2" }, issue.List{errIssue("selection_invalid", sel+".versionRange", `versionRange ">=0.161.0 <<0.2" is not a valid semantic version constraint`)}},
		{"versions entry not semver", func(f *Fleet) { useList(f, "0.161.0", "0.162") }, issue.List{errIssue("selection_invalid", sel+".versions[1]", `versions[1] "0.162" must be a semantic version without "v"`)}},
		{"versions entry with v", func(f *Fleet) { useList(f, "v0.161.0") }, issue.List{errIssue("selection_invalid", sel+".versions[0]", `versions[0] "v0.161.0" must be a semantic version without "v"`)}},
		{"versions entry empty", func(f *Fleet) { useList(f, "0.161.0", "") }, issue.List{errIssue("selection_invalid", sel+".versions[1]", `versions[1] "" must be a semantic version without "v"`)}},
		{"versions entry twice", func(f *Fleet) { useList(f, "0.161.0", "0.162.0", "0.161.0") }, issue.List{errIssue("selection_invalid", sel+".versions[2]", `versions[2] "0.161.0" is listed twice`)}},
		{"versions prerelease entry is valid", func(f *Fleet) { useList(f, "0.161.0", "0.162.0-rc.1") }, nil},
		{"enabled with executor none", func(f *Fleet) { f.Update.Executor = ExecutorNone }, issue.List{errIssue("selection_invalid", "spec.update.executor", "UI-triggered updates need an update executor (update.executor is none)")}},
		{"enabled with no executor", func(f *Fleet) { f.Update.Executor = "" }, issue.List{errIssue("selection_invalid", "spec.update.executor", "UI-triggered updates need an update executor (update.executor is none)")}},
		{"collector.version outside range", func(f *Fleet) { f.Collector.Version = "0.160.0" }, issue.List{errIssue("selection_invalid", "spec.collector.version", `collector.version 0.160.0 is outside update.selection (versionRange ">=0.161.0, <=0.162.0")`)}},
		{"collector.version outside list", func(f *Fleet) { useList(f, "0.162.0") }, issue.List{errIssue("selection_invalid", "spec.collector.version", "collector.version 0.161.0 is outside update.selection (versions [0.162.0])")}},
		{"collector.version with v inside", func(f *Fleet) { f.Collector.Version = "v0.161.0" }, nil},                     // normalized before the test
		{"collector.version empty with frame", func(f *Fleet) { f.Collector.Version = "" }, nil},                          // optional when selection is enabled; no version_missing warning
		{"outside a disabled frame", func(f *Fleet) { f.Collector.Version = "0.1.0"; f.Update.Selection = Frame{} }, nil}, // no frame, no rule
		{"outside an invalid frame not reported", func(f *Fleet) { f.Collector.Version = "0.1.0"; f.Update.Selection.Versions = []string{"0.2.0"} }, issue.List{errIssue("selection_invalid", sel, "exactly one of update.selection.versionRange or update.selection.versions is required")}},
		{"rolloutPolicy missing", func(f *Fleet) { f.Update.Selection.RolloutPolicy = "ui-canary" }, issue.List{errIssue("policy_not_found", sel+".rolloutPolicy", `update.selection.rolloutPolicy "ui-canary" names a policy that does not exist`)}},
		{"rolloutPolicy default missing", func(f *Fleet) { f.Update.Selection.RolloutPolicy = "default" }, nil}, // the built-in policy applies
		{"configPolicy missing", func(f *Fleet) { f.Rollout.ConfigPolicy = "cfg" }, issue.List{errIssue("policy_not_found", "spec.rollout.configPolicy", `rollout.configPolicy "cfg" names a policy that does not exist`)}},
		{"versionPolicy missing", func(f *Fleet) { f.Rollout.VersionPolicy = "gone" }, issue.List{errIssue("policy_not_found", "spec.rollout.versionPolicy", `rollout.versionPolicy "gone" names a policy that does not exist`)}},
		{"disabled with range", func(f *Fleet) { f.Update.Selection.Enabled = false }, issue.List{warnIssue("selection_invalid", sel, "update.selection is disabled: versionRange/versions are ignored")}},
		{"disabled with versions", func(f *Fleet) { f.Update.Selection = Frame{Versions: []string{"0.161.0"}} }, issue.List{warnIssue("selection_invalid", sel, "update.selection is disabled: versionRange/versions are ignored")}},
		{"disabled with bad entry still checked", func(f *Fleet) { f.Update.Selection = Frame{Versions: []string{"v1"}} }, issue.List{errIssue("selection_invalid", sel+".versions[0]", `versions[0] "v1" must be a semantic version without "v"`), warnIssue("selection_invalid", sel, "update.selection is disabled: versionRange/versions are ignored")}},
		{"manual with executorRef", func(f *Fleet) { f.Update.Executor = ExecutorManual; f.Update.ExecutorRef = "x" }, issue.List{warnIssue("executor_invalid", "spec.update.executorRef", "executor manual is built in and has no executor object: the reference is ignored")}},
		{"updater with executorRef", func(f *Fleet) { f.Update.ExecutorRef = "x" }, issue.List{warnIssue("executor_invalid", "spec.update.executorRef", "executor updater is built in and has no executor object: the reference is ignored")}},
		{"webhook without executorRef", func(f *Fleet) { f.Update.Executor = ExecutorWebhook }, issue.List{errIssue("executor_invalid", "spec.update.executorRef", "update.executor webhook needs update.executorRef (the name of an executor object)")}},
		{"awx with executorRef", func(f *Fleet) { f.Update.Executor = ExecutorAWX; f.Update.ExecutorRef = "tower" }, nil},
		{"unknown executor", func(f *Fleet) { f.Update.Executor = "ansible" }, issue.List{errIssue("executor_invalid", "spec.update.executor", `update.executor "ansible" is not one of none, updater, webhook, awx, manual`)}},
		{"executor without version, no frame", func(f *Fleet) { f.Collector.Version = ""; f.Update.Selection = Frame{} }, issue.List{warnIssue("version_missing", "spec.collector.version", "executor is updater but collector.version is empty")}},
		{"executor none without version", func(f *Fleet) { f.Collector.Version = ""; f.Update = Update{} }, nil},
		{"name missing", func(f *Fleet) { f.Name = "" }, issue.List{errIssue("field_required", "metadata.name", "metadata.name is required")}},
		{"name with a path", func(f *Fleet) { f.Name = "../../x" }, issue.List{errIssue("name_invalid", "metadata.name", `fleet name "../../x" must be at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := base()
			tt.mutate(&f)
			got := Validate(f, exists("gateway-version"))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Validate =\n%v\nwant\n%v", got, tt.want)
			}
		})
	}
}

// The name is a path segment of the API and a file name: a DNS label.
func TestValidate_Names(t *testing.T) {
	tests := []struct {
		name  string
		valid bool
	}{
		{name: "edge", valid: true},
		{name: "a", valid: true},                      // one character
		{name: "0", valid: true},                      // a digit may start and end
		{name: "edge-eu-1", valid: true},              // '-' inside
		{name: strings.Repeat("a", 63), valid: true},  // at the limit
		{name: strings.Repeat("a", 64), valid: false}, // one over
		{name: "-edge", valid: false},                 // starts with '-'
		{name: "edge-", valid: false},                 // ends with '-'
		{name: "Edge", valid: false},                  // upper case
		{name: "edge_eu", valid: false},               // underscore
		{name: "edge.eu", valid: false},               // dot
		{name: "/", valid: false},                     // a path
		{name: "../../x", valid: false},               // a path out of configs/
		{name: "edge/eu", valid: false},               // listed, but /fleets/edge/eu is another route
		{name: "édge", valid: false},                  // not ASCII
		{name: "edge ", valid: false},                 // trailing space
		{name: "edge\n", valid: false},                // $ must not match before a final newline
	}
	for _, tt := range tests {
		f := base()
		f.Name = tt.name
		got := Validate(f, exists("gateway-version")).WithCode(CodeNameInvalid)
		if (len(got) == 0) != tt.valid {
			t.Errorf("name %q: issues %v, want valid %v", tt.name, got, tt.valid)
		}
		if len(got) == 1 && (got[0].Path != "metadata.name" || got[0].Severity != issue.Error) {
			t.Errorf("name %q: issue %+v, want an error at metadata.name", tt.name, got[0])
		}
	}
}

func useList(f *Fleet, versions ...string) {
	f.Update.Selection.VersionRange = ""
	f.Update.Selection.Versions = versions
}

func TestValidate_NilPolicyExistsSkipsPolicyChecks(t *testing.T) {
	f := base()
	f.Rollout.VersionPolicy = "anything"
	if got := Validate(f, nil); len(got) != 0 {
		t.Errorf("Validate(nil) = %v, want no policy issue", got)
	}
}

// The misspelled key is reported by Parse; Validate then sees a frame with
// neither field, which is the second finding the operator gets.
func TestParseValidate_MisspelledVersionRange(t *testing.T) {
	f, parsed := Parse([]byte(head + "spec: {update: {executor: updater, selection: {enabled: true, versionrange: '>=0.1.0'}}}"))
	got := append(parsed, Validate(f, nil)...)
	if len(got.WithCode("unknown_field")) != 1 || len(got.WithCode("selection_invalid")) != 1 {
		t.Errorf("issues = %v, want unknown_field and selection_invalid", got)
	}
}
