// Package selector matches agents by their attribute view. Policies use it
// for selector waves and fleets for membership.
package selector

// Selector matches an agent when every listed attribute has exactly the given
// value. An empty selector matches every agent.
type Selector struct {
	MatchAttributes map[string]string `json:"matchAttributes,omitempty" yaml:"matchAttributes,omitempty"`
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

// Matches reports whether attrs carries every attribute of the selector.
func (s Selector) Matches(attrs Attributes) bool {
	for k, want := range s.MatchAttributes {
		got, ok := attrs.Attr(k)
		if !ok || got != want {
			return false
		}
	}
	return true
}

// Empty reports whether the selector lists no attribute.
func (s Selector) Empty() bool { return len(s.MatchAttributes) == 0 }
