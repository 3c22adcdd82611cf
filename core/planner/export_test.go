package planner

import (
	"context"

	"github.com/myriarch/myriarch/core/policy"
)

// What the external tests (package planner_test, which run the planner on
// the shared in-memory store, local/store/memstore, and so cannot be inside
// the package it imports) use of the package's insides.

var (
	T0        = t0
	EdgeFleet = edgeFleet
	Agents    = agents
)

// Load is the planner's read of its input.
func (p Planner) Load(ctx context.Context, fleetName string, k policy.Kind) (Input, error) {
	return p.load(ctx, fleetName, k)
}

// Apply carries a decision out.
func (p Planner) Apply(ctx context.Context, in Input, d Decision) error { return p.apply(ctx, in, d) }
