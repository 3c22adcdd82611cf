package fleet

import (
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/myriarch/myriarch/core/yamldoc"
)

func TestParse_VersionsKeepDocumentIndexes(t *testing.T) {
	got, _ := Parse([]byte(head + "spec:\n  update:\n    selection:\n      versions: [0.161.0, ~, v0.162.0, 0.163]\n"))
	want := []string{"0.161.0", "", "v0.162.0", "0.163"} // raw: Validate judges each entry at its index
	if !reflect.DeepEqual(got.Update.Selection.Versions, want) {
		t.Errorf("versions = %q, want %q", got.Update.Selection.Versions, want)
	}
}

const head = "apiVersion: myriarch.dev/v1alpha1\nkind: Fleet\nmetadata: {name: a}\n"

func TestParse_AliasesResolve(t *testing.T) {
	got, issues := Parse([]byte(head + "x: &p gateway-version\nspec: {rollout: {versionPolicy: *p}}"))
	if got.Rollout.VersionPolicy != "gateway-version" || len(issues.WithCode("unknown_field")) != 1 {
		t.Errorf("Parse = %+v, %v; want the alias resolved and x reported", got.Rollout, issues)
	}
}

// A fleet follows aliases within the budget every object shares
// (yamldoc.Budget): past it, one yaml_invalid issue, worded as a policy's.
func TestParse_AliasBudget(t *testing.T) {
	versions := func(n int) string {
		return head + "x: &v 0.161.0\nspec: {update: {selection: {versions: [" + strings.TrimSuffix(strings.Repeat("*v, ", n), ", ") + "]}}}"
	}
	budget := yamldoc.Budget - 9 // the document, apiVersion, kind, metadata, name, spec, update, selection and versions take 9
	if got, issues := Parse([]byte(versions(budget))); len(issues.WithCode(CodeYAMLInvalid)) != 0 || len(got.Update.Selection.Versions) != budget {
		t.Errorf("%d aliases: %d versions, issues %v; want them all and no yaml_invalid", budget, len(got.Update.Selection.Versions), issues.WithCode(CodeYAMLInvalid))
	}
	_, issues := Parse([]byte(versions(budget + 1)))
	if is := issues.WithCode(CodeYAMLInvalid); len(is) != 1 || !strings.Contains(is[0].Message, "expands to more than 10000 values") {
		t.Errorf("%d aliases: issues %v, want one yaml_invalid that the document expands too far", budget+1, is)
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

// A fleet is read by the shared rule (yamldoc.Read, Ignore): only its
// first document is read, so what follows it, even text that is not
// YAML, is no issue.
func TestParse_FirstDocumentOnly(t *testing.T) {
	got, issues := Parse([]byte(head + "---\nkind: [\n"))
	if got.Name != "a" || len(issues.WithCode(CodeYAMLInvalid)) != 0 {
		t.Errorf("Parse = %q, %v; want the first document and no yaml_invalid", got.Name, issues)
	}
}
