package main

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/myriarch/myriarch/adapters/store/tables"
)

func TestTables_FromTheStoreDefinition(t *testing.T) {
	s := synthesized(t, nil)
	if got := len(s.ofType("AWS::DynamoDB::Table")); got != len(tables.All()) {
		t.Errorf("%d tables deployed, adapters/store/tables defines %d", got, len(tables.All()))
	}
	for _, def := range tables.All() {
		t.Run(def.Name, func(t *testing.T) {
			_, r := s.table(t, def.Name)
			p := r.Properties
			want := map[string]any{
				"BillingMode":                      "PAY_PER_REQUEST",
				"DeletionProtectionEnabled":        true,
				"PointInTimeRecoverySpecification": map[string]any{"PointInTimeRecoveryEnabled": true},
				"KeySchema":                        keySchema(def.PartitionKey, def.SortKey),
			}
			for k, v := range want {
				if !reflect.DeepEqual(p[k], v) {
					t.Errorf("%s = %v, want %v", k, p[k], v)
				}
			}
			if r.Deletion != "Retain" {
				t.Errorf("DeletionPolicy %q, want Retain", r.Deletion)
			}
			stream, _ := p["StreamSpecification"].(map[string]any)
			if got := fmt.Sprint(stream["StreamViewType"]); (def.Stream != "") != (stream != nil) || (stream != nil && got != string(def.Stream)) {
				t.Errorf("stream %v, definition says %q", stream, def.Stream)
			}
			var gsis []any
			for _, ix := range def.Indexes {
				projection := map[string]any{"ProjectionType": string(ix.Projection)}
				if len(ix.NonKeyAttributes) > 0 {
					var attrs []any
					for _, a := range ix.NonKeyAttributes {
						attrs = append(attrs, a)
					}
					projection["NonKeyAttributes"] = attrs
				}
				gsis = append(gsis, map[string]any{
					"IndexName": ix.Name, "KeySchema": keySchema(ix.PartitionKey, ix.SortKey), "Projection": projection,
				})
			}
			if !reflect.DeepEqual(p["GlobalSecondaryIndexes"], any(gsis)) && !(len(gsis) == 0 && p["GlobalSecondaryIndexes"] == nil) {
				t.Errorf("indexes\n got %v\nwant %v", p["GlobalSecondaryIndexes"], gsis)
			}
		})
	}
}

func keySchema(pk tables.Key, sk *tables.Key) []any {
	out := []any{map[string]any{"AttributeName": pk.Name, "KeyType": "HASH"}}
	if sk != nil {
		out = append(out, map[string]any{"AttributeName": sk.Name, "KeyType": "RANGE"})
	}
	return out
}

func TestTables_DeletionProtectionCanBeSwitchedOff(t *testing.T) {
	s := synthesized(t, variant)
	for _, def := range tables.All() {
		_, r := s.table(t, def.Name)
		if r.Properties["DeletionProtectionEnabled"] != false || r.Deletion != "Delete" {
			t.Errorf("%s: protection %v, DeletionPolicy %q; want off and Delete", def.Name, r.Properties["DeletionProtectionEnabled"], r.Deletion)
		}
	}
}
