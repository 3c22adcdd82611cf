package fleet

import (
	"strings"
	"testing"
)

func TestValidName(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{name: "edge", want: true},
		{name: "a", want: true},              // one character
		{name: "0", want: true},              // a digit may start and end
		{name: "edge-gateway-2", want: true}, // hyphens inside
		{name: strings.Repeat("a", MaxNameLength), want: true},
		{name: strings.Repeat("a", MaxNameLength+1), want: false}, // one above the limit
		{name: "", want: false},
		{name: "-edge", want: false}, // starts with '-'
		{name: "edge-", want: false}, // ends with '-'
		{name: "Edge", want: false},  // uppercase
		{name: "edge_gw", want: false},
		{name: "edge.gw", want: false},
		{name: "edge gw", want: false},
		{name: "édge", want: false},
		{name: "edge\n", want: false}, // $ must not match before a trailing newline
	}
	for _, tt := range tests {
		if got := ValidName(tt.name); got != tt.want {
			t.Errorf("ValidName(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}
