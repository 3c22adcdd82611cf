package freeze

import (
	"testing"
	"time"

	"github.com/myriarch/myriarch/pkg/policy"
	"github.com/myriarch/myriarch/pkg/windows"
)

func at(s string) *time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return &t
}

func TestActive(t *testing.T) {
	holidays := policy.Freeze{Name: "holidays", Regions: []string{"us-east-1"}, From: at("2026-12-20T00:00:00Z"), Until: at("2027-01-04T00:00:00Z")}
	backup := policy.Freeze{Name: "backup", Window: &windows.Window{Start: 60, End: 120}}
	everywhere := policy.Freeze{Name: "all", From: at("2026-12-24T10:00:00Z"), Until: at("2026-12-24T12:00:00Z")}
	tests := []struct {
		name    string
		fs      []policy.Freeze
		regions []string
		now     string
		want    string // freeze name, "" for none
		until   string
	}{
		{"in the region, inside", []policy.Freeze{holidays}, []string{"us-east-1"}, "2026-12-24T00:00:00Z", "holidays", "2027-01-04T00:00:00Z"},
		{"another region", []policy.Freeze{holidays}, []string{"eu-west-1"}, "2026-12-24T00:00:00Z", "", ""},
		{"a stage of two regions, one frozen", []policy.Freeze{holidays}, []string{"eu-west-1", "us-east-1"}, "2026-12-24T00:00:00Z", "holidays", "2027-01-04T00:00:00Z"},
		{"from is inclusive", []policy.Freeze{holidays}, []string{"us-east-1"}, "2026-12-20T00:00:00Z", "holidays", "2027-01-04T00:00:00Z"},
		{"until is exclusive", []policy.Freeze{holidays}, []string{"us-east-1"}, "2027-01-04T00:00:00Z", "", ""},
		{"daily window, UTC by default", []policy.Freeze{backup}, []string{"eu-west-1"}, "2026-12-02T01:30:00Z", "backup", "2026-12-02T02:00:00Z"},
		{"daily window, outside", []policy.Freeze{backup}, []string{"eu-west-1"}, "2026-12-02T02:00:00Z", "", ""},
		{"no regions covers a stage without regions", []policy.Freeze{everywhere}, nil, "2026-12-24T11:00:00Z", "all", "2026-12-24T12:00:00Z"},
		{"the one that ends last wins", []policy.Freeze{everywhere, holidays}, []string{"us-east-1"}, "2026-12-24T11:00:00Z", "holidays", "2027-01-04T00:00:00Z"},
	}
	for _, tt := range tests {
		h, ok := Active(tt.fs, tt.regions, *at(tt.now))
		if tt.want == "" {
			if ok {
				t.Errorf("%s: held by %s, want free", tt.name, h.Freeze.Name)
			}
			continue
		}
		if !ok || h.Freeze.Name != tt.want || !h.Until.Equal(*at(tt.until)) {
			t.Errorf("%s: %v %+v, want %s until %s", tt.name, ok, h, tt.want, tt.until)
		}
	}
}
