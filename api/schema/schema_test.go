package schema

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/myriarch/myriarch/core/executorobject"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/policy"
)

// repoRoot is the repository, from this package's directory.
const repoRoot = "../.."

// schemas compiles the embedded schema files by their $id, with nothing
// fetched: the compiler knows only these three and the draft's metaschema.
func schemas(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	ids := map[string]string{}
	for _, file := range []string{RolloutPolicyFile, FleetFile, ExecutorFile} {
		doc := readSchema(t, file)
		id, _ := doc["$id"].(string)
		if !strings.HasSuffix(id, "/"+file) || doc["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
			t.Fatalf("%s: $id %q must end in /%s and $schema must be draft 2020-12", file, id, file)
		}
		if err := c.AddResource(id, doc); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		ids[file] = id
	}
	out := map[string]*jsonschema.Schema{}
	for file, id := range ids {
		s, err := c.Compile(id)
		if err != nil {
			t.Fatalf("compile %s: %v", file, err)
		}
		out[file] = s
	}
	return out
}

func readSchema(t *testing.T, file string) map[string]any {
	t.Helper()
	data, err := FS.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	doc, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s is not a JSON object", file)
	}
	return doc
}

// verdict is what the schema says of a document: nil when it accepts it,
// errNoValue (wrapped) when the document is no single JSON value.
func verdict(s *jsonschema.Schema, doc []byte) error {
	v, err := yamlValue(doc)
	if err != nil {
		return errors.Join(errNoValue, err)
	}
	return s.Validate(v)
}

var errNoValue = errors.New("no JSON value")

func TestFileOfKind(t *testing.T) {
	want := map[string]string{policy.ObjectKind: RolloutPolicyFile, fleet.ObjectKind: FleetFile, executorobject.ObjectKind: ExecutorFile}
	if len(FileOfKind) != len(want) {
		t.Fatalf("FileOfKind = %v, want %v", FileOfKind, want)
	}
	for kind, file := range want {
		if FileOfKind[kind] != file {
			t.Errorf("FileOfKind[%s] = %q, want %q", kind, FileOfKind[kind], file)
		}
		if c := readSchema(t, file)["properties"].(map[string]any)["kind"].(map[string]any)["const"]; c != kind {
			t.Errorf("%s: kind must be %q, is %v", file, kind, c)
		}
	}
}

// exampleDirs hold the objects users copy: the example revisions and the
// policy examples docs/policy.md points at.
var exampleDirs = []string{"examples", "core/policy/testdata"}

// TestExamples: every example object names its schema on its first line, by
// a path relative to the file that reaches the schema in this repository,
// and is valid for its schema and its parser.
func TestExamples(t *testing.T) {
	compiled := schemas(t)
	seen := map[string]int{}
	for _, dir := range exampleDirs {
		err := filepath.WalkDir(filepath.Join(repoRoot, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || (path.Ext(p) != ".yaml" && path.Ext(p) != ".yml") {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			kind := kindOf(data)
			file, ok := FileOfKind[kind]
			if !ok {
				return nil // a rendered collector configuration
			}
			seen[kind]++
			rel, _ := filepath.Rel(repoRoot, p)
			checkExample(t, filepath.ToSlash(rel), data, file, compiled[file])
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if seen[policy.ObjectKind] < 5 || seen[fleet.ObjectKind] < 2 {
		t.Errorf("found %v example objects; the walk missed the examples", seen)
	}
}

func checkExample(t *testing.T, rel string, data []byte, file string, s *jsonschema.Schema) {
	t.Helper()
	first, _, _ := bytes.Cut(data, []byte("\n"))
	ref, ok := strings.CutPrefix(string(first), "# yaml-language-server: $schema=")
	want, _ := filepath.Rel(filepath.Dir(rel), filepath.Join("api/schema", file))
	if !ok || ref != filepath.ToSlash(want) {
		t.Errorf("%s: first line %q, want # yaml-language-server: $schema=%s", rel, first, filepath.ToSlash(want))
	}
	if _, err := os.Stat(filepath.Join(repoRoot, filepath.Dir(rel), ref)); err != nil {
		t.Errorf("%s: the schema it names: %v", rel, err)
	}
	if err := verdict(s, data); err != nil {
		t.Errorf("%s: the schema refuses it: %v", rel, err)
	}
	// The policies a fleet names are other files: core/revision's tests load the revisions whole.
	if issues := parse(kindOf(data), data, nil); issues.HasErrors() {
		t.Errorf("%s: the parser refuses it: %v", rel, issues)
	}
}

// kindOf is the top-level kind of a YAML document, or "".
func kindOf(data []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if k, ok := strings.CutPrefix(sc.Text(), "kind: "); ok {
			return strings.TrimSpace(k)
		}
	}
	return ""
}
