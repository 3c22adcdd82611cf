package simfleet

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// threeZones puts agents 1 and 4 in eu-west-1a, 2 in eu-west-1b, 3 in us-east-1a.
func threeZones(c *Config) {
	withMetrics(c)
	c.Zones = []string{"eu-west-1/eu-west-1a", "eu-west-1/eu-west-1b", "us-east-1/us-east-1a"}
}

// Only the chosen zone's send_failed counter grows, and it stops growing
// once healed; sent takes the rest of the spans.
func TestFailExporters_OnlyTheZone(t *testing.T) {
	h := start(t, 4, threeZones)
	if err := h.fleet.FailExporters("eu-west-1/eu-west-1a", 0.25); err != nil {
		t.Fatal(err)
	}
	h.clock.move(10 * time.Second)
	failing := scrapeFleet(t, h.fleet)
	if err := h.fleet.HealExporters("eu-west-1/eu-west-1a"); err != nil {
		t.Fatal(err)
	}
	h.clock.move(10 * time.Second)
	healed := scrapeFleet(t, h.fleet)
	for _, tc := range []struct {
		host                string
		whileFailing, after spans
	}{
		{host: "sim-01", whileFailing: spans{1000, 750, 250}, after: spans{2000, 1750, 250}}, // in the zone; failed stays once healed
		{host: "sim-04", whileFailing: spans{1000, 750, 250}, after: spans{2000, 1750, 250}}, // the zone's other agent
		{host: "sim-02", whileFailing: spans{1000, 1000, 0}, after: spans{2000, 2000, 0}},    // same region, other zone
		{host: "sim-03", whileFailing: spans{1000, 1000, 0}, after: spans{2000, 2000, 0}},    // other region
	} {
		if got := failing.spans(tc.host); got != tc.whileFailing {
			t.Errorf("%s while failing: %+v, want %+v", tc.host, got, tc.whileFailing)
		}
		if got := healed.spans(tc.host); got != tc.after {
			t.Errorf("%s after healing: %+v, want %+v", tc.host, got, tc.after)
		}
	}
}

// A region selects all its zones; the snapshot shows the share failing.
func TestFailExporters_Region(t *testing.T) {
	h := start(t, 4, threeZones)
	if err := h.fleet.FailExporters("eu-west-1", 1); err != nil {
		t.Fatal(err)
	}
	for i, s := range h.fleet.Snapshot() {
		if want := map[int]float64{0: 1, 1: 1, 2: 0, 3: 1}[i]; s.ExportsFailing != want {
			t.Errorf("agent %d exports failing %v, want %v", s.Number, s.ExportsFailing, want)
		}
	}
}

// A watcher hears of the change from each agent it touched, and only those.
func TestFailExporters_Watched(t *testing.T) {
	h := start(t, 4, threeZones)
	h.waitFleet(t, "all connected", func(s []AgentState) bool {
		return !slices.ContainsFunc(s, func(a AgentState) bool { return !a.Connected })
	})
	var mu sync.Mutex
	var told []string
	stop := h.fleet.Watch(func(s AgentState) {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, fmt.Sprintf("%s %v", s.HostName, s.ExportsFailing))
	})
	defer stop()
	if err := h.fleet.FailExporters("eu-west-1", 0.5); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"sim-01 0.5", "sim-02 0.5", "sim-04 0.5"}; !slices.Equal(told, want) {
		t.Errorf("watched %q, want %q", told, want)
	}
}

func TestFailExporters_Refuses(t *testing.T) {
	h := start(t, 2, threeZones)
	for _, tc := range []struct {
		where    string
		fraction float64
		want     string
	}{
		{where: "eu-west-1", fraction: 0, want: "outside (0, 1]"},      // nothing fails: HealExporters is the way back
		{where: "eu-west-1", fraction: 1.5, want: "outside (0, 1]"},    // a share
		{where: "eu-west-1/eu-west-1c", fraction: 1, want: "no agent"}, // a typo fails nothing silently
	} {
		if err := h.fleet.FailExporters(tc.where, tc.fraction); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("FailExporters(%q, %v): %v, want an error containing %q", tc.where, tc.fraction, err, tc.want)
		}
	}
	if err := h.fleet.HealExporters("mars"); err == nil {
		t.Error("HealExporters of no agent succeeded")
	}
}

// With ExportFailure, a configuration carrying the marker breaks exports
// only in its zone, only once the collector runs it, and a configuration
// without the marker mends them.
func TestExportFailure_MarkedConfig(t *testing.T) {
	const marker = "# exporter-fail"
	h := start(t, 2, func(c *Config) {
		threeZones(c)
		c.ExportFailure = ExportFailure{Marker: marker, Where: "eu-west-1/eu-west-1a"}
	})
	marked, markedHash := configMsg("exporters: {otlp: {}}\n" + marker + "\n")
	h.srv.send(t, h.uid(1), marked)
	h.srv.send(t, h.uid(2), marked)
	h.waitFleet(t, "APPLYING", func(s []AgentState) bool { return s[0].ConfigStatus == "APPLYING" && s[1].ConfigStatus == "APPLYING" })
	if s := h.fleet.Snapshot(); s[0].ExportsFailing != 0 {
		t.Errorf("exports fail while the old configuration still runs: %+v", s[0])
	}
	for range 3 { // APPLIED and restart, StatusStarting, StatusOK
		h.step(t, 1, 2)
	}
	h.waitFleet(t, "both run the marked configuration", func(s []AgentState) bool {
		return s[0].ConfigHash == markedHash && s[0].Status == StatusOK && s[1].ConfigHash == markedHash && s[1].Status == StatusOK
	})
	h.clock.move(10 * time.Second)
	got := scrapeFleet(t, h.fleet)
	// The restart started the counters anew: 10 s at 100 spans/s since StatusOK.
	if s := got.spans("sim-01"); s != (spans{1000, 0, 1000}) {
		t.Errorf("sim-01 (eu-west-1a) on the marked configuration: %+v, want every span failed", s)
	}
	if s := got.spans("sim-02"); s != (spans{1000, 1000, 0}) {
		t.Errorf("sim-02 (eu-west-1b) on the marked configuration: %+v, want every span sent", s)
	}
	if s := h.fleet.Snapshot(); s[0].ExportsFailing != 1 || !s[0].Healthy {
		t.Errorf("sim-01 should fail all exports and stay healthy over OpAMP: %+v", s[0])
	}

	fixed, fixedHash := configMsg("exporters: {otlp: {}}\n")
	h.srv.send(t, h.uid(1), fixed)
	for range 3 {
		h.step(t, 1)
	}
	h.waitFleet(t, "the fixed configuration runs", func(s []AgentState) bool {
		return s[0].ConfigHash == fixedHash && s[0].Status == StatusOK
	})
	h.clock.move(10 * time.Second)
	if s := scrapeFleet(t, h.fleet).spans("sim-01"); s != (spans{1000, 1000, 0}) {
		t.Errorf("sim-01 on the configuration without the marker: %+v, want every span sent", s)
	}
}
