package yamldoc

import (
	"errors"

	"go.yaml.in/yaml/v3"
)

// Budget is the most nodes one decoding resolves. A real policy has a few
// hundred values, a fleet a few dozen.
const Budget = 10_000

// maxHops bounds a chain of aliases (an alias of an alias ...), so that a
// malformed tree cannot loop.
const maxHops = 100

var (
	// ErrRefused: the object does not take aliases.
	ErrRefused = errors.New("an alias where the object takes none")
	// ErrUnresolved: the alias leads nowhere.
	ErrUnresolved = errors.New("an alias that cannot be resolved")
	// ErrExpands: the budget is spent; returned once, nil nodes after.
	ErrExpands = errors.New("the document expands past the alias budget")
)

// Resolver resolves the nodes of one decoding by the object's rule. Not
// safe for concurrent use: one decoding, one Resolver.
type Resolver struct {
	refuse bool
	keep   bool
	left   int
	spent  bool
}

// Follow is the rule of policies and fleets: an alias stands for its
// anchored node, and each node resolved spends one unit of budget.
func Follow(budget int) *Resolver { return &Resolver{left: budget} }

// Refuse is the rule of executor objects: an alias is an error, so a small
// document cannot expand into a large one and every value is where it is
// read.
func Refuse() *Resolver { return &Resolver{refuse: true} }

// Keep is the rule of configurations: an alias is the collector's to
// follow, so Resolve returns every node as written and spends nothing;
// Myriarch's checks walk an anchored node where it is defined.
func Keep() *Resolver { return &Resolver{keep: true} }

// Resolve returns the node n stands for: n, or through its aliases the
// anchored node. It returns nil with ErrRefused, ErrUnresolved, or
// ErrExpands the first time the budget runs out, and nil with no error
// after that, so that a caller reports the expansion once and stops.
func (r *Resolver) Resolve(n *yaml.Node) (*yaml.Node, error) {
	if r.spent {
		return nil, nil
	}
	if r.keep {
		return n, nil
	}
	if n != nil && n.Kind == yaml.AliasNode && r.refuse {
		return nil, ErrRefused
	}
	if n = Target(n); n == nil || n.Kind == yaml.AliasNode {
		return nil, ErrUnresolved
	}
	if !r.refuse {
		if r.left--; r.left < 0 {
			r.spent = true
			return nil, ErrExpands
		}
	}
	return n, nil
}

// Spent reports whether the budget ran out.
func (r *Resolver) Spent() bool { return r.spent }

// Target is the node an alias (or a chain of aliases) names, n itself when
// it is no alias, without spending any budget: for a look ahead at a node
// that a Resolver reads next. A chain longer than maxHops, or one that ends
// nowhere, is nil.
func Target(n *yaml.Node) *yaml.Node {
	for hops := 0; n != nil && n.Kind == yaml.AliasNode; hops++ {
		if hops > maxHops {
			return nil
		}
		n = n.Alias
	}
	return n
}
