package freeze

import (
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/windows"
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
		{name: "in the region, inside", fs: []policy.Freeze{holidays}, regions: []string{"us-east-1"}, now: "2026-12-24T00:00:00Z", want: "holidays", until: "2027-01-04T00:00:00Z"},
		{name: "another region", fs: []policy.Freeze{holidays}, regions: []string{"eu-west-1"}, now: "2026-12-24T00:00:00Z", want: "", until: ""},
		{name: "a stage of two regions, one frozen", fs: []policy.Freeze{holidays}, regions: []string{"eu-west-1", "us-east-1"}, now: "2026-12-24T00:00:00Z", want: "holidays", until: "2027-01-04T00:00:00Z"},
		{name: "from is inclusive", fs: []policy.Freeze{holidays}, regions: []string{"us-east-1"}, now: "2026-12-20T00:00:00Z", want: "holidays", until: "2027-01-04T00:00:00Z"},
		{name: "until is exclusive", fs: []policy.Freeze{holidays}, regions: []string{"us-east-1"}, now: "2027-01-04T00:00:00Z", want: "", until: ""},
		{name: "daily window, UTC by default", fs: []policy.Freeze{backup}, regions: []string{"eu-west-1"}, now: "2026-12-02T01:30:00Z", want: "backup", until: "2026-12-02T02:00:00Z"},
		{name: "daily window, outside", fs: []policy.Freeze{backup}, regions: []string{"eu-west-1"}, now: "2026-12-02T02:00:00Z", want: "", until: ""},
		{name: "no regions covers a stage without regions", fs: []policy.Freeze{everywhere}, regions: nil, now: "2026-12-24T11:00:00Z", want: "all", until: "2026-12-24T12:00:00Z"},
		{name: "the one that ends last wins", fs: []policy.Freeze{everywhere, holidays}, regions: []string{"us-east-1"}, now: "2026-12-24T11:00:00Z", want: "holidays", until: "2027-01-04T00:00:00Z"},
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
