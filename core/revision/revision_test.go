package revision

import (
	"strings"
	"testing"

	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/issue"
	"github.com/myriarch/myriarch/core/selector"
)

func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestLoad_Quickstart(t *testing.T) {
	files := readDir(t, "../../examples/quickstart")
	rev, issues := Load(files, "c1")
	if issues.HasErrors() {
		t.Fatalf("the quickstart must be valid: %v", issues)
	}
	f, ok := rev.Fleet("edge")
	if !ok || f.Config.Hash != Hash(files["configs/edge.yaml"]) || len(f.Config.Hash) != 64 {
		t.Fatalf("fleet edge %+v, want the sha256 of configs/edge.yaml", f)
	}
	p, ok := rev.Policy("demo-config")
	if !ok || p.Path != "policies/demo-config.yaml" || p.Commit != "c1" {
		t.Fatalf("policy %+v, want path and commit recorded for the snapshot's source line", p)
	}
	if len(rev.Policies) != 4 {
		t.Fatalf("%d policies, want 4 (canary-then-all and the demo policies)", len(rev.Policies))
	}
}

func TestLoad_Issues(t *testing.T) {
	good := readDir(t, "../../examples/quickstart")
	with := func(p, body string) map[string][]byte {
		files := map[string][]byte{}
		for k, v := range good {
			files[k] = v
		}
		if body == "" {
			delete(files, p)
		} else {
			files[p] = []byte(body)
		}
		return files
	}
	cases := []struct {
		name  string
		files map[string][]byte
		code  string
		path  string
		error bool
	}{
		{name: "policy reference missing", files: with("policies/demo-config.yaml", ""), code: "policy_not_found", path: "fleets/edge.yaml", error: true},
		{name: "bad policy", files: with("policies/demo-config.yaml", strings.Replace(string(good["policies/demo-config.yaml"]), "percent: 100", "percent: 120", 1)), code: "wave_invalid", path: "policies/demo-config.yaml", error: true},
		{name: "duplicate fleet", files: with("fleets/edge2.yaml", string(good["fleets/edge.yaml"])), code: CodeDuplicateName, path: "fleets/edge2.yaml", error: true}, // the second definition
		{name: "fleet name with a path", files: with("fleets/edge.yaml", strings.Replace(string(good["fleets/edge.yaml"]), "name: edge", "name: ../../x", 1)), code: fleet.CodeNameInvalid, path: "fleets/edge.yaml: metadata.name", error: true},
		{name: "fleet name with a slash", files: with("fleets/edge.yaml", strings.Replace(string(good["fleets/edge.yaml"]), "name: edge", "name: /", 1)), code: fleet.CodeNameInvalid, path: "fleets/edge.yaml: metadata.name", error: true},
		{name: "fleet name not ASCII", files: with("fleets/edge.yaml", strings.Replace(string(good["fleets/edge.yaml"]), "name: edge", "name: édge", 1)), code: fleet.CodeNameInvalid, path: "fleets/edge.yaml: metadata.name", error: true},
		{name: "config not YAML", files: with("configs/edge.yaml", "receivers:\n  otlp: {}\nexporters: debug: {}\n"), code: CodeConfigInvalid, path: "configs/edge.yaml", error: true},
		{name: "two configurations of one fleet", files: with("configs/edge.yml", "receivers: {}\n"), code: CodeDuplicateName, path: "configs/edge.yml", error: true},
		{name: "config missing", files: with("configs/edge.yaml", ""), code: CodeConfigMissing, path: "fleets/edge.yaml", error: false},
		{name: "orphaned config", files: with("configs/nobody.yaml", "receivers: {}\n"), code: CodeConfigOrphaned, path: "configs/nobody.yaml", error: false},
		{name: "unknown file", files: with("notes.txt", "hi"), code: CodeUnknownFile, path: "notes.txt", error: false},
		{name: "no fleet", files: map[string][]byte{"policies/p.yaml": good["policies/demo-config.yaml"]}, code: CodeEmpty, path: "fleets/", error: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, issues := Load(c.files, "c2")
			found := issues.WithCode(c.code)
			if len(found) == 0 {
				t.Fatalf("no %s issue in %v", c.code, issues)
			}
			if !strings.HasPrefix(found[0].Path, c.path) {
				t.Fatalf("path %q, want it to start with %q", found[0].Path, c.path)
			}
			if (found[0].Severity == issue.Error) != c.error {
				t.Fatalf("severity %s, want error=%v", found[0].Severity, c.error)
			}
			if issues.HasErrors() != c.error && c.error {
				t.Fatal("an error issue must make the revision invalid")
			}
		})
	}
}

// A fleet whose name is refused gets that error only, not also a warning
// about a configuration file its name cannot be.
func TestLoad_InvalidFleetName_NoConfigMissingWarning(t *testing.T) {
	files := readDir(t, "../../examples/quickstart")
	files["fleets/edge.yaml"] = []byte(strings.Replace(string(files["fleets/edge.yaml"]), "name: edge", "name: ../../x", 1))
	_, issues := Load(files, "c4")
	if len(issues.WithCode(fleet.CodeNameInvalid)) == 0 {
		t.Fatalf("no %s issue in %v", fleet.CodeNameInvalid, issues)
	}
	if found := issues.WithCode(CodeConfigMissing); len(found) != 0 {
		t.Fatalf("issues %v: want no %s for a refused name", found, CodeConfigMissing)
	}
}

func TestAssign_MostSpecificFleetWins(t *testing.T) {
	files := readDir(t, "../../examples/quickstart")
	files["fleets/all.yaml"] = []byte("apiVersion: myriarch.dev/v1alpha1\nkind: Fleet\nmetadata: {name: all}\nspec: {}\n")
	files["fleets/edge-eu.yaml"] = []byte("apiVersion: myriarch.dev/v1alpha1\nkind: Fleet\nmetadata: {name: edge-eu}\nspec: {selector: {matchAttributes: {labels.region: eu}}}\n")
	rev, issues := Load(files, "c3")
	if issues.HasErrors() {
		t.Fatal(issues)
	}
	cases := []struct {
		attrs selector.Map
		fleet string
		err   bool
	}{
		{attrs: selector.Map{"labels.fleet": "edge"}, fleet: "edge", err: false},                   // edge beats the catch-all
		{attrs: selector.Map{"host.name": "x"}, fleet: "all", err: false},                          // only the catch-all
		{attrs: selector.Map{"labels.fleet": "edge", "labels.region": "eu"}, fleet: "", err: true}, // two equally specific fleets
	}
	for _, c := range cases {
		a := rev.Assign(c.attrs)
		if a.Fleet != c.fleet || (a.Error != "") != c.err {
			t.Errorf("Assign(%v) = %+v, want fleet %q error %v", c.attrs, a, c.fleet, c.err)
		}
	}
}

// The multi-region example validates whole, with either rollback mode.
func TestLoad_MultiRegionExample(t *testing.T) {
	files, err := ReadDir("../../examples/multi-region")
	if err != nil {
		t.Fatal(err)
	}
	if _, issues := Load(files, "c1"); issues.HasErrors() {
		t.Fatalf("the multi-region example: %v", issues)
	}
	files["policies/regions.yaml"] = []byte(strings.Replace(string(files["policies/regions.yaml"]), "onFailure: rollback-wave", "onFailure: rollback-all", 1))
	if _, issues := Load(files, "c1"); issues.HasErrors() {
		t.Fatalf("the multi-region example with rollback-all: %v", issues)
	}
}
