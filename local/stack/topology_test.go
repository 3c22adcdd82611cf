package stack

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/revision"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/local/simfleet"
	"github.com/myriarch/myriarch/local/storetest"
)

// zonesPolicy is a canary, then region eu-1 zone by zone, then the rest
// zone by zone, a bake after every stage. Batches are the whole pass here
// (each costs a wait of the state machine; the engine's tests cover
// them).
func zonesPolicy(onFailure string) string {
	return `apiVersion: myriarch.dev/v1alpha1
kind: RolloutPolicy
metadata: {name: zones}
spec:
  waves:
    - {name: canary, selector: {matchAttributes: {labels.wave: canary}}}
    - {name: eu-1, selector: "cloud.region=eu-1", by: zone, bake: 2s}
    - {name: rest, percent: 100, by: zone, bake: 2s}
  maxConcurrent: 0
  maxUnavailable: 100%
  healthWait: 1s
  applyTimeout: 1m
  onFailure: ` + onFailure + "\n"
}

// topologyRun applies the quickstart fleet with the zones policy to agents
// in 2 regions × 2 zones (agent 1 is the canary, in eu-1a), then a changed
// configuration that the agents failing lists cannot apply, and returns the
// configuration rollout once it ended.
func topologyRun(t *testing.T, prefix, onFailure string, failing []int) (rollout.Rollout, []rollout.Target) {
	t.Helper()
	storetest.Client(t) // fails, not skips, without DynamoDB Local
	t.Parallel()        // each run has a stack of its own; they mostly wait
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	s, err := Start(ctx, Options{APIAddr: "127.0.0.1:0", GatewayAddr: "127.0.0.1:0", SFNAddr: "127.0.0.1:0",
		TablePrefix: prefix, StateMachineFile: "../../statemachines/rollout.asl.json", Clock: time.Now, PlannerEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	cfg := simfleet.DefaultConfig()
	cfg.N, cfg.Endpoint, cfg.Token, cfg.Speed, cfg.CanaryCount = 9, s.GatewayURL, s.AgentToken, 10, 1
	cfg.Zones = []string{"eu-1/eu-1a", "eu-1/eu-1b", "us-1/us-1a", "us-1/us-1b"}
	cfg.FailAgents = failing
	fleet := connectFleet(t, ctx, s, cfg)
	c := client{base: s.APIURL, token: s.AdminToken}
	files, err := revision.ReadDir("../../examples/quickstart")
	if err != nil {
		t.Fatal(err)
	}
	files["policies/zones.yaml"] = []byte(zonesPolicy(onFailure))
	files["fleets/edge.yaml"] = []byte(strings.Replace(string(files["fleets/edge.yaml"]), "configPolicy: demo-config", "configPolicy: zones", 1))
	if err := s.apply(ctx, c, files, "zones-1"); err != nil {
		t.Fatal(err)
	}
	hash1 := revision.Hash(files["configs/edge.yaml"])
	if err := fleet.Wait(ctx, allOn(func(a simfleet.AgentState) bool { return a.ConfigHash == hash1 })); err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	files["configs/edge.yaml"] = append(append([]byte(nil), files["configs/edge.yaml"]...), []byte(simfleet.DefaultFailMarker+"\n")...)
	id, err := s.applyForRollout(ctx, c, files, "zones-2")
	if err != nil {
		t.Fatal(err)
	}
	for {
		r, ts, err := s.Deps.Store.LoadRollout(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status.Final() || r.Status == rollout.Failed || r.Status == rollout.Paused {
			return r, ts
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			t.Fatalf("rollout %s is %s (%s): %v", id, r.Status, r.StatusReason, err)
		}
	}
}

func stageNames(r rollout.Rollout) []string {
	var out []string
	for _, s := range r.Stages {
		out = append(out, s.Name+":"+string(s.Status))
	}
	return out
}

// A topology rollout on the local stack: canary, eu-1 one zone at a time,
// then us-1 one zone at a time, each stage after the bake of the one before.
func TestTopologyRollout_ZoneByZoneWithBakes(t *testing.T) {
	r, ts := topologyRun(t, "topo-ok-", "rollback-wave", nil)
	want := "canary:passed eu-1/eu-1a:passed eu-1/eu-1b:passed rest/us-1a:passed rest/us-1b:passed"
	if r.Status != rollout.Completed || strings.Join(stageNames(r), " ") != want {
		t.Fatalf("rollout %s (%s), stages %v; want completed with %s", r.Status, r.StatusReason, stageNames(r), want)
	}
	for i := 1; i < len(r.Stages); i++ {
		prev, st := r.Stages[i-1], r.Stages[i]
		end := prev.FinishedAt
		if prev.BakeUntil != nil {
			end = prev.BakeUntil
		}
		if st.StartedAt.Before(*end) {
			t.Errorf("stage %s started at %s, before %s's end %s", st.Name, st.StartedAt, prev.Name, end)
		}
	}
	for _, tg := range ts {
		if tg.Status != rollout.TargetSucceeded {
			t.Errorf("target %s is %s, want succeeded", tg.AgentID, tg.Status)
		}
	}
}

// A red stage (the agents of us-1a cannot apply the change) with
// rollback-wave: that stage returns to the old configuration, the stages
// that passed keep the new one.
func TestTopologyRollout_RedStage_RollbackWave(t *testing.T) {
	r, ts := topologyRun(t, "topo-wave-", "rollback-wave", []int{3, 7}) // agents 3 and 7 are in us-1/us-1a
	if r.Status != rollout.RolledBack {
		t.Fatalf("rollout %s (%s), stages %v; want rolled_back", r.Status, r.StatusReason, stageNames(r))
	}
	byStage := map[int][]string{}
	for _, tg := range ts {
		byStage[tg.Stage] = append(byStage[tg.Stage], string(tg.Status))
	}
	for s, st := range r.Stages {
		got := strings.Join(sortedStrings(byStage[s]), ",")
		switch {
		case st.Name == "rest/us-1a":
			if strings.Contains(got, "succeeded") || !strings.Contains(got, "rolled_back") {
				t.Errorf("failed stage %s: targets %s, want rolled back", st.Name, got)
			}
		case st.Name == "rest/us-1b":
			if strings.Contains(got, "succeeded") {
				t.Errorf("stage %s after the failed one: targets %s, want none updated", st.Name, got)
			}
		default:
			if strings.Contains(got, "rolled_back") || !strings.Contains(got, "succeeded") {
				t.Errorf("passed stage %s: targets %s, want kept on the new configuration", st.Name, got)
			}
		}
	}
}

// The same red stage with rollback-all: the failed stage, then the stages
// that had passed, nearest first, one stage at a time.
func TestTopologyRollout_RedStage_RollbackAll(t *testing.T) {
	r, ts := topologyRun(t, "topo-all-", "rollback-all", []int{3, 7})
	if r.Status != rollout.RolledBack {
		t.Fatalf("rollout %s (%s), stages %v; want rolled_back", r.Status, r.StatusReason, stageNames(r))
	}
	last := map[int]time.Time{} // when each stage's last target was back
	first := map[int]time.Time{}
	for _, tg := range ts {
		if tg.Status == rollout.TargetSucceeded {
			t.Errorf("target %s of stage %d still on the new configuration", tg.AgentID, tg.Stage)
		}
		if tg.Status != rollout.TargetRolledBack {
			continue
		}
		if f := *tg.FinishedAt; f.After(last[tg.Stage]) {
			last[tg.Stage] = f
		}
		if f := *tg.RollbackAt; first[tg.Stage].IsZero() || f.Before(first[tg.Stage]) {
			first[tg.Stage] = f
		}
	}
	// rest/us-1a (3) first, then eu-1/eu-1b (2), eu-1/eu-1a (1), canary (0).
	for _, pair := range [][2]int{{3, 2}, {2, 1}, {1, 0}} {
		done, next := pair[0], pair[1]
		if first[next].Before(last[done]) {
			t.Errorf("stage %d began rolling back at %s, before stage %d was back at %s", next, first[next], done, last[done])
		}
	}
	if len(first) != 4 {
		t.Fatalf("stages rolled back %v, want the failed one and the three that passed", fmt.Sprint(first))
	}
}

func sortedStrings(xs []string) []string {
	out := append([]string(nil), xs...)
	sort.Strings(out)
	return out
}
