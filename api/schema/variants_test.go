package schema

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/myriarch/myriarch/core/executorobject"
	"github.com/myriarch/myriarch/core/executorobject/executortest"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/fleet/fleettest"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/policy/policytest"
)

// scalars are values that sit at the edges of the schemas' patterns and
// types, as YAML writes them (plain, so that YAML resolves their type).
var scalars = []string{
	"0", "-0", "+0", "0s", "-0s", "+5s", "-1s", "1.5", "1.", ".5s", "1µs", "1h30m", "24h", "25h", "9999999999h",
	"1", "2", "7", "100", "101", "-1", "0x10", "1e3", "1_000", "200", "599", "600", "99999999999999999999999",
	"25%", "' 25 %'", "'007%'", "'100%'", "'0%'", "'+5%'", "'3'",
	"''", "' '", "~", "true", "false", "yes", "'true'", "22:00", "'24:00'", "'7:05'", "2026-12-20T00:00:00Z", "'2026-12-20T00:00:00,5+01:00'",
	"Mon", "Sunday", "agent", "Local", "UTC", "Europe/Berlin", "rest", "zone", "az", "Zone", "pause", "stop",
	"webhook", "awx", "updater", "none", "manual", "POST", "post", "0.161.0", "v0.161.0", "0.162.0-rc.1", "'>=0.1.0'",
	"edge", "Edge", "a-b", "-a", "'http://{host}:13133/'", "'http://{host}'", "'https://a.example'", "'HTTPS://a.example/x#'",
	"'0'", "'-0'", "'-0.0s'", "'+1s'", "'1.s'", "'1μs'", "'1h-1m'", "'1 s'", "1d", "0.0", "'5'", "'+025%'", "'100 %'",
	"'2026-12-20T00:00:00.5Z'", "'2026-12-20T00:00:00z'", "' agent'", "'00:00'", "'23:59'", "'x'", "'X-Team'", "'edge-hook'",
	"'http://u@a.example'", "'k=v'", "'k=~(a|b)'", "'a/b'", "'../x'", "'cloud.region=eu-1'", "'{host}'", "host.name",
}

// TestVariants_ValidForTheParserIsValidForTheSchema: every valid document
// of the tables with any one of its scalars replaced by any value at an edge,
// or with any one of its keys left out, is, when the parser still accepts it,
// accepted by the schema too: the schema is never stricter than the parser.
func TestVariants_ValidForTheParserIsValidForTheSchema(t *testing.T) {
	// Tens of thousands of documents marshalled, parsed and validated, each
	// thrown away: at the default GOGC the collector took more than half
	// the CPU (14 CPU-seconds, 7 at 400).
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	compiled := schemas(t)
	type base struct{ kind, file, doc string }
	var bases []base
	for _, c := range policytest.All() {
		bases = append(bases, base{policy.ObjectKind, RolloutPolicyFile, c.Doc})
	}
	for _, c := range fleettest.All() {
		bases = append(bases, base{fleet.ObjectKind, FleetFile, c.Doc})
	}
	for _, c := range executortest.All() {
		bases = append(bases, base{executorobject.ObjectKind, ExecutorFile, c.Doc})
	}
	files, _ := filepath.Glob(filepath.Join(repoRoot, "core/policy/testdata/*.yaml"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		bases = append(bases, base{policy.ObjectKind, RolloutPolicyFile, string(data)})
	}
	var valid []base
	for _, b := range bases {
		if !errorsOf(parse(b.kind, []byte(b.doc), fleettest.PolicyExists)).HasErrors() {
			valid = append(valid, b)
		}
	}
	checked := 0
	for _, b := range valid {
		for leaf := 0; ; leaf++ {
			root, n := leafOf(t, b.doc, leaf)
			if n == nil {
				break
			}
			for _, value := range scalars {
				var v yaml.Node
				if err := yaml.Unmarshal([]byte("v: "+value), &v); err != nil {
					t.Fatal(err)
				}
				saved := *n
				*n = *v.Content[0].Content[1]
				out, err := yaml.Marshal(root)
				*n = saved
				if err != nil {
					t.Fatal(err)
				}
				if errorsOf(parse(b.kind, out, fleettest.PolicyExists)).HasErrors() {
					continue
				}
				checked++
				if err := verdict(compiled[b.file], out); err != nil {
					t.Fatalf("valid for the parser, refused by the schema: %v\n%s", err, out)
				}
			}
		}
	}
	// Every key left out in turn, with its value.
	for _, b := range valid {
		for entry := 0; ; entry++ {
			root, m, i := entryOf(t, b.doc, entry)
			if m == nil {
				break
			}
			m.Content = append(m.Content[:i:i], m.Content[i+2:]...)
			out, err := yaml.Marshal(root)
			if err != nil {
				t.Fatal(err)
			}
			if errorsOf(parse(b.kind, out, fleettest.PolicyExists)).HasErrors() {
				continue
			}
			checked++
			if err := verdict(compiled[b.file], out); err != nil {
				t.Fatalf("valid for the parser, refused by the schema: %v\n%s", err, out)
			}
		}
	}
	t.Logf("%d valid variants of %d valid documents", checked, len(valid))
}

// leafOf parses doc and returns it with its i-th scalar value (keys are not
// values), or a nil node when it has fewer.
func leafOf(t *testing.T, doc string, i int) (*yaml.Node, *yaml.Node) {
	t.Helper()
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &root); err != nil {
		t.Fatal(err)
	}
	var leaves []*yaml.Node
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		for j, c := range n.Content {
			if c.Kind == yaml.ScalarNode && !(n.Kind == yaml.MappingNode && j%2 == 0) {
				leaves = append(leaves, c)
			}
			walk(c)
		}
	}
	walk(&root)
	if i >= len(leaves) {
		return &root, nil
	}
	return &root, leaves[i]
}

// entryOf parses doc and returns it with the mapping that holds its i-th
// key and the index of that key in the mapping's content, or a nil mapping
// when it has fewer keys.
func entryOf(t *testing.T, doc string, i int) (*yaml.Node, *yaml.Node, int) {
	t.Helper()
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &root); err != nil {
		t.Fatal(err)
	}
	type entry struct {
		m *yaml.Node
		i int
	}
	var entries []entry
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			for j := 0; j+1 < len(n.Content); j += 2 {
				entries = append(entries, entry{n, j})
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&root)
	if i >= len(entries) {
		return &root, nil, 0
	}
	return &root, entries[i].m, entries[i].i
}
