package arch

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The layers of docs/architecture.md, by the heading of their table.
const (
	layerCore    = "The core"
	layerAdapter = "Adapters"
	layerLocal   = "Local stand-ins"
	layerTest    = "Test support"
	layerTools   = "Tools and examples"
)

// TestLayers_AsTheArchitectureDocSays reads the package tables of
// docs/architecture.md, so that the document a reader trusts is the rule
// the build is held to: every package of the module is listed once; the
// core imports only the core; an adapter imports neither a local stand-in
// nor test support, so nothing that runs in AWS depends on a fake.
func TestLayers_AsTheArchitectureDocSays(t *testing.T) {
	layers := docLayers(t, "../docs/architecture.md")
	imports := moduleImports(t)
	for p := range imports {
		if layers[p] == "" {
			t.Errorf("%s is in no layer of docs/architecture.md: add it to the table of its layer", p)
		}
	}
	for p, l := range layers {
		if _, ok := imports[p]; !ok {
			t.Errorf("docs/architecture.md lists %s under %q, which is no package of the module", p, l)
		}
	}
	for p, l := range layers {
		if !inItsFolder(p, l) {
			t.Errorf("%s is listed under %q but lives outside that layer's folders %v", p, l, folders[l])
		}
	}
	for p, deps := range imports {
		for _, d := range deps {
			if msg := crossing(layers[p], layers[d]); msg != "" {
				t.Errorf("%s (%s) imports %s (%s): %s", p, layers[p], d, layers[d], msg)
			}
		}
	}
}

// folders are where each layer's packages live, so that the tree shows
// the architecture: the core in core/, the adapters in adapters/ with the
// main packages they run in, the stand-ins in local/. Test support sits
// beside what it supports; a package's fixtures (core/policy/policytest)
// stay with it.
var folders = map[string][]string{
	layerCore:    {"core"},
	layerAdapter: {"adapters", "functions", "cmd/myrctl", "cmd/myriarch-updater", "opamp-gateway", "api"},
	layerLocal:   {"local", "cmd/myriarch-local", "cmd/myriarch-cloud", "cmd/sfnlocal"},
	layerTest:    {"core", "adapters", "local", "arch"},
	layerTools:   {"examples"},
}

func inItsFolder(p, layer string) bool {
	for _, f := range folders[layer] {
		dir := strings.TrimSuffix(f, "/")
		if p == dir || strings.HasPrefix(p, dir+"/") {
			return true
		}
	}
	return false
}

func TestInItsFolder(t *testing.T) {
	for _, c := range []struct {
		pkg, layer string
		in         bool
	}{
		{pkg: "core/engine", layer: layerCore, in: true},
		{pkg: "adapters/store", layer: layerCore, in: false},
		{pkg: "coreish/x", layer: layerCore, in: false},
		{pkg: "functions/api", layer: layerAdapter, in: true},
		{pkg: "api", layer: layerAdapter, in: true},
		{pkg: "api/schema", layer: layerAdapter, in: true},
		{pkg: "apis/x", layer: layerAdapter, in: false},
		{pkg: "local/stack", layer: layerLocal, in: true},
		{pkg: "core/policy/policytest", layer: layerTest, in: true},
	} {
		if got := inItsFolder(c.pkg, c.layer); got != c.in {
			t.Errorf("inItsFolder(%s, %s) = %v, want %v", c.pkg, c.layer, got, c.in)
		}
	}
}

// crossing says why an import from one layer into another is refused, or
// "" when it is allowed.
func crossing(from, to string) string {
	switch {
	case from == layerCore && to != layerCore:
		return "the core imports only the core"
	case from == layerAdapter && (to == layerLocal || to == layerTest):
		return "an adapter must not depend on a local stand-in or test support"
	}
	return ""
}

func TestCrossing(t *testing.T) {
	for _, c := range []struct {
		from, to string
		refused  bool
	}{
		{from: layerCore, to: layerCore, refused: false},
		{from: layerCore, to: layerAdapter, refused: true},
		{from: layerCore, to: layerTest, refused: true},
		{from: layerAdapter, to: layerCore, refused: false},
		{from: layerAdapter, to: layerAdapter, refused: false},
		{from: layerAdapter, to: layerLocal, refused: true},
		{from: layerAdapter, to: layerTest, refused: true},
		{from: layerLocal, to: layerTest, refused: false},
		{from: layerTest, to: layerLocal, refused: false},
	} {
		if got := crossing(c.from, c.to) != ""; got != c.refused {
			t.Errorf("%s -> %s refused %v, want %v", c.from, c.to, got, c.refused)
		}
	}
}

// docLayers maps each package path in a table row ("| `pkg/x` | ... |")
// to the heading of its table; a package listed twice fails the test.
func docLayers(t *testing.T, file string) map[string]string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	heading := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if h, ok := strings.CutPrefix(line, "## "); ok {
			heading = h
			continue
		}
		rest, ok := strings.CutPrefix(line, "| `")
		if !ok {
			continue
		}
		path, _, _ := strings.Cut(rest, "`")
		switch heading {
		case layerCore, layerAdapter, layerLocal, layerTest, layerTools:
		default:
			t.Fatalf("%s: %s is listed under %q, which is no layer", file, path, heading)
		}
		if prev := out[path]; prev != "" {
			t.Errorf("%s: %s is listed under %q and %q", file, path, prev, heading)
		}
		out[path] = heading
	}
	return out
}

// moduleImports lists each package of the module (its path within the
// module) with the module's packages it imports, tests left out.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./...")
	cmd.Dir = ".."
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		p := strings.TrimPrefix(f[0], module)
		imports[p] = nil
		for _, d := range f[1:] {
			if strings.HasPrefix(d, module) {
				imports[p] = append(imports[p], strings.TrimPrefix(d, module))
			}
		}
	}
	return imports
}
