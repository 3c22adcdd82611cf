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
		{z: Zones{}, attrs: attrs{"site.timezone": "Europe/Berlin"}, want: "Europe/Berlin"},                                           // the attribute, default name site.timezone
		{z: Zones{Attribute: "host.tz"}, attrs: attrs{"host.tz": "Asia/Tokyo", "site.timezone": "Europe/Berlin"}, want: "Asia/Tokyo"}, // timezoneAttribute names another attribute
		{z: Zones{Attribute: "host.tz", PolicyDefault: "UTC"}, attrs: attrs{"site.timezone": "Europe/Berlin"}, want: "UTC"},           // ... and then site.timezone is not read
		{z: Zones{PolicyDefault: "Asia/Tokyo"}, attrs: attrs{}, want: "Asia/Tokyo"},                                                   // missing attribute: policy default
		{z: Zones{PolicyDefault: "Asia/Tokyo"}, attrs: attrs{"site.timezone": "Mars/Olympus"}, want: "Asia/Tokyo"},                    // invalid zone falls through
		{z: Zones{PolicyDefault: "Asia/Tokyo"}, attrs: attrs{"site.timezone": "Local"}, want: "Asia/Tokyo"},                           // Local falls through
		{z: Zones{PolicyDefault: "Asia/Tokyo"}, attrs: attrs{"site.timezone": ""}, want: "Asia/Tokyo"},                                // empty value falls through
		{z: Zones{PolicyDefault: "Asia/Tokyo"}, attrs: attrs{"site.timezone": "agent"}, want: "Asia/Tokyo"},                           // "agent" is no zone
		{z: Zones{PolicyDefault: "Asia/Tokyo"}, attrs: nil, want: "Asia/Tokyo"},                                                       // no attributes at all
		{z: Zones{ServerDefault: "America/New_York"}, attrs: attrs{}, want: "America/New_York"},                                       // no policy default: server default
		{z: Zones{PolicyDefault: "Local", ServerDefault: "America/New_York"}, attrs: attrs{}, want: "America/New_York"},               // Local as policy default is refused
		{z: Zones{PolicyDefault: "Nowhere", ServerDefault: "America/New_York"}, attrs: attrs{}, want: "America/New_York"},             // invalid policy default
		{z: Zones{}, attrs: attrs{}, want: "UTC"},                                                                                     // nothing set: UTC
		{z: Zones{PolicyDefault: "Local", ServerDefault: "Local"}, attrs: attrs{"site.timezone": "Local"}, want: "UTC"},               // Local everywhere: UTC
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
		{tz: "", agent: berlin, want: "Europe/Berlin", wantErr: nil},        // default: the agent's zone
		{tz: "agent", agent: berlin, want: "Europe/Berlin", wantErr: nil},   // explicit agent
		{tz: "Asia/Tokyo", agent: berlin, want: "Asia/Tokyo", wantErr: nil}, // the window's own zone
		{tz: "UTC", agent: berlin, want: "UTC", wantErr: nil},               // UTC by name
		{tz: "agent", agent: nil, want: "UTC", wantErr: nil},                // unresolved agent zone: UTC
		{tz: "Local", agent: berlin, want: "", wantErr: ErrZoneLocal},       // Local is refused
		{tz: "Mars/Olympus", agent: berlin, want: "", wantErr: nil},         // unknown zone: an error
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
