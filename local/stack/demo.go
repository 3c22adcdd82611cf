package stack

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/myriarch/myriarch/adapters/api"
	"github.com/myriarch/myriarch/core/revision"
	"github.com/myriarch/myriarch/local/simfleet"
)

// DemoOptions shape the demo scenario.
type DemoOptions struct {
	Revision string // the quickstart revision directory
	Agents   int    // simulated collectors (50)
	// Speed divides the simulated agents' delays (0: DemoSpeed).
	Speed float64
	// HealthWait is every demo policy's healthWait ("": DemoHealthWait,
	// and DemoZoneHealthWait in the rollouts by zone).
	HealthWait string
	Bake       string // the zones policy's bake after each stage ("": DemoBake)
	NewVersion string // the collector version of the version rollout
	// MetricsAddr is where the simulated fleet serves its pipeline metrics,
	// the address Prometheus scrapes (the stack's PrometheusURL): the gate
	// of the zones policy reads them.
	MetricsAddr string
	// MetricsListener, if set, is the fleet's metrics listener, opened on
	// MetricsAddr by the caller (simfleet.Config.MetricsListener).
	MetricsListener net.Listener
	Timeout         time.Duration
	Out             io.Writer
	// Since is the moment the printed times count from (zero: the demo's
	// start): make demo passes its own start, so that the times include
	// the build, DynamoDB Local's start and the stack's, as the user waits
	// for them.
	Since time.Time
}

// Summary is what the demo reports at its end.
type Summary struct {
	RolloutsCompleted int
	TargetsSucceeded  int
	// RolloutsRolledBack counts the rollouts a red gate stopped and
	// rolled back (the fourth: one zone's exports fail).
	RolloutsRolledBack int
	// FirstCompleted is when the first rollout completed and Wall when the
	// demo ended, both since DemoOptions.Since.
	FirstCompleted, Wall time.Duration
}

