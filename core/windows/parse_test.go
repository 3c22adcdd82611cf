package windows

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseTimeOfDay(t *testing.T) {
	tests := []struct {
		in      string
		want    TimeOfDay
		wantErr string
	}{
		{in: "00:00", want: 0, wantErr: ""},          // midnight
		{in: "05:00", want: 300, wantErr: ""},        // early morning
		{in: "22:00", want: 1320, wantErr: ""},       // evening
		{in: "23:59", want: 1439, wantErr: ""},       // last minute of the day
		{in: "24:00", want: 0, wantErr: "hour 24"},   // midnight is 00:00, not 24:00
		{in: "25:00", want: 0, wantErr: "hour 25"},   // no such hour
		{in: "12:60", want: 0, wantErr: "minute 60"}, // no such minute
		{in: "7:5", want: 0, wantErr: "HH:MM"},       // two digits each
		{in: "07:5", want: 0, wantErr: "HH:MM"},      // two digits for the minute too
		{in: "0700", want: 0, wantErr: "HH:MM"},      // colon required
		{in: "07:00:00", want: 0, wantErr: "HH:MM"},  // no seconds
		{in: "", want: 0, wantErr: "HH:MM"},          // empty
		{in: "-1:00", want: 0, wantErr: "HH:MM"},     // no sign
		{in: "+7:00", want: 0, wantErr: "HH:MM"},     // no sign
		{in: "a7:00", want: 0, wantErr: "HH:MM"},     // digits only
		{in: " 7:00", want: 0, wantErr: "HH:MM"},     // no padding with spaces
	}
	for _, tt := range tests {
		got, err := ParseTimeOfDay(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseTimeOfDay(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseTimeOfDay(%q) = %d, %v, want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestTimeOfDayString(t *testing.T) {
	tests := []struct {
		in   TimeOfDay
		want string
	}{
		{in: 0, want: "00:00"},            // midnight
		{in: 65, want: "01:05"},           // zero padded
		{in: 1439, want: "23:59"},         // last minute
		{in: 1440, want: "invalid(1440)"}, // out of range is visible, not wrapped
		{in: -1, want: "invalid(-1)"},     // negative
	}
	for _, tt := range tests {
		if got := tt.in.String(); got != tt.want {
			t.Errorf("TimeOfDay(%d).String() = %q, want %q", int(tt.in), got, tt.want)
		}
	}
}

func TestParseWeekday(t *testing.T) {
	for d := time.Sunday; d <= time.Saturday; d++ {
		name := WeekdayName(d)
		got, err := ParseWeekday(name)
		if err != nil || got != d {
			t.Errorf("ParseWeekday(WeekdayName(%v)=%q) = %v, %v", d, name, got, err)
		}
	}
	if WeekdayName(time.Monday) != "Mon" || WeekdayName(time.Sunday) != "Sun" {
		t.Errorf("WeekdayName uses the wrong spelling: %q %q", WeekdayName(time.Monday), WeekdayName(time.Sunday))
	}
	for _, bad := range []string{"", "mon", "MON", "Monday", "Mo", "1", "Sun "} {
		if _, err := ParseWeekday(bad); err == nil {
			t.Errorf("ParseWeekday(%q) accepted, want an error", bad)
		}
	}
}

func TestWindowJSONRoundTrip(t *testing.T) {
	tests := []struct {
		w    Window
		want string
	}{
		{w: Window{Days: []time.Weekday{time.Monday, time.Friday}, Start: 1320, End: 300}, want: `{"days":["Mon","Fri"],"start":"22:00","end":"05:00"}`},                                      // weeknights
		{w: Window{Start: 0, End: 0, Timezone: "UTC"}, want: `{"start":"00:00","end":"00:00","timezone":"UTC"}`},                                                                              // every day, 24 h, fixed zone
		{w: Window{Days: []time.Weekday{time.Sunday, time.Saturday}, Start: 61, End: 62, Timezone: "agent"}, want: `{"days":["Sun","Sat"],"start":"01:01","end":"01:02","timezone":"agent"}`}, // weekend
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.w)
		if err != nil || string(b) != tt.want {
			t.Errorf("Marshal(%+v) = %s, %v, want %s", tt.w, b, err, tt.want)
			continue
		}
		var back Window
		if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, tt.w) {
			t.Errorf("Unmarshal(%s) = %+v, %v, want %+v", b, back, err, tt.w)
		}
	}
}

func TestWindowJSONErrors(t *testing.T) {
	tests := []struct {
		in      string
		wantErr string
	}{
		{in: `{"days":["Monday"],"start":"22:00","end":"05:00"}`, wantErr: `days[0]: weekday "Monday"`}, // long weekday names are refused
		{in: `{"start":"24:00","end":"05:00"}`, wantErr: "hour 24"},                                     // 24:00 is refused
		{in: `{"start":1320,"end":"05:00"}`, wantErr: "want a string"},                                  // minutes as a number are refused
		{in: `{"days":[1],"start":"22:00","end":"05:00"}`, wantErr: "cannot unmarshal number"},          // weekdays as numbers are refused
	}
	for _, tt := range tests {
		var w Window
		err := json.Unmarshal([]byte(tt.in), &w)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("Unmarshal(%s) error = %v, want one containing %q", tt.in, err, tt.wantErr)
		}
	}
	if _, err := json.Marshal(Window{Start: 1440}); err == nil {
		t.Errorf("Marshal of start 1440 accepted, want an error")
	}
	if _, err := json.Marshal(Window{Days: []time.Weekday{7}}); err == nil {
		t.Errorf("Marshal of weekday 7 accepted, want an error")
	}
}

func TestLoadZone(t *testing.T) {
	tests := []struct {
		name    string
		wantErr error // a sentinel, or nil
		wantAny bool  // any error
	}{
		{name: "Europe/Berlin", wantErr: nil, wantAny: false},          // an IANA zone
		{name: "UTC", wantErr: nil, wantAny: false},                    // UTC by name
		{name: "America/New_York", wantErr: nil, wantAny: false},       // another zone
		{name: "", wantErr: ErrZoneEmpty, wantAny: true},               // no name
		{name: "Local", wantErr: ErrZoneLocal, wantAny: true},          // the host zone is never accepted
		{name: "agent", wantErr: ErrZoneAgent, wantAny: true},          // a placeholder, not a zone
		{name: "Mars/Olympus", wantErr: nil, wantAny: true},            // unknown
		{name: "../etc/passwd", wantErr: nil, wantAny: true},           // no paths
		{name: "/usr/share/zoneinfo/UTC", wantErr: nil, wantAny: true}, // no absolute paths
	}
	for _, tt := range tests {
		for range 2 { // the second call is served from the cache and must agree
			loc, err := LoadZone(tt.name)
			if tt.wantAny {
				if err == nil || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) {
					t.Errorf("LoadZone(%q) = %v, %v, want error %v", tt.name, loc, err, tt.wantErr)
				}
				continue
			}
			if err != nil || loc.String() != tt.name {
				t.Errorf("LoadZone(%q) = %v, %v", tt.name, loc, err)
			}
		}
	}
	if !strings.Contains(ErrZoneLocal.Error(), "does not depend on the server host") {
		t.Errorf("ErrZoneLocal message lost its reason: %q", ErrZoneLocal)
	}
}
