package stack

import (
	"fmt"
	"regexp"
	"strings"
)

// The demo's timings. The quickstart's demo policies carry the waits of a
// first look at a real fleet (a 30 s health wait, a 5 s bake); the demo
// writes shorter ones into them before it applies them, and runs its
// simulated collectors faster than a real one restarts, so that its four
// rollouts (fourteen waves and stages) take about a minute and a half:
// every wait is still there and still read by the same engine, only
// shorter. These are the demo's settings, not the product's defaults; the
// demo's budget test (demobudget_test.go) holds them to the time make demo
// promises.
const (
	// DemoHealthWait is the health wait of the configuration and version
	// rollouts (demo-config, demo-version): long enough to watch the
	// countdown, short enough that the first rollout, a canary and an
	// approved rest wave, completes in about fifteen seconds.
	DemoHealthWait = "6s"
	// DemoZoneHealthWait is the health wait of the rollouts by region and
	// zone (demo-zones): each stage bakes after it, and its gate reads
	// the zone's metrics during the bake, so the stage's own health wait
	// may be short.
	DemoZoneHealthWait = "1s"
	// DemoBake is the bake after each stage of demo-zones.
	DemoBake = "2s"
	// demoGateInterval is demo-zones' health.interval: a reading every
	// second, the Prometheus scrape interval of the demo (nothing is gained
	// by reading faster than the metrics change) and the shortest interval
	// a policy may have (policy.MinGateInterval). With DemoBake 2s a stage
	// is read at +1s and +2s.
	demoGateInterval = "1s"
	// DemoSpeed divides the simulated collectors' delays: a configuration
	// takes them 0.4 to 1 s, a version update about 2 s.
	DemoSpeed = 4
)

// demoTimings are the settings one run of the demo writes into the demo
// policies.
type demoTimings struct {
	healthWait, zoneHealthWait, bake, gateInterval string
}

// timings are o's, the demo's defaults where o leaves them empty. HealthWait,
// when set, is every demo policy's health wait, as it always was.
func (o DemoOptions) timings() demoTimings {
	t := demoTimings{healthWait: DemoHealthWait, zoneHealthWait: DemoZoneHealthWait, bake: DemoBake, gateInterval: demoGateInterval}
	if o.HealthWait != "" {
		t.healthWait, t.zoneHealthWait = o.HealthWait, o.HealthWait
	}
	if o.Bake != "" {
		t.bake = o.Bake
	}
	return t
}

// demoEdit is one line of a demo policy that the demo rewrites.
type demoEdit struct {
	file string
	line *regexp.Regexp
	with func(demoTimings) string
}

var demoEdits = []demoEdit{
	{"policies/demo-config.yaml", regexp.MustCompile(`(?m)^  healthWait: \S+$`), func(t demoTimings) string { return "  healthWait: " + t.healthWait }},
	{"policies/demo-version.yaml", regexp.MustCompile(`(?m)^  healthWait: \S+$`), func(t demoTimings) string { return "  healthWait: " + t.healthWait }},
	{"policies/demo-zones.yaml", regexp.MustCompile(`(?m)^  healthWait: \S+$`), func(t demoTimings) string { return "  healthWait: " + t.zoneHealthWait }},
	{"policies/demo-zones.yaml", regexp.MustCompile(`(?m)^      bake: \S+$`), func(t demoTimings) string { return "      bake: " + t.bake }},
	{"policies/demo-zones.yaml", regexp.MustCompile(`(?m)^    interval: \S+$`), func(t demoTimings) string { return "    interval: " + t.gateInterval }},
}

// withDemoTimings is the quickstart revision with the demo's timings in its
// demo policies. A line it should rewrite and does not find is an error: a
// changed quickstart must not silently make the demo wait 30 s a wave.
func withDemoTimings(files map[string][]byte, t demoTimings) (map[string][]byte, error) {
	out := make(map[string][]byte, len(files))
	for k, v := range files {
		out[k] = v
	}
	for _, e := range demoEdits {
		body, ok := out[e.file]
		if !ok || !e.line.Match(body) {
			return nil, fmt.Errorf("%s: no line matches %s, which the demo rewrites", e.file, e.line)
		}
		out[e.file] = e.line.ReplaceAllLiteral(body, []byte(e.with(t)))
	}
	return out, nil
}

// demoHealthWait is the healthWait line of the demo policies.
var demoHealthWait = regexp.MustCompile(`healthWait: [0-9]+s`)

// withHealthWait replaces the demo policies' healthWait (the other
// end-to-end tests' shorter waits).
func withHealthWait(files map[string][]byte, hw string) map[string][]byte {
	out := map[string][]byte{}
	for k, v := range files {
		if hw != "" && strings.HasPrefix(k, "policies/demo-") {
			v = demoHealthWait.ReplaceAll(v, []byte("healthWait: "+hw))
		}
		out[k] = v
	}
	return out
}
