package stack

import (
	"context"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/revision"
	"github.com/myriarch/myriarch/local/simfleet"
	"github.com/myriarch/myriarch/local/storetest"
)

// labFleet is a second fleet of the quickstart revision: agents labelled
// fleet=lab, with a one-wave policy so that a moved agent's rollout is quick.
var labFleet = map[string]string{
	"fleets/lab.yaml": `apiVersion: myriarch.dev/v1alpha1
kind: Fleet
metadata: {name: lab}
spec:
  selector: {matchAttributes: {labels.fleet: lab}}
  collector: {distribution: otelcol-contrib, version: 0.161.0}
  update: {executor: updater}
  rollout: {configPolicy: quick, versionPolicy: quick}
`,
	"policies/quick.yaml": `apiVersion: myriarch.dev/v1alpha1
kind: RolloutPolicy
metadata: {name: quick}
spec:
  waves: [{name: all, percent: 100}]
  maxConcurrent: 0
  healthWait: 2s
  applyTimeout: 2m
`,
	"configs/lab.yaml": "receivers: {otlp: {protocols: {grpc: {}}}}\nexporters: {debug: {}}\nservice: {pipelines: {traces: {receivers: [otlp], exporters: [debug]}}}\n",
}

// TestAssignmentFollowsTheAgent: with no Git commit after the agents
// connect, agents are assigned to their fleet as they first report and get
// its configuration; an agent whose attributes change moves to another
// fleet and reaches that fleet's configuration through a rollout there; an
// agent that joins while a version rollout runs becomes a straggler of its
// last wave and is updated with the others.
func TestAssignmentFollowsTheAgent(t *testing.T) {
	storetest.Client(t) // fails, not skips, without DynamoDB Local
	t.Parallel()        // its own stack and fleet; it mostly waits on rollouts
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, err := Start(ctx, Options{APIAddr: "127.0.0.1:0", GatewayAddr: "127.0.0.1:0", SFNAddr: "127.0.0.1:0",
		TablePrefix: "assign-test-", StateMachineFile: "../../statemachines/rollout.asl.json", Clock: time.Now, PlannerEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	c := client{base: s.APIURL, token: s.AdminToken}
	files, err := revision.ReadDir("../../examples/quickstart")
	if err != nil {
		t.Fatal(err)
	}
	files = withHealthWait(files, "3s")
	for k, v := range labFleet {
		files[k] = []byte(v)
	}
	for k, v := range twinFleet {
		files[k] = []byte(v)
	}
	if err := s.apply(ctx, c, files, "assign-1"); err != nil { // before any agent connected
		t.Fatal(err)
	}
	edgeHash, labHash := revision.Hash(files["configs/edge.yaml"]), revision.Hash(files["configs/lab.yaml"])

	cfg := simfleet.DefaultConfig()
	cfg.N, cfg.Endpoint, cfg.Token, cfg.Speed = 5, s.GatewayURL, s.AgentToken, 10
	fleet, err := simfleet.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = fleet.Stop() }()
	if err := fleet.Wait(ctx, allOn(func(a simfleet.AgentState) bool { return a.ConfigHash == edgeHash })); err != nil {
		t.Fatalf("agents that connected after the apply never got fleet edge's configuration: %v", err)
	}
	members := fleetMembers(ctx, t, s, "edge")
	if len(members) != 5 {
		t.Fatalf("fleet edge has %d members, want the 5 agents", len(members))
	}

	// Agent 5 is relabelled: it moves to fleet lab, whose rollout brings it lab's configuration.
	if err := fleet.SetAttributes(5, map[string]string{"labels.fleet": "lab"}); err != nil {
		t.Fatal(err)
	}
	if err := fleet.Wait(ctx, func(st []simfleet.AgentState) bool { return st[4].ConfigHash == labHash }); err != nil {
		t.Fatalf("the relabelled agent never reached fleet lab's configuration: %v", err)
	}
	if got := fleetMembers(ctx, t, s, "lab"); len(got) != 1 {
		t.Fatalf("fleet lab has members %v, want the relabelled agent", got)
	}
	// The inventory and the fleet statistics see the same.
	var lab struct {
		Items []struct{ ID, DisplayName, Fleet string }
	}
	if err := c.do(ctx, "GET", "/api/v1/agents?fleet=lab&online=true", nil, &lab); err != nil || len(lab.Items) != 1 || lab.Items[0].DisplayName != simfleet.HostName(5) {
		t.Fatalf("online agents of fleet lab: %+v (%v), want %s", lab.Items, err, simfleet.HostName(5))
	}
	var byName struct{ ID, Fleet string }
	if err := c.do(ctx, "GET", "/api/v1/agents/"+simfleet.HostName(5), nil, &byName); err != nil || byName.Fleet != "lab" || byName.ID != lab.Items[0].ID {
		t.Fatalf("agent %s by name: %+v (%v), want it in fleet lab", simfleet.HostName(5), byName, err)
	}
	var edge struct {
		Agents struct{ Total, Online, OnConfigHash int }
	}
	if err := c.do(ctx, "GET", "/api/v1/fleets/edge", nil, &edge); err != nil || edge.Agents.Total != 4 || edge.Agents.Online != 4 || edge.Agents.OnConfigHash != 4 {
		t.Fatalf("fleet edge counts %+v (%v), want 4 members, online, on the configuration", edge.Agents, err)
	}

	// A version rollout of edge; an agent that connects while it runs joins its last wave.
	selected := selectVersion(ctx, t, c, "0.162.0")
	late := cfg
	late.N, late.Seed = 1, 99
	joiner, err := simfleet.Start(ctx, late)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = joiner.Stop() }()
	r, err := s.watch(ctx, c, selected, func(string, ...any) {}, "completed")
	if err != nil {
		t.Fatal(err)
	}
	if r.TargetCounts["succeeded"] != 5 {
		t.Fatalf("rollout targets %v, want 5 succeeded: the 4 edge agents and the one that joined", r.TargetCounts)
	}
	_, ts, err := s.Deps.Store.LoadRollout(ctx, selected)
	if err != nil {
		t.Fatal(err)
	}
	joined := simfleet.InstanceUID(late.Seed, 1).String()
	for _, tg := range ts {
		if tg.AgentID == joined && tg.Wave != len(r.Waves)-1 {
			t.Fatalf("the agent that joined is in wave %d, want the last wave %d", tg.Wave, len(r.Waves)-1)
		}
	}
	if err := joiner.Wait(ctx, allOn(func(a simfleet.AgentState) bool { return a.Version == "0.162.0" })); err != nil {
		t.Fatalf("the agent that joined was not updated: %v", err)
	}
	inventoryFilters(ctx, t, s, c, fleet, edgeHash, labHash)
}

