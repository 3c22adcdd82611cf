package releases

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)

func TestValidDistribution(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{name: "otelcol-contrib", want: true},
		{name: "otelcol", want: true},
		{name: "acme_otelcol.v2", want: true},
		{name: strings.Repeat("a", MaxDistributionLength), want: true},
		{name: strings.Repeat("a", MaxDistributionLength+1), want: false}, // one above the limit
		{name: "", want: false},
		{name: "Otelcol", want: false},  // uppercase
		{name: "-otelcol", want: false}, // starts with '-'
		{name: "otelcol-", want: false}, // ends with '-'
		{name: "otel#col", want: false}, // the store's key separator
		{name: "otel/col", want: false}, // the audit id's separator
		{name: "otelcol contrib", want: false},
	}
	for _, tt := range tests {
		if got := ValidDistribution(tt.name); got != tt.want {
			t.Errorf("ValidDistribution(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestVersionOfTag(t *testing.T) {
	tests := []struct {
		tag, version string
		ok           bool
	}{
		{tag: "v0.161.0", version: "0.161.0", ok: true},           // the collector releases' tags
		{tag: "0.161.0", version: "0.161.0", ok: true},            // a tag without v
		{tag: "v0.163.0-rc.1", version: "0.163.0-rc.1", ok: true}, // a prerelease
		{tag: "cmd/builder/v0.161.0", ok: false},                  // a tool of the same repository
		{tag: "vv0.161.0", ok: false},                             // one v only
		{tag: "v0.161", ok: false},                                // not strict
		{tag: "latest", ok: false},
	}
	for _, tt := range tests {
		v, ok := VersionOfTag(tt.tag)
		if ok != tt.ok || (ok && v != tt.version) {
			t.Errorf("VersionOfTag(%q) = %q, %v; want %q, %v", tt.tag, v, ok, tt.version, tt.ok)
		}
	}
}

func rel(v string, src Source) Release {
	return Release{Distribution: "otelcol-contrib", Version: v, Prerelease: IsPrerelease(v), Source: src}
}

func TestSortNewestFirst_BySemverNotText(t *testing.T) {
	rs := []Release{rel("0.99.0", SourceAdmin), rel("0.162.0-rc.1", SourceAdmin), rel("0.100.0", SourceAdmin),
		rel("0.162.0", SourceAdmin), rel("1.0.0", SourceAdmin)}
	SortNewestFirst(rs)
	want := []string{"1.0.0", "0.162.0", "0.162.0-rc.1", "0.100.0", "0.99.0"}
	if got := Versions(rs); !reflect.DeepEqual(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

func TestLatest_SkipsPrereleases(t *testing.T) {
	tests := []struct {
		name     string
		versions []string
		want     string // "" : none
	}{
		{name: "none", versions: nil, want: ""},
		{name: "only prereleases", versions: []string{"0.163.0-rc.1"}, want: ""},
		{name: "a newer prerelease", versions: []string{"0.161.0", "0.163.0-rc.1", "0.162.0"}, want: "0.162.0"},
		{name: "by precedence, not text", versions: []string{"0.99.0", "0.100.0"}, want: "0.100.0"},
	}
	for _, tt := range tests {
		var rs []Release
		for _, v := range tt.versions {
			rs = append(rs, rel(v, SourcePublished))
		}
		got, ok := Latest(rs)
		if ok != (tt.want != "") || got.Version != tt.want {
			t.Errorf("%s: Latest = %q, %v; want %q", tt.name, got.Version, ok, tt.want)
		}
	}
}

func TestMerge_StoredWinsConfiguredFills(t *testing.T) {
	stored := []Release{rel("0.162.0", SourcePublished), rel("0.161.0", SourceAdmin)}
	got := Merge("otelcol-contrib", stored, []string{"v0.161.0", " 0.160.0", "latest", "0.163.0-rc.1", "0.160.0"}, []string{"linux/arm64", "linux/amd64"})
	var summary []string
	for _, r := range got {
		summary = append(summary, r.Version+" "+string(r.Source))
	}
	want := []string{"0.163.0-rc.1 config", "0.162.0 published", "0.161.0 admin", "0.160.0 config"} // "latest" names no release
	if !reflect.DeepEqual(summary, want) {
		t.Errorf("merged %v, want %v", summary, want)
	}
	for _, r := range got {
		if r.Source == SourceConfig && (!reflect.DeepEqual(r.Platforms, []string{"linux/amd64", "linux/arm64"}) || r.Distribution != "otelcol-contrib") {
			t.Errorf("configured %s: %+v, want the configured platforms, sorted", r.Version, r)
		}
		if r.Version == "0.163.0-rc.1" && !r.Prerelease {
			t.Errorf("a configured prerelease is a prerelease: %+v", r)
		}
	}
}

func TestCheck(t *testing.T) {
	ok := Release{Distribution: "otelcol", Version: "0.161.0", Source: SourceAdmin, Platforms: []string{"linux/amd64"}}
	if err := Check(ok); err != nil {
		t.Fatalf("valid release: %v", err)
	}
	tests := []struct {
		name string
		edit func(*Release)
		want string
	}{
		{name: "distribution", edit: func(r *Release) { r.Distribution = "Otel" }, want: "distribution"},
		{name: "version with v", edit: func(r *Release) { r.Version = "v0.161.0" }, want: "semantic version"},
		{name: "prerelease flag against the version", edit: func(r *Release) { r.Prerelease = true }, want: "prerelease"},
		{name: "config is never stored", edit: func(r *Release) { r.Source = SourceConfig }, want: "source"},
		{name: "platform", edit: func(r *Release) { r.Platforms = []string{"linux-amd64"} }, want: "os/arch"},
	}
	for _, tt := range tests {
		r := ok
		tt.edit(&r)
		if err := Check(r); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error about %s", tt.name, err, tt.want)
		}
	}
}

func TestParseTargets(t *testing.T) {
	got, err := ParseTargets(" otelcol-contrib, otelcol-k8s ,acme-otelcol=acme/otelcol-releases,")
	if err != nil {
		t.Fatal(err)
	}
	want := []Target{{"otelcol-contrib", CollectorReleases}, {"otelcol-k8s", CollectorReleases}, {"acme-otelcol", "acme/otelcol-releases"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("targets %+v, want %+v", got, want)
	}
	if ts, err := ParseTargets(""); err != nil || len(ts) != 0 {
		t.Errorf("empty: %v %v, want no refresh", ts, err)
	}
	for _, bad := range []struct{ in, want string }{
		{in: "acme-otelcol", want: "name its repository"},                  // no known publisher
		{in: "otelcol,otelcol", want: "twice"},                             // listed twice
		{in: "Otelcol", want: "not a distribution"},                        // not a name
		{in: "x=acme", want: "owner/name"},                                 // not a repository
		{in: "x=acme/../evil", want: "owner/name"},                         // no path tricks
		{in: "otelcol=open-telemetry/ok,=a/b", want: "not a distribution"}, // empty name
	} {
		if _, err := ParseTargets(bad.in); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("ParseTargets(%q) = %v, want an error naming %q", bad.in, err, bad.want)
		}
	}
}

func TestAssetPlatforms(t *testing.T) {
	assets := []string{
		"opentelemetry-collector-releases_otelcol-contrib_checksums.txt", // belongs to no platform
		"otelcol-contrib_0.161.0_linux_amd64.tar.gz",
		"otelcol-contrib_0.161.0_linux_amd64.tar.gz.sig", // the signature of the same archive
		"otelcol-contrib_0.161.0_linux_arm64.rpm",
		"otelcol-contrib_0.161.0_windows_x64.msi", // the installer's name for amd64
		"otelcol_0.161.0_darwin_arm64.tar.gz",     // another distribution
		"otelcol-contrib_0.161.0_SBOM.json",       // no os_arch
	}
	got, of := assetPlatforms("otelcol-contrib", "0.161.0", assets)
	if want := []string{"linux/amd64", "linux/arm64", "windows/amd64"}; !of || !reflect.DeepEqual(got, want) {
		t.Errorf("platforms %v (of the distribution: %v), want %v", got, of, want)
	}
	if got, of := assetPlatforms("otelcol-k8s", "0.161.0", assets); of || got != nil {
		t.Errorf("otelcol-k8s: %v %v, want no asset of it", got, of)
	}
}
