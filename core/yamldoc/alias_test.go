package yamldoc

import (
	"errors"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func parse(t *testing.T, doc string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
		t.Fatal(err)
	}
	return n.Content[0]
}

// bomb is ten levels that each name the level below ten times: 27 lines
// that a reader following aliases expands to ten billion values.
func bomb() string {
	var b strings.Builder
	b.WriteString("l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 10; i++ {
		prev := "*l" + string(rune('0'+i-1))
		b.WriteString("l" + string(rune('0'+i)) + ": &l" + string(rune('0'+i)) + " [" + strings.TrimSuffix(strings.Repeat(prev+", ", 10), ", ") + "]\n")
	}
	return b.String()
}

// walk resolves every node of a tree as a decoder that follows aliases
// does, until the resolver stops it; it returns the errors met.
func walk(r *Resolver, n *yaml.Node) []error {
	var errs []error
	var visit func(n *yaml.Node)
	visit = func(n *yaml.Node) {
		got, err := r.Resolve(n)
		if err != nil {
			errs = append(errs, err)
		}
		if got == nil {
			return
		}
		for _, c := range got.Content {
			visit(c)
		}
	}
	visit(n)
	return errs
}

func TestFollow_ResolvesAnAlias(t *testing.T) {
	n := parse(t, "a: &w {start: '22:00'}\nb: *w")
	got, err := Follow(Budget).Resolve(n.Content[3])
	if err != nil || got != n.Content[1] {
		t.Fatalf("Resolve(*w) = %v, %v; want the anchored mapping", got, err)
	}
}

// An alias bomb stops at the budget with one ErrExpands, whatever follows.
func TestFollow_AliasBombStopsAtTheBudget(t *testing.T) {
	r := Follow(Budget)
	errs := walk(r, parse(t, bomb()))
	if len(errs) != 1 || !errors.Is(errs[0], ErrExpands) || !r.Spent() {
		t.Fatalf("errors %v, spent %v; want one ErrExpands", errs, r.Spent())
	}
}

// A document of exactly the budget is read; one node more is not.
func TestFollow_Boundary(t *testing.T) {
	doc := parse(t, "[a, b, c]") // 4 nodes: the list and three strings
	if errs := walk(Follow(4), doc); len(errs) != 0 {
		t.Errorf("4 nodes, budget 4: %v, want none", errs)
	}
	if errs := walk(Follow(3), doc); len(errs) != 1 || !errors.Is(errs[0], ErrExpands) {
		t.Errorf("4 nodes, budget 3: %v, want ErrExpands", errs)
	}
}

func TestRefuse_RefusesAnAlias(t *testing.T) {
	n := parse(t, "a: &u https://a.example\nb: *u")
	r := Refuse()
	if got, err := r.Resolve(n.Content[3]); got != nil || !errors.Is(err, ErrRefused) {
		t.Errorf("Resolve(*u) = %v, %v; want ErrRefused", got, err)
	}
	// an anchor alone is no alias: the node is read where it is written
	if got, err := r.Resolve(n.Content[1]); err != nil || got != n.Content[1] {
		t.Errorf("Resolve(&u value) = %v, %v; want the node", got, err)
	}
	// refusing spends nothing: a large document without aliases is read
	if errs := walk(r, parse(t, "["+strings.Repeat("x, ", 2*Budget)+"x]")); len(errs) != 0 {
		t.Errorf("no alias: %v, want none", errs)
	}
}

func TestResolve_Unresolved(t *testing.T) {
	if _, err := Follow(Budget).Resolve(&yaml.Node{Kind: yaml.AliasNode}); !errors.Is(err, ErrUnresolved) {
		t.Errorf("an alias to nothing: %v, want ErrUnresolved", err)
	}
}
