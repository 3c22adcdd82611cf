package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/myriarch/myriarch/adapters/setup"
	"github.com/myriarch/myriarch/adapters/store/tables"
)

func TestFunctions_GoOnGraviton(t *testing.T) {
	s := synthesized(t, nil)
	if got := len(s.ofType("AWS::Lambda::Function")); got != len(functionSpecs) {
		t.Errorf("%d functions deployed, want %d (custom resources would add some)", got, len(functionSpecs))
	}
	assets := fileAssets(t, s)
	for _, f := range functionSpecs {
		t.Run(f.Name, func(t *testing.T) {
			_, r := s.function(t, f.Name)
			p := r.Properties
			checks := []struct {
				field string
				got   any
				want  any
			}{
				{field: "Runtime", got: p["Runtime"], want: "provided.al2023"},
				{field: "Architectures", got: p["Architectures"], want: []any{"arm64"}},
				{field: "Handler", got: p["Handler"], want: "bootstrap"},
				{field: "TracingConfig", got: p["TracingConfig"], want: map[string]any{"Mode": "Active"}},
				{field: "MemorySize", got: p["MemorySize"], want: float64(f.MemoryMB)},
				{field: "Timeout", got: p["Timeout"], want: float64(f.TimeoutSeconds)},
				{field: "table prefix", got: env(p)[envTablePrefix], want: "myriarch-test-"},
				{field: "stage", got: env(p)[envStage], want: testStage},
				{field: "GOMEMLIMIT", got: env(p)[envGoMemLimit], want: fmt.Sprintf("%dMiB", int(p["MemorySize"].(float64))*9/10)},
			}
			for _, c := range checks {
				if !reflect.DeepEqual(c.got, c.want) {
					t.Errorf("%s = %v, want %v", c.field, c.got, c.want)
				}
			}
			reserved, has := p["ReservedConcurrentExecutions"]
			if f.ReservedConcurrency > 0 != has || (has && reserved != float64(f.ReservedConcurrency)) {
				t.Errorf("reserved concurrency %v, want %d", reserved, f.ReservedConcurrency)
			}
			key := fmt.Sprint(p["Code"].(map[string]any)["S3Key"])
			src, err := os.ReadFile(filepath.Join(s.outdir, assets[strings.TrimSuffix(key, ".zip")], "bootstrap"))
			if err != nil || string(src) != "synth-only stub of "+f.Name+"\n" {
				t.Errorf("code asset %s does not hold %s's bootstrap: %q %v", key, f.Name, src, err)
			}
		})
	}
}

// The functions that may hold a whole rollout or fleet in memory have the
// 1,024 MB that one evaluation over 100,000 targets needs (about 450 MB
// resident): the engine's tasks, the agent events' evaluations that fall
// back to the whole rollout, the API's actions and the planner's plans.
func TestFunctions_WholeRolloutsFit(t *testing.T) {
	s := synthesized(t, nil)
	for _, name := range []string{fnEngine, fnAgentEvent, fnAPI, fnPlanner} {
		_, r := s.function(t, name)
		if got := r.Properties["MemorySize"]; got != float64(1024) {
			t.Errorf("%s: MemorySize %v, want 1024", name, got)
		}
		if got := env(r.Properties)[envGoMemLimit]; got != "921MiB" {
			t.Errorf("%s: GOMEMLIMIT %v, want 921MiB", name, got)
		}
	}
}

// The planner is the spec's single writer of rollouts; an account whose
// concurrency quota leaves nothing to reserve (AWS keeps 100 unreserved)
// deploys with plannerReservedConcurrency 0, and no reservation.
func TestFunctions_PlannerIsASingleWriter(t *testing.T) {
	s := synthesized(t, nil)
	_, r := s.function(t, fnPlanner)
	if r.Properties["ReservedConcurrentExecutions"] != float64(1) {
		t.Errorf("planner reserved concurrency %v, want 1", r.Properties["ReservedConcurrentExecutions"])
	}
	s = synthesized(t, map[string]string{"plannerReservedConcurrency": "0"})
	_, r = s.function(t, fnPlanner)
	if v, ok := r.Properties["ReservedConcurrentExecutions"]; ok {
		t.Errorf("planner reserved concurrency %v with plannerReservedConcurrency 0, want none", v)
	}
}

func env(props map[string]any) map[string]any {
	e, _ := props["Environment"].(map[string]any)
	v, _ := e["Variables"].(map[string]any)
	return v
}

// fileAssets maps each file asset's hash to its path in the cloud assembly.
func fileAssets(t *testing.T, s *synthesis) map[string]string {
	t.Helper()
	var manifest struct {
		Files map[string]struct {
			Source struct{ Path string } `json:"source"`
		} `json:"files"`
		DockerImages map[string]struct {
			Source struct {
				Directory, DockerFile string
			} `json:"source"`
		} `json:"dockerImages"`
	}
	raw, err := os.ReadFile(filepath.Join(s.outdir, stackName(s.config)+".assets.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &manifest); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for hash, f := range manifest.Files {
		out[hash] = f.Source.Path
	}
	for hash, d := range manifest.DockerImages {
		out["docker:"+hash] = d.Source.Directory
	}
	return out
}

func TestPlanner_EveryMinute(t *testing.T) {
	s := synthesized(t, nil)
	plannerID, _ := s.function(t, fnPlanner)
	must(t, "schedule", func() {
		s.template.HasResourceProperties(jsii.String("AWS::Events::Rule"), map[string]any{
			"ScheduleExpression": "rate(1 minute)",
			"State":              "ENABLED",
			"Targets":            []any{assertions.Match_ObjectLike(&map[string]any{"Arn": map[string]any{"Fn::GetAtt": []any{plannerID, "Arn"}}})},
		})
	})
}

func TestAgentEvent_ReadsTheAgentsStream(t *testing.T) {
	s := synthesized(t, nil)
	agentsID, _ := s.table(t, tables.Agents.Name)
	fnID, _ := s.function(t, fnAgentEvent)
	must(t, "event source mapping", func() {
		s.template.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
			"EventSourceArn":        map[string]any{"Fn::GetAtt": []any{agentsID, "StreamArn"}},
			"FunctionName":          map[string]any{"Ref": fnID},
			"StartingPosition":      "LATEST",
			"BatchSize":             500, // a wave's reports in two passes
			"ParallelizationFactor": 4,   // passes side by side, an agent's changes in order
			"FunctionResponseTypes": []any{"ReportBatchItemFailures"},
			"DestinationConfig":     assertions.Match_ObjectLike(&map[string]any{"OnFailure": assertions.Match_AnyValue()}),
		})
	})
	must(t, "no batching window: the engine reacts within about a second", func() {
		s.template.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
			"MaximumBatchingWindowInSeconds": assertions.Match_Absent(),
		})
	})
}

// Every function that judges whether an agent is online reads the same
// liveness settings, the planner included: with reconnectGrace set, a
// planner without it would call gone an agent the engine counts online.
func TestFunctions_LivenessSettingsAlike(t *testing.T) {
	s := synthesized(t, map[string]string{"reconnectGrace": "30s", "agentRetention": "48h"})
	for _, f := range functionSpecs {
		if !f.Liveness {
			continue
		}
		_, fn := s.function(t, f.Name)
		e := env(fn.Properties)
		if e[setup.EnvReconnectGrace] != "30s" || e[setup.EnvAgentRetention] != "48h" {
			t.Errorf("%s: %s=%v %s=%v, want 30s and 48h", f.Name, setup.EnvReconnectGrace, e[setup.EnvReconnectGrace], setup.EnvAgentRetention, e[setup.EnvAgentRetention])
		}
	}
}
