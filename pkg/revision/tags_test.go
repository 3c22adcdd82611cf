package revision

import (
	"strings"
	"testing"

	"github.com/myriarch/myriarch/pkg/issue"
)

// TestLoad_EveryExplicitTagIsRefused: one rule for YAML tags in every kind
// of object and on the top of a configuration: an explicit tag is an error
// yaml_tag_invalid at the tagged value, whatever the tag, and the value is
// read as written, so the revision has no other error.
func TestLoad_EveryExplicitTagIsRefused(t *testing.T) {
	places := []struct {
		name, file, old, new, path string // new holds TAG where the tag goes
	}{
		{"fleet string", "fleets/edge.yaml", "version: 0.161.0", "version: TAG 0.161.0", "spec.collector.version"},
		{"fleet mapping", "fleets/edge.yaml", "spec:\n", "spec: TAG\n", "spec"},
		{"fleet key", "fleets/edge.yaml", "  collector:", "  TAG collector:", "spec.collector"},
		{"fleet list item", "fleets/edge.yaml", `versionRange: ">=0.161.0, <=0.163.0"`, "versions: [TAG 0.161.0, 0.162.0]", "spec.update.selection.versions[0]"},
		{"policy mapping", "policies/demo-config.yaml", "spec:\n", "spec: TAG\n", "spec"},
		{"policy duration", "policies/demo-config.yaml", "healthWait: 30s", "healthWait: TAG 30s", "spec.healthWait"},
		{"policy list", "policies/demo-config.yaml", "  waves:\n", "  waves: TAG\n", "spec.waves"},
		{"policy integer", "policies/demo-config.yaml", "maxConcurrent: 0", "maxConcurrent: TAG 0", "spec.maxConcurrent"},
		{"executor string", "executors/edge-hook.yaml", "secretRef: edge-hook", "secretRef: TAG edge-hook", "spec.webhook.secretRef"},
		{"executor mapping", "executors/edge-hook.yaml", "  webhook: {", "  webhook: TAG {", "spec.webhook"},
		{"configuration wrapper", "configs/edge.yaml", "", "TAG\n", ""},
	}
	tags := []struct{ written, shown string }{
		{"!!str", "!!str"}, // a string field's own type is refused too: quoting needs no tag
		{"!!int", "!!int"},
		{"!!binary", "!!binary"},
		{"!!map", "!!map"},
		{"!!python/object:os.system", "!!python/object:os.system"},
		{"!custom", "!custom"},
		{"!<tag:yaml.org,2002:str>", "!!str"},
	}
	base := webhookRevision(t)
	if _, issues := Load(base, "c1"); issues.HasErrors() {
		t.Fatalf("the base revision: %v", issues)
	}
	for _, pl := range places {
		for _, tag := range tags {
			t.Run(pl.name+" "+tag.written, func(t *testing.T) {
				text := string(base[pl.file])
				if pl.old == "" {
					text = strings.Replace(pl.new, "TAG", tag.written, 1) + text
				} else if !strings.Contains(text, pl.old) {
					t.Fatalf("%s has no %q", pl.file, pl.old)
				} else {
					text = strings.Replace(text, pl.old, strings.Replace(pl.new, "TAG", tag.written, 1), 1)
				}
				_, issues := Load(withFile(base, pl.file, text), "c1")
				want := pl.file
				if pl.path != "" {
					want += ": " + pl.path
				}
				errs := issues.Errors()
				if len(errs) != 1 || errs[0].Code != issue.CodeYAMLTag || errs[0].Path != want || !strings.Contains(errs[0].Message, tag.shown) {
					t.Errorf("errors %v, want only %s at %s naming %s", errs, issue.CodeYAMLTag, want, tag.shown)
				}
			})
		}
	}
}

// TestLoad_TagsTheIssueFound are the two documents the issue names, which
// validated before.
func TestLoad_TagsTheIssueFound(t *testing.T) {
	base := webhookRevision(t)
	for file, text := range map[string]string{
		"policies/evil.yaml": "apiVersion: myriarch.dev/v1alpha1\nkind: RolloutPolicy\nmetadata: {name: evil}\nspec: !!python/object:os.system {waves: [{name: all, percent: 100}]}\n",
		"fleets/edge.yaml":   strings.Replace(string(base["fleets/edge.yaml"]), "version: 0.161.0", "version: !!int 0.161.0", 1),
	} {
		if _, issues := Load(withFile(base, file, text), "c1"); len(issues.WithCode(issue.CodeYAMLTag)) != 1 {
			t.Errorf("%s: issues %v, want one %s", file, issues, issue.CodeYAMLTag)
		}
	}
}