// Demo runs the scenario of `make demo` against a running stack: a fleet of
// simulated collectors connects; a revision assigns them to fleet edge and
// bootstraps their configuration; a second revision changes the rendered
// configuration, which rolls out canary first, waits for approval, is
// approved as an operator would, and completes; then an operator selects a
// new collector version, which rolls out through the updater executor;
// then a configuration change rolls out by region and zone, stage by stage
// with a bake and a health gate on the collectors' export failures between
// them; last, a configuration that breaks the exports of one zone turns
// that zone's gate red, and the stage is rolled back.
func (s Endpoints) Demo(ctx context.Context, o DemoOptions) (Summary, error) {
	start := o.Since
	if start.IsZero() {
		start = s.clock()
	}
	if o.Speed == 0 {
		o.Speed = DemoSpeed
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	say := func(format string, args ...any) {
		fmt.Fprintf(o.Out, "[%5.1fs] %s\n", s.clock().Sub(start).Seconds(), fmt.Sprintf(format, args...))
	}
	c := client{base: s.APIURL, token: s.AdminToken}
	var sum Summary

	cfg := simfleet.DefaultConfig()
	cfg.N, cfg.Endpoint, cfg.Token, cfg.Speed = o.Agents, s.GatewayURL, s.AgentToken, o.Speed
	cfg.Zones = DemoZones
	cfg.MetricsAddr, cfg.MetricsListener = o.MetricsAddr, o.MetricsListener
	cfg.ExportFailure = simfleet.ExportFailure{Marker: demoExportFailMarker, Where: demoFailZone, Fraction: 0.5}
	fleet, err := simfleet.Start(ctx, cfg)
	if err != nil {
		return sum, fmt.Errorf("start the simulated fleet: %w", err)
	}
	defer func() { _ = fleet.Stop() }()
	say("%d simulated collectors (otelcol-contrib %s) connect to the gateway at %s", o.Agents, cfg.StartVersion, s.GatewayURL)
	if err := s.waitAgents(ctx, o.Agents); err != nil {
		return sum, err
	}
	say("all %d agents are recorded", o.Agents)

	files, err := revision.ReadDir(o.Revision)
	if err != nil {
		return sum, err
	}
	tm := o.timings()
	if files, err = withDemoTimings(files, tm); err != nil {
		return sum, err
	}
	say("the demo's waits: health wait %s a wave (configurations, versions), %s with a %s bake and a gate reading every %s a stage by zone; collectors at %gx speed",
		tm.healthWait, tm.zoneHealthWait, tm.bake, tm.gateInterval, o.Speed)
	if err := s.apply(ctx, c, files, "demo-1"); err != nil {
		return sum, err
	}
	hash1 := revision.Hash(files["configs/edge.yaml"])
	say("revision demo-1 applied: agents assigned to fleet edge, configuration %s bootstrapped (no rollout)", short(hash1))
	if err := fleet.Wait(ctx, allOn(func(a simfleet.AgentState) bool { return a.ConfigHash == hash1 && a.Healthy })); err != nil {
		return sum, fmt.Errorf("agents never ran the bootstrapped configuration: %w", err)
	}
	say("every agent runs configuration %s", short(hash1))

	files["configs/edge.yaml"] = append(append([]byte(nil), files["configs/edge.yaml"]...), []byte("# demo-2: a changed batch timeout\n")...)
	id, err := s.applyForRollout(ctx, c, files, "demo-2")
	if err != nil {
		return sum, err
	}
	say("revision demo-2 changes the configuration: rollout %s starts with the canary wave", id)
	r, err := s.watch(ctx, c, id, say, "waiting_approval")
	if err != nil {
		return sum, err
	}
	say("the canary is healthy; wave %q waits for approval — the operator approves it (the admin applied the revision, and nobody approves their own rollout)", r.Waves[len(r.Waves)-1].Name)
	op := client{base: s.APIURL, token: s.OperatorToken}
	if err := op.do(ctx, "POST", "/api/v1/rollouts/"+id+"/actions/approve", map[string]int{"wave": len(r.Waves) - 1}, nil); err != nil {
		return sum, err
	}
	if r, err = s.watch(ctx, c, id, say, "completed"); err != nil {
		return sum, err
	}
	sum.RolloutsCompleted++
	sum.TargetsSucceeded += r.TargetCounts["succeeded"]
	sum.FirstCompleted = s.clock().Sub(start)

	selected, err := selectFleetVersion(ctx, c, "edge", o.NewVersion, "make demo: upgrade the collectors")
	if err != nil {
		return sum, err
	}
	say("an operator selected collector version %s: rollout %s through the updater executor", o.NewVersion, selected)
	if r, err = s.watch(ctx, c, selected, say, "completed"); err != nil {
		return sum, err
	}
	sum.RolloutsCompleted++
	sum.TargetsSucceeded += r.TargetCounts["succeeded"]
	if err := fleet.Wait(ctx, allOn(func(a simfleet.AgentState) bool { return a.Version == o.NewVersion })); err != nil {
		return sum, fmt.Errorf("agents do not all report %s: %w", o.NewVersion, err)
	}

	files["fleets/edge.yaml"] = []byte(strings.Replace(string(files["fleets/edge.yaml"]), "configPolicy: demo-config", "configPolicy: demo-zones", 1))
	files["configs/edge.yaml"] = append(append([]byte(nil), files["configs/edge.yaml"]...), []byte("# demo-3: a changed exporter queue\n")...)
	if id, err = s.applyForRollout(ctx, c, files, "demo-3"); err != nil {
		return sum, err
	}
	say("revision demo-3 rolls the configuration out by region and zone (policy demo-zones): rollout %s", id)
	if r, err = s.watch(ctx, c, id, say, "completed"); err != nil {
		return sum, err
	}
	sum.RolloutsCompleted++
	sum.TargetsSucceeded += r.TargetCounts["succeeded"]
	say("every stage's gate stayed green: %s", gateSummary(r))

	files["configs/edge.yaml"] = append(append([]byte(nil), files["configs/edge.yaml"]...), []byte(demoExportFailMarker+"\n")...)
	if id, err = s.applyForRollout(ctx, c, files, "demo-4"); err != nil {
		return sum, err
	}
	say("revision demo-4 changes the exporter so that half the spans of %s fail to send: rollout %s", demoFailZone, id)
	if r, err = s.watch(ctx, c, id, say, "rolled_back"); err != nil {
		return sum, err
	}
	sum.RolloutsRolledBack++
	say("the gate of the stage that reached %s turned red and rollback-wave returned that stage; the stages before it keep the change", demoFailZone)
	// The command prints the summary, once.
	sum.Wall = s.clock().Sub(start)
	return sum, nil
}

// The fourth rollout's configuration breaks the exports of demoFailZone,
// the last stage of demo-zones: the only zone without a canary among the
// simulated collectors (agents 1 to 3, in the first three zones), so that
// the canary's gate, which reads the zones of its three collectors, never
// sees the failure.
const (
	demoExportFailMarker = "# demo-4: a broken exporter endpoint"
	demoFailZone         = "us-east-1/us-east-1b"
)

// gateSummary is "canary 1 reading, eu-west-1/eu-west-1a 3 readings, …".
func gateSummary(r rolloutView) string {
	var parts []string
	for _, st := range r.Stages {
		if st.Gate != nil {
			parts = append(parts, fmt.Sprintf("%s %d readings", st.Name, st.Gate.Readings))
		}
	}
	return strings.Join(parts, ", ")
}

// DemoZones are the regions and zones of the simulated collectors, as their
// cloud.region and cloud.availability_zone attributes.
var DemoZones = []string{"eu-west-1/eu-west-1a", "eu-west-1/eu-west-1b", "us-east-1/us-east-1a", "us-east-1/us-east-1b"}

func allOn(ok func(simfleet.AgentState) bool) func([]simfleet.AgentState) bool {
	return func(states []simfleet.AgentState) bool {
		for _, a := range states {
			if !ok(a) {
				return false
			}
		}
		return len(states) > 0
	}
}

// waitAgents waits until the inventory lists n agents that reported, as a
// client sees it.
func (s Endpoints) waitAgents(ctx context.Context, n int) error {
	c := client{base: s.APIURL, token: s.AdminToken}
	for {
		got, err := countAgents(ctx, c)
		if err == nil && got >= n {
			return nil
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return fmt.Errorf("only %d of %d agents connected: %w", got, n, err)
		}
	}
}

// countAgents pages through the inventory and counts the agents that
// reported: an agent enrolling is listed from the moment its credential is
// bound, before the report of its connection with it.
func countAgents(ctx context.Context, c client) (int, error) {
	n, token := 0, ""
	for {
		var page struct {
			Items []struct {
				ConnectedAt *time.Time `json:"connectedAt"`
			} `json:"items"`
			NextPageToken string `json:"nextPageToken"`
		}
		path := fmt.Sprintf("/api/v1/agents?limit=%d", api.MaxLimit)
		if token != "" {
			path += "&pageToken=" + url.QueryEscape(token)
		}
		if err := c.do(ctx, "GET", path, nil, &page); err != nil {
			return n, err
		}
		for _, a := range page.Items {
			if a.ConnectedAt != nil {
				n++
			}
		}
		if token = page.NextPageToken; token == "" {
			return n, nil
		}
	}
}

type applied struct {
	Fleets []struct {
		Fleet string `json:"fleet"`
		Plans []struct {
			Kind      string `json:"kind"`
			Planned   bool   `json:"planned"`
			RolloutID string `json:"rolloutId"`
			Created   bool   `json:"created"`
		} `json:"plans"`
	} `json:"fleets"`
}

func (s Endpoints) apply(ctx context.Context, c client, files map[string][]byte, commit string) error {
	_, err := s.applyResult(ctx, c, files, commit)
	return err
}

func (s Endpoints) applyResult(ctx context.Context, c client, files map[string][]byte, commit string) (applied, error) {
	body := map[string]any{"commit": commit, "files": textFiles(files)}
	var out applied
	err := c.do(ctx, "POST", "/api/v1/revisions", body, &out)
	return out, err
}

// applyForRollout applies a revision and returns the configuration rollout
// it created for fleet edge (plannedRollout).
func (s Endpoints) applyForRollout(ctx context.Context, c client, files map[string][]byte, commit string) (string, error) {
	before, err := latestRollout(ctx, c, "edge", "config")
	if err != nil {
		return "", err
	}
	out, err := s.applyResult(ctx, c, files, commit)
	if err != nil {
		return "", err
	}
	for _, f := range out.Fleets {
		for _, p := range f.Plans {
			if f.Fleet == "edge" && p.Kind == "config" {
				id, err := plannedRollout(ctx, c, "edge", "config", before, p.Planned, p.RolloutID)
				if err != nil {
					return "", fmt.Errorf("revision %s: %w", commit, err)
				}
				return id, nil
			}
		}
	}
	return "", fmt.Errorf("revision %s planned nothing for fleet edge", commit)
}

func textFiles(files map[string][]byte) map[string]string {
	out := make(map[string]string, len(files))
	for k, v := range files {
		out[k] = string(v)
	}
	return out
}

// watch prints the rollout's progress whenever it changes, until it
// reaches want; a final status other than want is an error.
func (s Endpoints) watch(ctx context.Context, c client, id string, say func(string, ...any), want string) (rolloutView, error) {
	last := ""
	var lastWait time.Time
	for {
		var r rolloutView
		if err := c.do(ctx, "GET", "/api/v1/rollouts/"+id, nil, &r); err != nil {
			return r, err
		}
		if l := r.line(); l != last {
			say("%s", l)
			last = l
		}
		if r.inHealthWait() > 0 {
			lastWait = s.sayHealthWait(ctx, c, r, say, lastWait)
		}
		switch r.Status {
		case want:
			return r, nil
		case "completed", "aborted", "rolled_back", "superseded", "failed", "paused":
			if want != r.Status {
				return r, fmt.Errorf("rollout %s is %s (%s), expected %s", id, r.Status, r.StatusReason, want)
			}
		}
		if err := sleep(ctx, 500*time.Millisecond); err != nil {
			return r, fmt.Errorf("rollout %s did not reach %s: %w", id, want, err)
		}
	}
}

// countdownEvery is how often the demo repeats the health-wait countdown.
const countdownEvery = 5 * time.Second

// sayHealthWait prints the countdown of the rollout's health waits, at most
// every countdownEvery; it returns when it last printed.
func (s Endpoints) sayHealthWait(ctx context.Context, c client, r rolloutView, say func(string, ...any), printed time.Time) time.Time {
	now := s.clock()
	if now.Sub(printed) < countdownEvery {
		return printed
	}
	var page struct {
		Items []struct {
			VerifiedAt *time.Time `json:"verifiedAt"`
		} `json:"items"`
	}
	if err := c.do(ctx, "GET", "/api/v1/rollouts/"+r.ID+"/targets?status=verifying&limit=500", nil, &page); err != nil {
		return printed // the next refresh tries again
	}
	var at []time.Time
	for _, t := range page.Items {
		if t.VerifiedAt != nil {
			at = append(at, *t.VerifiedAt)
		}
	}
	if l := healthWaitLine(at, r.Policy.EffectiveHealthWait(), now); l != "" {
		say("%s", l)
	}
	return now
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// Apply applies a revision as the admin and waits for nothing more.
func (s Endpoints) Apply(ctx context.Context, files map[string][]byte, commit string) error {
	return s.apply(ctx, client{base: s.APIURL, token: s.AdminToken}, files, commit)
}

// SelectVersion selects a collector version for a fleet as the admin and
// returns the rollout it created.
func (s Endpoints) SelectVersion(ctx context.Context, fleet, version string) (string, error) {
	return selectFleetVersion(ctx, client{base: s.APIURL, token: s.AdminToken}, fleet, version, "test")
}

// selectFleetVersion selects a collector version for a fleet and returns
// the rollout it created (plannedRollout).
func selectFleetVersion(ctx context.Context, c client, fleet, version, reason string) (string, error) {
	before, err := latestRollout(ctx, c, fleet, "version")
	if err != nil {
		return "", err
	}
	var sel struct {
		Planned   bool   `json:"planned"`
		RolloutID string `json:"rolloutId"`
	}
	if err := c.do(ctx, "POST", "/api/v1/fleets/"+fleet+"/actions/select-version", map[string]string{"version": version, "reason": reason}, &sel); err != nil {
		return "", err
	}
	id, err := plannedRollout(ctx, c, fleet, "version", before, sel.Planned, sel.RolloutID)
	if err != nil {
		return "", fmt.Errorf("selecting %s: %w", version, err)
	}
	return id, nil
}

// WaitRollout waits until the rollout is in status want (an error if it
// ends otherwise) and returns its targets' counts by status.
func (s Endpoints) WaitRollout(ctx context.Context, id, want string) (map[string]int, error) {
	r, err := s.watch(ctx, client{base: s.APIURL, token: s.AdminToken}, id, func(string, ...any) {}, want)
	return r.TargetCounts, err
}

// Post sends an action with a token of the caller's choosing.
func (s Endpoints) Post(ctx context.Context, token, path string, body any) error {
	return client{base: s.APIURL, token: token}.do(ctx, "POST", path, body, nil)
}
