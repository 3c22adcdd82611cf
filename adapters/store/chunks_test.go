package store

import (
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A wave's agents are written in transactions of at most 100 items and of
// at most maxTransactBytes: DynamoDB refuses a transaction over 4 MB, and
// agents with many attributes are large.
func TestChunkBounds(t *testing.T) {
	ones := func(n, size int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = size
		}
		return s
	}
	cases := []struct {
		name  string
		sizes []int
		want  []int
	}{
		{name: "none", sizes: nil, want: []int{0}},
		{name: "one chunk", sizes: ones(3, 10), want: []int{0, 3}},
		{name: "by count", sizes: ones(250, 0), want: []int{0, 100, 200, 250}},
		{name: "by size", sizes: ones(5, 40), want: []int{0, 2, 4, 5}}, // 100 bytes at most: 2 items of 40
		{name: "an item over the bound alone", sizes: []int{10, 150, 10}, want: []int{0, 1, 2, 3}},
		{name: "exactly the bound", sizes: []int{50, 50, 50}, want: []int{0, 2, 3}},
	}
	for _, c := range cases {
		maxItems := 100
		if got := chunkBounds(c.sizes, maxItems, 100); !slices.Equal(got, c.want) {
			t.Errorf("%s: bounds %v, want %v", c.name, got, c.want)
		}
	}
}

func TestItemBytes(t *testing.T) {
	item := map[string]types.AttributeValue{
		"id":    &types.AttributeValueMemberS{Value: "abc"},                                                                           // 2 + 3
		"v":     &types.AttributeValueMemberN{Value: "12"},                                                                            // 1 + 2
		"on":    &types.AttributeValueMemberBOOL{Value: true},                                                                         // 2 + 1
		"attrs": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k": &types.AttributeValueMemberS{Value: "vv"}}}, // 5 + 3 + 1 + 2
	}
	if got, want := itemBytes(item), 5+3+3+11; got != want {
		t.Fatalf("itemBytes %d, want %d", got, want)
	}
}
