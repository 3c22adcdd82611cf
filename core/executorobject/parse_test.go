package executorobject

import (
	"strings"
	"testing"
)

// doc wraps spec lines into an Executor document named edge-hook.
func doc(spec string) []byte {
	return []byte("apiVersion: myriarch.dev/v1alpha1\nkind: Executor\nmetadata: {name: edge-hook}\nspec:\n  " +
		strings.ReplaceAll(strings.TrimSpace(spec), "\n", "\n  ") + "\n")
}

// A value that cannot be read is reported once, not again by Validate.
func TestParse_ReadFailureReportedOnce(t *testing.T) {
	_, issues := Parse(doc("type: webhook\nwebhook: {url: [a], secretRef: s}"))
	if len(issues) != 1 || issues[0].Code != CodeTypeInvalid {
		t.Fatalf("issues %v, want only the type error of url", issues)
	}
	_, issues = Parse(doc("type: webhook\nwebhook: 12"))
	if len(issues) != 1 || issues[0].Path != "spec.webhook" {
		t.Fatalf("issues %v, want only the type error of spec.webhook", issues)
	}
}

func TestValidSecretRef(t *testing.T) {
	for name, want := range map[string]bool{
		"edge-hook": true, "webhooks/edge": true, "a.b_c+d=e@f": true,
		"": false, "/abs": false, "a/../b": false, "..": false, "a//b": false, "trailing/": false, "sp ace": false, "./a": false,
	} {
		if got := ValidSecretRef(name); got != want {
			t.Errorf("ValidSecretRef(%q) = %v, want %v", name, got, want)
		}
	}
}

// An Executor is read by the shared rule (yamldoc.Read, RefuseAny, and
// aliases refused): even an empty second document is refused.
func TestParse_OneDocumentByTheSharedRule(t *testing.T) {
	const spec = "type: webhook\nwebhook: {url: &u 'https://deploy.example.com/myriarch', secretRef: edge-hook"
	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		"a trailing empty document": {data: append(doc(spec+"}"), "---\n"...),
			want: "not valid YAML: the file holds more than one YAML document (---); write one Executor per file"},
		"an alias": {data: doc(spec + ", cancelUrl: *u}"),
			want: "aliases (*u) are not supported in an Executor; write the value out"},
	} {
		_, issues := Parse(c.data)
		if is := issues.WithCode(CodeYAMLInvalid); len(is) != 1 || is[0].Message != c.want {
			t.Errorf("%s: issues %v, want one yaml_invalid %q", name, issues, c.want)
		}
	}
}
