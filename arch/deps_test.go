package arch

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/myriarch/myriarch/"

// cloudFree are the packages that link no cloud SDK and no metrics client
// (the architecture's first keystone: "the core imports no AWS package"):
// every package that docs/architecture.md puts in the core, so that a new
// core package is held to it at once, and these adapters, which call out
// over HTTP only: the executors' and the API's clients.
func cloudFree(t *testing.T) []string {
	out := []string{"adapters/executor/awx", "adapters/executor/webhook", "adapters/api/schema", "adapters/client", "cmd/myrctl"}
	for p, l := range docLayers(t, "../docs/architecture.md") {
		if l == layerCore {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// forbidden reports whether a package is a cloud SDK or a metrics client.
func forbidden(path string) bool {
	return strings.HasPrefix(path, "github.com/aws/") || strings.HasPrefix(path, "github.com/prometheus/client_golang")
}

// TestCore_LinksNoCloud fails for each core package whose dependencies hold
// a forbidden package, naming the chain of imports that pulls it in, so
// that the import to cut is the first thing the failure shows.
func TestCore_LinksNoCloud(t *testing.T) {
	core := cloudFree(t)
	graph := importGraph(t, core)
	for _, p := range core {
		if chain := pathTo(graph, module+p, forbidden); chain != nil {
			t.Errorf("%s links %s, which the core must not; imported through:\n\t%s",
				p, chain[len(chain)-1], strings.Join(trim(chain), "\n\t-> "))
		}
	}
}

// The search finds the shortest chain, and none where there is none.
func TestPathTo(t *testing.T) {
	g := map[string][]string{
		"a": {"b", "c"},
		"b": {"d"},
		"c": {"github.com/aws/x"},
		"d": {"github.com/aws/y"},
	}
	if got := pathTo(g, "a", forbidden); !slices.Equal(got, []string{"a", "c", "github.com/aws/x"}) {
		t.Errorf("chain %v, want a -> c -> github.com/aws/x", got)
	}
	if got := pathTo(g, "b", func(string) bool { return false }); got != nil {
		t.Errorf("chain %v, want none", got)
	}
}

// importGraph lists the imports of the roots and of everything they depend
// on, as `go list -deps` sees them for this platform's build.
func importGraph(t *testing.T, roots []string) map[string][]string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the dependencies: %v", err)
	}
	args := []string{"list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}"}
	for _, r := range roots {
		args = append(args, module+r)
	}
	cmd := exec.Command(goTool, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	graph := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) > 0 {
			graph[f[0]] = f[1:]
		}
	}
	return graph
}

// pathTo is the shortest chain of imports from root to a package that bad
// reports, breadth first; nil when there is none.
func pathTo(graph map[string][]string, root string, bad func(string) bool) []string {
	from := map[string]string{root: ""}
	queue := []string{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if bad(p) {
			var chain []string
			for ; p != ""; p = from[p] {
				chain = append(chain, p)
			}
			slices.Reverse(chain)
			return chain
		}
		for _, q := range graph[p] {
			if _, seen := from[q]; !seen {
				from[q] = p
				queue = append(queue, q)
			}
		}
	}
	return nil
}

// trim drops the module's prefix, for a shorter message.
func trim(chain []string) []string {
	out := make([]string, len(chain))
	for i, p := range chain {
		out[i] = strings.TrimPrefix(p, module)
	}
	return out
}
