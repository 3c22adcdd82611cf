package agent

import (
	"testing"
	"time"
)

func TestLinkedCollector(t *testing.T) {
	for _, tt := range []struct {
		value, want string
	}{
		{value: "018F3A10-2233-7444-8555-666677778888", want: "018f3a10-2233-7444-8555-666677778888"},
		{value: " 018f3a10-2233-7444-8555-666677778888 ", want: "018f3a10-2233-7444-8555-666677778888"},
		{value: "", want: ""},
		{value: "not-a-uid", want: ""},
		{value: "00000000-0000-0000-0000-000000000000", want: ""},
	} {
		a := Agent{Attributes: map[string]string{AttrLinkedCollector: tt.value}}
		if got := a.LinkedCollector(); got != tt.want || a.IsUpdater() != (tt.want != "") {
			t.Errorf("LinkedCollector(%q) = %q (updater %v), want %q", tt.value, got, a.IsUpdater(), tt.want)
		}
	}
}

func TestInstallsOwnPackages(t *testing.T) {
	if !(Agent{}).InstallsOwnPackages() {
		t.Error("unknown capabilities: want served as before (own packages)")
	}
	if (Agent{Capabilities: CapabilityReportsHealth}).InstallsOwnPackages() {
		t.Error("an agent without AcceptsPackages installs its own packages")
	}
	if !(Agent{Capabilities: CapabilityReportsHealth | CapabilityAcceptsPackages}).InstallsOwnPackages() {
		t.Error("an agent with AcceptsPackages does not install its own packages")
	}
}

func TestPickUpdater(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC)
	old := Agent{ID: "b", Online: true, ConnectedAt: t0}
	newer := Agent{ID: "c", Online: true, ConnectedAt: t0.Add(time.Minute)}
	offline := Agent{ID: "a", ConnectedAt: t0.Add(time.Hour)}
	tie := Agent{ID: "a", Online: true, ConnectedAt: t0.Add(time.Minute)}
	for _, tt := range []struct {
		name string
		in   []Agent
		want string
	}{
		{name: "online before offline", in: []Agent{offline, old}, want: "b"},
		{name: "the one connected last", in: []Agent{old, newer}, want: "c"},
		{name: "order does not matter", in: []Agent{newer, old}, want: "c"},
		{name: "smallest id on a tie", in: []Agent{newer, tie}, want: "a"},
	} {
		if got, ok := PickUpdater(tt.in); !ok || got.ID != tt.want {
			t.Errorf("%s: picked %q, want %q", tt.name, got.ID, tt.want)
		}
	}
	if _, ok := PickUpdater(nil); ok {
		t.Error("picked an updater among none")
	}
}

func TestWithUpdater(t *testing.T) {
	c := Agent{ID: "c", ServiceVersion: "0.149.0", Package: PackageStatus{Version: "stale"}}
	u := Agent{ID: "u", ServiceVersion: "1.0.0", Update: &UpdateComponent{Status: "downloading"}, Package: PackageStatus{Version: "0.150.0", Status: "installing"}}
	got := c.WithUpdater(u)
	if got.ID != "c" || got.ServiceVersion != "0.149.0" || got.Update != u.Update || got.Package != u.Package {
		t.Fatalf("WithUpdater = %+v", got)
	}
}

func TestLinkUpdaters(t *testing.T) {
	const c1, c2 = "018f3a10-2233-7444-8555-000000000001", "018f3a10-2233-7444-8555-000000000002"
	named := func(id, c string, online bool) Agent {
		return Agent{ID: id, Online: online, Attributes: map[string]string{AttrLinkedCollector: c}}
	}
	got := LinkUpdaters([]Agent{{ID: c1}, named("u-off", c1, false), named("u-on", c1, true), named("u2", c2, true)}, []string{c1, "other"})
	if len(got) != 1 || got[c1].ID != "u-on" {
		t.Fatalf("LinkUpdaters = %v, want c1 served by u-on alone", got)
	}
}
