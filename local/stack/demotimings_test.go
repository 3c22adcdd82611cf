package stack

import (
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/revision"
)

// The demo's timings land in the demo policies as the engine reads them:
// each policy's health wait, every bake of demo-zones and its gate's
// interval; HealthWait and Bake, when set, replace the demo's own.
func TestWithDemoTimings_EveryDemoPolicy(t *testing.T) {
	for _, c := range []struct {
		name                         string
		o                            DemoOptions
		config, version, zones, bake time.Duration
	}{
		{name: "the demo's own", o: DemoOptions{}, config: 6 * time.Second, version: 6 * time.Second, zones: time.Second, bake: 2 * time.Second},
		{name: "a test's", o: DemoOptions{HealthWait: "2s", Bake: "1s"}, config: 2 * time.Second, version: 2 * time.Second, zones: 2 * time.Second, bake: time.Second},
	} {
		files, err := revision.ReadDir("../../examples/quickstart")
		if err != nil {
			t.Fatal(err)
		}
		if files, err = withDemoTimings(files, c.o.timings()); err != nil {
			t.Fatal(err)
		}
		rev, issues := revision.Load(files, "timings")
		if issues.HasErrors() {
			t.Fatalf("%s: %v", c.name, issues)
		}
		for name, want := range map[string]time.Duration{"demo-config": c.config, "demo-version": c.version, "demo-zones": c.zones} {
			if p, _ := rev.Policy(name); p.Spec.HealthWait != want {
				t.Errorf("%s: %s's healthWait is %s, want %s", c.name, name, p.Spec.HealthWait, want)
			}
		}
		zones, _ := rev.Policy("demo-zones")
		for _, w := range zones.Spec.Waves[1:] { // the canary has no bake
			if w.Bake != c.bake {
				t.Errorf("%s: wave %s bakes %s, want %s", c.name, w.Name, w.Bake, c.bake)
			}
		}
		if zones.Spec.Health == nil || zones.Spec.Health.Interval != time.Second {
			t.Errorf("%s: demo-zones' gate %+v, want a reading every second", c.name, zones.Spec.Health)
		}
	}
}

// A demo policy whose line the demo rewrites is gone: an error, not a demo
// that silently waits the quickstart's 30 s a wave.
func TestWithDemoTimings_MissingLineIsAnError(t *testing.T) {
	files, err := revision.ReadDir("../../examples/quickstart")
	if err != nil {
		t.Fatal(err)
	}
	files["policies/demo-version.yaml"] = []byte(strings.Replace(string(files["policies/demo-version.yaml"]), "  healthWait: 30s\n", "", 1))
	if _, err := withDemoTimings(files, DemoOptions{}.timings()); err == nil || !strings.Contains(err.Error(), "policies/demo-version.yaml") {
		t.Errorf("error %v, want one that names policies/demo-version.yaml", err)
	}
}
