// Package yamldoc is the one rule by which Myriarch reads a user's YAML
// object: a rollout policy, a fleet, an executor object, and the rendered
// configuration of a fleet. Read takes the one document of a file, says
// what follows it (Trailing), refuses explicit tags (!!int 0.161.0) in an
// object, and looks at the root by the object's alias rule; each object
// words what Read reports with its own issue codes and messages, which
// the specs and docs quote.
//
// Anchors and aliases (&name, *name): a rollout policy and a fleet may use
// them (docs/policy.md). Their decoders follow an alias to its anchored
// node, and every node they resolve spends one unit of a budget of Budget
// nodes, so that a few kilobytes that name one subtree many times cannot
// expand into millions of values and issues. An executor object refuses
// them (docs/executors.md). A configuration is the collector's own YAML:
// its aliases are the collector's to follow (Keep), and Myriarch's checks
// (revision.checkConfig) walk an anchored node where it is written, never
// through an alias, so they need no budget.
package yamldoc
