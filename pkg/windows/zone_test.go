package windows

import (
	"errors"
	"testing"
	"time"
)

type attrs map[string]string

func (a attrs) Attr(name string) (string, bool) { v, ok := a[name]; return v, ok }

func TestZonesResolve(t *testing.T) {
	tests := []struct {
		z     Zones
		attrs Attributes
		want  string
	}{
		{Zones{}, attrs{"site.timezone": "Europe/Berlin"}, "Europe/Berlin"},                                           // the attribute, default name site.timezone
		{Zones{Attribute: "host.tz"}, attrs{"host.tz": "Asia/Tokyo", "site.timezone": "Europe/Berlin"}, "Asia/Tokyo"}, // timezoneAttribute names another attribute
		{Zones{Attribute: "host.tz", PolicyDefault: "UTC"}, attrs{"site.timezone": "Europe/Berlin"}, "UTC"},           // ... and then site.timezone is not read
		{Zones{PolicyDefault: "Asia/Tokyo"}, attrs{}, "Asia/Tokyo"},                                                   // missing attribute: policy default
		{Zones{PolicyDefault: "Asia/Tokyo"}, attrs{"site.timezone": "Mars/Olympus"}, "Asia/Tokyo"},                    // invalid zone falls through
		{Zones{PolicyDefault: "Asia/Tokyo"}, attrs{"site.timezone": "Local"}, "Asia/Tokyo"},                           // Local falls through
		{Zones{PolicyDefault: "Asia/Tokyo"}, attrs{"site.timezone": ""}, "Asia/Tokyo"},                                // empty value falls through
		{Zones{PolicyDefault: "Asia/Tokyo"}, attrs{"site.timezone": "agent"}, "Asia/Tokyo"},                           // "agent" is no zone
		{Zones{PolicyDefault: "Asia/Tokyo"}, nil, "Asia/Tokyo"},                                                       // no attributes at all
		{Zones{ServerDefault: "America/New_York"}, attrs{}, "America/New_York"},                                       // no policy default: server default
		{Zones{PolicyDefault: "Local", ServerDefault: "America/New_York"}, attrs{}, "America/New_York"},               // Local as policy default is refused
		{Zones{PolicyDefault: "Nowhere", ServerDefault: "America/New_York"}, attrs{}, "America/New_York"},             // invalid policy default
		{Zones{}, attrs{}, "UTC"}, // nothing set: UTC
		{Zones{PolicyDefault: "Local", ServerDefault: "Local"}, attrs{"site.timezone": "Local"}, "UTC"}, // Local everywhere: UTC
	}
	for _, tt := range tests {
		if got := tt.z.Resolve(tt.attrs); got == nil || got.String() != tt.want {
			t.Errorf("%+v.Resolve(%v) = %v, want %s", tt.z, tt.attrs, got, tt.want)
		}
	}
}

func TestZoneFor(t *testing.T) {
	berlin := zone("Europe/Berlin")
	tests := []struct {
		tz      string
		agent   *time.Location
		want    string
		wantErr error
	}{
		{"", berlin, "Europe/Berlin", nil},        // default: the agent's zone
		{"agent", berlin, "Europe/Berlin", nil},   // explicit agent
		{"Asia/Tokyo", berlin, "Asia/Tokyo", nil}, // the window's own zone
		{"UTC", berlin, "UTC", nil},               // UTC by name
		{"agent", nil, "UTC", nil},                // unresolved agent zone: UTC
		{"Local", berlin, "", ErrZoneLocal},       // Local is refused
		{"Mars/Olympus", berlin, "", nil},         // unknown zone: an error
	}
	for _, tt := range tests {
		got, err := ZoneFor(Window{Timezone: tt.tz}, tt.agent)
		if tt.want == "" {
			if err == nil || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) {
				t.Errorf("ZoneFor(%q) = %v, %v, want error %v", tt.tz, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got.String() != tt.want {
			t.Errorf("ZoneFor(%q) = %v, %v, want %s", tt.tz, got, err, tt.want)
		}
	}
}
