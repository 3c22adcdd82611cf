package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/myriarch/myriarch/local/client/clienttest"
)

func TestValidate_Quickstart(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"validate", "../../examples/quickstart"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d, want 0:\n%s%s", code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "1 fleets, 4 policies, 0 executors, 1 configurations: 0 errors") {
		t.Fatalf("summary missing:\n%s", out.String())
	}
}

func TestValidate_Broken(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"validate", "testdata/broken"}, &out, &errOut); code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out.String())
	}
	for _, want := range []string{"unknown_field", "versionrange", "policy_not_found", "wave_invalid", "duration_invalid", "window_invalid", "timezone_invalid", "selection_invalid"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestValidate_JSON(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run([]string{"validate", "testdata/broken", "--output", "json"}, &out, &errOut)
	var doc struct {
		Valid  bool `json:"valid"`
		Issues []struct{ Code, Severity, Path, Message string }
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || code != 1 || doc.Valid || len(doc.Issues) == 0 {
		t.Fatalf("code %d err %v doc %+v", code, err, doc)
	}
	for _, is := range doc.Issues {
		if is.Code == "" || is.Path == "" || is.Message == "" {
			t.Fatalf("issue without code, path or message: %+v", is)
		}
	}
}

func TestValidate_MissingDir(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"validate", "testdata/nope"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "nope") {
		t.Fatalf("exit %d stderr %q, want 2 naming the directory", code, errOut.String())
	}
}

// A rendered configuration that is not YAML is an error with the parser's
// line, offline as through the API.
func TestValidate_ConfigNotYAML(t *testing.T) {
	dir := writeDir(t, clienttest.Files("receivers:\n  otlp: {}\nexporters: debug: {}\n"))
	var out, errOut bytes.Buffer
	if code := run([]string{"validate", dir}, &out, &errOut); code != 1 {
		t.Fatalf("exit %d, want 1:\n%s%s", code, out.String(), errOut.String())
	}
	want := "error config_invalid at configs/edge.yaml: configs/edge.yaml: line 3: mapping values are not allowed in this context"
	if !strings.Contains(out.String(), want) {
		t.Fatalf("output lacks %q:\n%s", want, out.String())
	}
}