// twinFleet selects agents labelled role=twin: as specific as edge and
// lab, so that an edge agent given the label belongs to neither (an
// assignment error).
var twinFleet = map[string]string{
	"fleets/twin.yaml": `apiVersion: myriarch.dev/v1alpha1
kind: Fleet
metadata: {name: twin}
spec:
  selector: {matchAttributes: {labels.role: twin}}
  collector: {distribution: otelcol-contrib, version: 0.161.0}
  update: {executor: updater}
  rollout: {configPolicy: quick, versionPolicy: quick}
`,
	"configs/twin.yaml": "receivers: {otlp: {protocols: {http: {}}}}\nexporters: {debug: {}}\nservice: {pipelines: {logs: {receivers: [otlp], exporters: [debug]}}}\n",
}

// inventoryFilters checks the inventory's filters beyond fleet and online
// on the agents as TestAssignmentFollowsTheAgent leaves them: sim-01..03
// and the joiner (also sim-01) in edge on 0.162.0, sim-05 in lab on
// 0.161.0; then sim-04 is labelled role=twin, which makes it an
// assignment error between edge and twin.
func inventoryFilters(ctx context.Context, t *testing.T, s *Stack, c client, fleet *simfleet.Fleet, edgeHash, labHash string) {
	t.Helper()
	if err := fleet.SetAttributes(4, map[string]string{"labels.role": "twin"}); err != nil {
		t.Fatal(err)
	}
	type item struct {
		ID, DisplayName, Fleet, AssignmentError string
		Config                                  struct{ DesiredHash, ReportedHash, EffectiveHash, Status string }
	}
	list := func(query string) ([]item, string) {
		var page struct{ Items []item }
		if err := c.do(ctx, "GET", "/api/v1/agents"+query, nil, &page); err != nil {
			t.Fatalf("GET /api/v1/agents%s: %v", query, err)
		}
		names := make([]string, len(page.Items))
		for i, a := range page.Items {
			names[i] = a.DisplayName
		}
		sort.Strings(names)
		return page.Items, strings.Join(names, ",")
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, names := list("?assignmentError=true"); names == simfleet.HostName(4) {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("agents with an assignment error: %q, want %s (selected by edge and twin)", names, simfleet.HostName(4))
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, tc := range []struct{ query, want string }{
		{query: "?version=0.161.0", want: "sim-05"},                                                                                // lab's version; edge went to 0.162.0
		{query: "?version=v0.162.0&fleet=edge", want: "sim-01,sim-01,sim-02,sim-03"},                                               // with the joiner, which reuses sim-01
		{query: "?configStatus=drifted", want: ""},                                                                                 // every agent runs what it should
		{query: "?configStatus=APPLIED", want: "sim-01,sim-01,sim-02,sim-03,sim-04,sim-05"},                                        // sim-04 keeps what it ran
		{query: "?assigned=false", want: "sim-04"},                                                                                 // in no fleet
		{query: "?assigned=false&assignmentError=false", want: ""},                                                                 // every agent is selected by some fleet
		{query: "?selector=" + url.QueryEscape("labels.fleet in (lab, nowhere)"), want: "sim-05"},                                  // a set
		{query: "?selector=" + url.QueryEscape("labels.fleet!=edge"), want: "sim-05"},                                              // another value
		{query: "?selector=" + url.QueryEscape("labels.fleet=edge,labels.role notin (twin)"), want: "sim-01,sim-01,sim-02,sim-03"}, // missing counts as none of them
	} {
		if _, got := list(tc.query); got != tc.want {
			t.Errorf("agents%s: %q, want %q", tc.query, got, tc.want)
		}
	}
	// The effective configuration is recorded: the simulated collectors run
	// exactly what they were sent, so its hash is their fleet's.
	for query, want := range map[string]string{"?fleet=lab": labHash, "?fleet=edge": edgeHash} {
		items, _ := list(query)
		for _, a := range items {
			if a.Config.EffectiveHash != want {
				t.Errorf("agent %s of %s: effective hash %q, want %q", a.DisplayName, query, a.Config.EffectiveHash, want)
			}
		}
	}
}

func fleetMembers(ctx context.Context, t *testing.T, s *Stack, name string) []string {
	t.Helper()
	as, err := s.Deps.Store.FleetAgents(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(as))
	for i, a := range as {
		ids[i] = a.ID
	}
	sort.Strings(ids)
	return ids
}

// BenchmarkAssignmentLatency measures the time from an agent's first report
// (the connectedAt its first report stored) to its assignment to a fleet,
// over 100 simulated agents connecting to the local stack at once, through
// the agents table's stream and the agent-event path. Reported as p50 and
// p95 in milliseconds; the observation polls every 20 ms.
func BenchmarkAssignmentLatency(b *testing.B) {
	storetest.Client(b)
	for i := 0; i < b.N; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		s, err := Start(ctx, Options{APIAddr: "127.0.0.1:0", GatewayAddr: "127.0.0.1:0", SFNAddr: "127.0.0.1:0",
			TablePrefix: "assign-bench-", StateMachineFile: "../../statemachines/rollout.asl.json", Clock: time.Now, PlannerEvery: time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		files, err := revision.ReadDir("../../examples/quickstart")
		if err != nil {
			b.Fatal(err)
		}
		if err := s.apply(ctx, client{base: s.APIURL, token: s.AdminToken}, files, "bench-1"); err != nil {
			b.Fatal(err)
		}
		cfg := simfleet.DefaultConfig()
		cfg.N, cfg.Endpoint, cfg.Token, cfg.Speed = 100, s.GatewayURL, s.AgentToken, 10
		fleet, err := simfleet.Start(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		assignedAt := map[string]time.Time{}
		var all []agent.Agent
		for len(assignedAt) < cfg.N && ctx.Err() == nil {
			all, _ = s.Deps.Store.AllAgents(ctx)
			now := time.Now()
			for _, a := range all {
				if _, seen := assignedAt[a.ID]; !seen && a.Fleet != "" {
					assignedAt[a.ID] = now
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		var lat []time.Duration
		for _, a := range all {
			if at, ok := assignedAt[a.ID]; ok {
				lat = append(lat, at.Sub(a.ConnectedAt))
			}
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		if len(lat) < cfg.N {
			b.Fatalf("%d of %d agents assigned", len(lat), cfg.N)
		}
		b.ReportMetric(float64(lat[len(lat)/2].Milliseconds()), "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*95/100].Milliseconds()), "p95-ms")
		_ = fleet.Stop()
		s.Stop()
		cancel()
	}
}
