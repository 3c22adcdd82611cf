package iam

import (
	"fmt"
	"strings"
)

// eventsAccesses: PutEvents is authorized on each entry's bus (the
// default bus when an entry names none).
func eventsAccesses(s Scope, op string, b jsonBody) ([]Access, error) {
	if op != "PutEvents" {
		return nil, fmt.Errorf("the local cloud does not know the EventBridge operation %s", op)
	}
	entries, _ := b["Entries"].([]any)
	if len(entries) == 0 {
		return nil, fmt.Errorf("no Entries")
	}
	var out []Access
	seen := map[string]bool{}
	for _, e := range entries {
		bus := str(mapOf(e)["EventBusName"])
		if bus == "" {
			bus = "default"
		}
		if !strings.HasPrefix(bus, "arn:") {
			bus = s.arn("events", "event-bus/"+bus)
		}
		if !seen[bus] {
			seen[bus] = true
			out = append(out, Access{"events:PutEvents", bus})
		}
	}
	return out, nil
}
