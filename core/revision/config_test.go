package revision

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/myriarch/myriarch/core/issue"
)

func TestCheckConfig(t *testing.T) {
	const file = "configs/edge.yaml"
	invalid := func(msg string) issue.List {
		return issue.List{{Code: CodeConfigInvalid, Severity: issue.Error, Path: file, Message: msg}}
	}
	manyDups := "a: 1\n" + strings.Repeat("a: 2\n", maxDuplicateKeyIssues+3)
	var manyWant issue.List
	for i := 0; i < maxDuplicateKeyIssues; i++ {
		manyWant = append(manyWant, invalid(fmt.Sprintf(`configs/edge.yaml: line %d: mapping key "a" already defined at line 1`, i+2))...)
	}
	manyWant = append(manyWant, invalid("configs/edge.yaml: 3 more mapping keys are defined twice")...)
	tests := []struct {
		name string
		body string
		want issue.List
	}{
		{name: "a collector configuration", body: "receivers:\n  otlp: {}\nservice:\n  pipelines: {traces: {receivers: [otlp]}}\n"},
		{name: "empty", body: ""},
		{name: "comments only", body: "# rendered later\n"},
		{name: "one document with a marker", body: "---\nreceivers: {}\n"},
		{name: "anchors and merge keys", body: "base: &b {timeout: 5s}\nbatch:\n  <<: *b\n  timeout: 1s\n"}, // a merge may be overridden
		{name: "equal keys in different mappings", body: "a: {x: 1}\nb: {x: 1}\n"},
		{name: "mapping value in a plain scalar", body: "receivers:\n  otlp: {}\nexporters: debug: {}\n",
			want: invalid("configs/edge.yaml: line 3: mapping values are not allowed in this context")},
		{name: "unclosed flow mapping", body: "receivers: {otlp: {}\n",
			want: invalid("configs/edge.yaml: line 1: did not find expected ',' or '}'")},
		{name: "tab indentation", body: "receivers:\n\totlp: {}\n",
			want: invalid("configs/edge.yaml: line 2: found character that cannot start any token")},
		{name: "a key twice", body: "receivers: {}\nexporters: {}\nreceivers: {otlp: {}}\n",
			want: invalid(`configs/edge.yaml: line 3: mapping key "receivers" already defined at line 1`)},
		{name: "a nested key twice", body: "service:\n  pipelines:\n    traces: {}\n    traces: {}\n",
			want: invalid(`configs/edge.yaml: line 4: mapping key "traces" already defined at line 3`)},
		{name: "many keys twice", body: manyDups, want: manyWant},
		{name: "a sequence", body: "- receivers\n- exporters\n",
			want: invalid("configs/edge.yaml: line 1: the configuration must be a YAML mapping (receivers:, exporters:, service: ...), not a sequence")},
		{name: "a scalar", body: "receivers\n",
			want: invalid("configs/edge.yaml: line 1: the configuration must be a YAML mapping (receivers:, exporters:, service: ...), not a scalar (str)")},
		{name: "two documents", body: "receivers: {}\n---\nexporters: {}\n", // the line of the marker
			want: invalid("configs/edge.yaml: line 2: a second YAML document: a collector reads only the first, so the configuration must be one document")},
		// read by the shared rule (yamldoc.Read, RefuseAny, aliases kept)
		{name: "a trailing empty document", body: "receivers: {}\n---\n",
			want: invalid("configs/edge.yaml: line 2: a second YAML document: a collector reads only the first, so the configuration must be one document")},
		{name: "a second document that is not YAML", body: "receivers: {}\n---\nexporters: [\n",
			want: invalid("configs/edge.yaml: line 3: did not find expected node content")},
		{name: "aliases, many times over", body: "a: &a [x, x, x, x]\nb: &b [*a, *a, *a, *a]\nc: &c [*b, *b, *b, *b]\nd: [*c, *c, *c, *c]\n"}, // the collector's to follow
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := checkConfig(file, []byte(tt.body)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("checkConfig =\n%v\nwant\n%v", got, tt.want)
			}
		})
	}
}
