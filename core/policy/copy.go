package policy

import (
	"slices"

	"github.com/myriarch/myriarch/core/windows"
)

// A snapshot must not share memory with the policy it was taken from: the
// policy is a cache entry that a later revision replaces or edits, and a
// shared selector map or days slice would change a running rollout with it.

func cloneWaves(ws []Wave) []Wave {
	if len(ws) == 0 { // nil, so that "none" has one form in JSON round trips
		return nil
	}
	out := make([]Wave, len(ws))
	for i, w := range ws {
		out[i] = w
		if w.Selector != nil {
			sel := w.Selector.Clone()
			out[i].Selector = &sel
		}
	}
	return out
}

func cloneStrings(ss []string) []string {
	if len(ss) == 0 { // nil, so that "none" has one form in JSON round trips
		return nil
	}
	return slices.Clone(ss)
}

func cloneWindows(ws []windows.Window) []windows.Window {
	if len(ws) == 0 { // nil, so that "none" has one form in JSON round trips
		return nil
	}
	out := make([]windows.Window, len(ws))
	for i, w := range ws {
		out[i] = w
		out[i].Days = slices.Clone(w.Days)
	}
	return out
}
