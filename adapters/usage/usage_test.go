package usage

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestItemSize_CountsNamesAndValuesAsDynamoDBDoes(t *testing.T) {
	cases := []struct {
		name string
		item map[string]types.AttributeValue
		want int
	}{
		{name: "string", item: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "abc"}}, want: 2 + 3},
		{name: "utf-8 string counts bytes", item: map[string]types.AttributeValue{"n": &types.AttributeValueMemberS{Value: "é"}}, want: 1 + 2},
		{name: "number of 5 digits", item: map[string]types.AttributeValue{"v": &types.AttributeValueMemberN{Value: "12345"}}, want: 1 + 4},
		{name: "number's trailing zeros are not stored", item: map[string]types.AttributeValue{"v": &types.AttributeValueMemberN{Value: "1000"}}, want: 1 + 2},
		{name: "bool", item: map[string]types.AttributeValue{"ok": &types.AttributeValueMemberBOOL{Value: true}}, want: 2 + 1},
		{name: "binary", item: map[string]types.AttributeValue{"b": &types.AttributeValueMemberB{Value: []byte{1, 2, 3, 4}}}, want: 1 + 4},
		{name: "map", item: map[string]types.AttributeValue{"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"k": &types.AttributeValueMemberS{Value: "vv"}}}}, want: 1 + 3 + 1 + 1 + 2},
		{name: "list", item: map[string]types.AttributeValue{"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{
			&types.AttributeValueMemberS{Value: "a"}, &types.AttributeValueMemberS{Value: "bc"}}}}, want: 1 + 3 + 2 + 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ItemSize(c.item); got != c.want {
				t.Errorf("ItemSize = %d, want %d", got, c.want)
			}
		})
	}
}

func TestMeter_AddsPerKindAndResets(t *testing.T) {
	var m Meter
	m.Count("Query targets", Counts{Requests: 1, ItemsRead: 10, BytesRead: 1000, ReadUnits: 0.5})
	m.Count("Query targets", Counts{Requests: 1, ItemsRead: 5, BytesRead: 500, ReadUnits: 0.5})
	m.Count("TransactWriteItems agents", Counts{Requests: 1, ItemsWritten: 50, BytesWritten: 50000, WriteUnits: 100})
	k := m.Kinds()
	if got := k["Query targets"]; got.Requests != 2 || got.ItemsRead != 15 || got.BytesRead != 1500 || got.ReadUnits != 1 {
		t.Errorf("Query targets = %+v", got)
	}
	if tot := m.Total(); tot.Requests != 3 || tot.ItemsWritten != 50 || tot != k.Total() {
		t.Errorf("Total = %+v, kinds' total %+v", tot, k.Total())
	}
	if names := k.Names(); names[0] != "Query targets" {
		t.Errorf("Names = %v, want the most bytes read first", names)
	}
	if table := k.Table(10); !strings.Contains(table, "Query targets") || !strings.Contains(table, "total") {
		t.Errorf("Table lacks a kind or the total:\n%s", table)
	}
	m.Reset()
	if tot := m.Total(); tot != (Counts{}) {
		t.Errorf("after Reset: %+v", tot)
	}
	m.Count("x", Counts{Requests: 1})
	if a, b := m.Kinds(), m.Kinds(); a.Merge(b)["x"].Requests != 2 || a["x"].Requests != 1 {
		t.Error("Merge adds two readings without changing either")
	}
}
