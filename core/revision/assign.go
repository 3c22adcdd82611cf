package revision

import (
	"fmt"
	"sort"

	"github.com/myriarch/myriarch/core/selector"
)

// Assignment is the fleet of one agent, or why it has none.
type Assignment struct {
	Fleet string `json:"fleet,omitempty"`
	// Error is set when several fleets match: such an agent belongs to none,
	// so that no rollout touches it until its attributes or Git are fixed.
	Error string `json:"error,omitempty"`
}

// Assign finds the fleet whose selector matches the agent's attributes. The
// most specific selector (the most attributes) wins, so a catch-all fleet
// with an empty selector takes only the agents no other fleet takes; two
// equally specific matches are an error.
func (rev Revision) Assign(attrs selector.Attributes) Assignment {
	var matched []string
	best := -1
	for _, f := range rev.Fleets {
		if !f.Selector.Matches(attrs) {
			continue
		}
		switch n := len(f.Selector.MatchAttributes); {
		case n > best:
			best, matched = n, []string{f.Name}
		case n == best:
			matched = append(matched, f.Name)
		}
	}
	switch len(matched) {
	case 0:
		return Assignment{}
	case 1:
		return Assignment{Fleet: matched[0]}
	}
	sort.Strings(matched)
	return Assignment{Error: fmt.Sprintf("the agent matches several fleets: %v", matched)}
}
