package revision

import (
	"strings"
	"testing"

	"github.com/myriarch/myriarch/core/issue"
)

// TestLoad_EveryExplicitTagIsRefused: one rule for YAML tags in every kind
// of object and on the top of a configuration: an explicit tag is an error
// yaml_tag_invalid at the tagged value, whatever the tag, and the value is
// read as written, so the revision has no other error.
func TestLoad_EveryExplicitTagIsRefused(t *testing.T) {
	places := []struct {
		name, file, old, new, path string // new holds TAG where the tag goes
	}{
		{name: "fleet string", file: "fleets/edge.yaml", old: "version: 0.161.0", new: "version: TAG 0.161.0", path: "spec.collector.version"},
		{name: "fleet mapping", file: "fleets/edge.yaml", old: "spec:\n", new: "spec: TAG\n", path: "spec"},
		{name: "fleet key", file: "fleets/edge.yaml", old: "  collector:", new: "  TAG collector:", path: "spec.collector"},
		{name: "fleet list item", file: "fleets/edge.yaml", old: `versionRange: ">=0.161.0, <=0.163.0"`, new: "versions: [TAG 0.161.0, 0.162.0]", path: "spec.update.selection.versions[0]"},
		{name: "policy mapping", file: "policies/demo-config.yaml", old: "spec:\n", new: "spec: TAG\n", path: "spec"},
		{name: "policy duration", file: "policies/demo-config.yaml", old: "healthWait: 30s", new: "healthWait: TAG 30s", path: "spec.healthWait"},
		{name: "policy list", file: "policies/demo-config.yaml", old: "  waves:\n", new: "  waves: TAG\n", path: "spec.waves"},
		{name: "policy integer", file: "policies/demo-config.yaml", old: "maxConcurrent: 0", new: "maxConcurrent: TAG 0", path: "spec.maxConcurrent"},
		{name: "executor string", file: "executors/edge-hook.yaml", old: "secretRef: edge-hook", new: "secretRef: TAG edge-hook", path: "spec.webhook.secretRef"},
		{name: "executor mapping", file: "executors/edge-hook.yaml", old: "  webhook: {", new: "  webhook: TAG {", path: "spec.webhook"},
		{name: "configuration wrapper", file: "configs/edge.yaml", old: "", new: "TAG\n", path: ""},
	}
	tags := []struct{ written, shown string }{
		{written: "!!str", shown: "!!str"}, // a string field's own type is refused too: quoting needs no tag
		{written: "!!int", shown: "!!int"},
		{written: "!!binary", shown: "!!binary"},
		{written: "!!map", shown: "!!map"},
		{written: "!!python/object:os.system", shown: "!!python/object:os.system"},
		{written: "!custom", shown: "!custom"},
		{written: "!<tag:yaml.org,2002:str>", shown: "!!str"},
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
