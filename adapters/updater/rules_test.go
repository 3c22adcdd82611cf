package updater

import (
	"errors"
	"testing"
)

func TestAllowedURL(t *testing.T) {
	prefixes := []string{"https://mirror.example/otelcol/", "http://10.0.0.5:8080/pkgs/"}
	tests := []struct {
		url string
		ok  bool
	}{
		{url: "https://mirror.example/otelcol/0.150.0/otelcol-contrib_0.150.0_linux_amd64.tar.gz", ok: true},
		{url: "http://10.0.0.5:8080/pkgs/a.tar.gz", ok: true},
		{url: "https://mirror.example/other/a.tar.gz"},             // another path
		{url: "https://mirror.example.evil/otelcol/a.tar.gz"},      // another host
		{url: "http://mirror.example/otelcol/a.tar.gz"},            // another scheme
		{url: "https://mirror.example/otelcol/../secret/a.tar.gz"}, // climbs out of the prefix
		{url: "https://mirror.example/otelcol/./a.tar.gz"},         // a dot segment
		{url: "https://user:pw@mirror.example/otelcol/a.tar.gz"},   // user info
		{url: "file:///var/lib/otelcol/a.tar.gz"},                  // not http
		{url: "https://mirror.example/otelcol/%zz"},                // does not parse
		{url: ""},
	}
	for _, tt := range tests {
		err := AllowedURL(tt.url, prefixes)
		if (err == nil) != tt.ok || err != nil && !errors.Is(err, ErrURLNotAllowed) {
			t.Errorf("AllowedURL(%q) = %v, want ok=%v", tt.url, err, tt.ok)
		}
	}
	if err := AllowedURL("https://mirror.example/otelcol/a.tar.gz", []string{""}); err == nil {
		t.Error("an empty prefix allowed everything")
	}
}

func TestCheckVersion(t *testing.T) {
	tests := []struct {
		offered, current, previous string
		err                        error
	}{
		{offered: "0.150.0", current: "0.149.0", previous: "0.148.0"},                    // upgrade
		{offered: "0.150.0-rc.1", current: "0.149.0"},                                    // a pre-release upgrade
		{offered: "0.148.0", current: "0.149.0", previous: "0.148.0"},                    // the one-step return
		{offered: "0.147.0", current: "0.149.0", previous: "0.148.0", err: ErrDowngrade}, // beyond previous
		{offered: "0.148.0", current: "0.149.0", err: ErrDowngrade},                      // no previous
		{offered: "0.149.0-rc.1", current: "0.149.0", err: ErrDowngrade},                 // a pre-release is lower
		{offered: "0.150.0"}, // first install
		{offered: "v0.150.0", current: "0.149.0", err: ErrBadVersion}, // callers strip the v
		{offered: "0.150", current: "0.149.0", err: ErrBadVersion},
		{offered: "../0.150.0", err: ErrBadVersion},
		{offered: "latest", err: ErrBadVersion},
		{offered: "0.150.0", current: "custom", err: ErrBadVersion},
	}
	for _, tt := range tests {
		err := checkVersion(tt.offered, tt.current, tt.previous)
		if !errors.Is(err, tt.err) || (err == nil) != (tt.err == nil) {
			t.Errorf("checkVersion(%q, %q, %q) = %v, want %v", tt.offered, tt.current, tt.previous, err, tt.err)
		}
	}
}
