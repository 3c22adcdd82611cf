// Package selector matches agents by their attribute view. Policies use it
// for selector waves and fleets for membership.
package selector

import "maps"

// Selector matches an agent when every listed attribute has exactly the given
// value and every condition holds. An empty selector matches every agent.
//
// MatchConditions is the second form, the conditions of a wave rollout
// (`cloud.region=eu-1, canary!=true`); fleets use only MatchAttributes.
type Selector struct {
	MatchAttributes map[string]string `json:"matchAttributes,omitempty" yaml:"matchAttributes,omitempty"`
	MatchConditions Conditions        `json:"matchConditions,omitempty" yaml:"matchConditions,omitempty"`
}

// Attributes is the read side of an agent's attribute view.
type Attributes interface {
	Attr(name string) (string, bool)
}

// Map adapts a plain map to Attributes.
type Map map[string]string

// Attr returns the value of the attribute name.
func (m Map) Attr(name string) (string, bool) {
	v, ok := m[name]
	return v, ok
}

// Matches reports whether attrs carries every attribute of the selector and
// satisfies every condition.
func (s Selector) Matches(attrs Attributes) bool {
	for k, want := range s.MatchAttributes {
		got, ok := attrs.Attr(k)
		if !ok || got != want {
			return false
		}
	}
	return s.MatchConditions.Matches(attrs)
}

// Empty reports whether the selector lists no attribute and no condition.
func (s Selector) Empty() bool { return len(s.MatchAttributes) == 0 && len(s.MatchConditions) == 0 }

// Clone returns a copy that shares no map or slice with s: a policy snapshot
// and the waves of a rollout must not change when the policy value does. An
// empty map or list becomes nil, the form JSON reads back (omitempty), so
// that a stored snapshot equals the one it was made from.
func (s Selector) Clone() Selector {
	var out Selector
	if len(s.MatchAttributes) > 0 {
		out.MatchAttributes = maps.Clone(s.MatchAttributes)
	}
	if len(s.MatchConditions) > 0 {
		out.MatchConditions = s.MatchConditions.Clone()
	}
	return out
}
