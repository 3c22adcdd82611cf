package clienttest

import (
	"fmt"
	"testing"

	"github.com/myriarch/myriarch/adapters/client"
)

// EdgeFleet selects the agents labelled fleet=edge; the updater executor
// rolls versions out (built-in version policy), and operators may choose
// 0.161.0 to 0.162.0.
const EdgeFleet = `apiVersion: myriarch.dev/v1alpha1
kind: Fleet
metadata: {name: edge}
spec:
  selector: {matchAttributes: {labels.fleet: edge}}
  collector: {distribution: otelcol-contrib, version: 0.161.0}
  update:
    executor: updater
    selection: {enabled: true, versionRange: ">=0.161.0, <=0.162.0"}
  rollout: {configPolicy: canary-then-all}
`

// CanaryPolicy has a canary wave (labels.wave=canary), then the rest after
// an approval; health wait 5m, no concurrency limit.
const CanaryPolicy = `apiVersion: myriarch.dev/v1alpha1
kind: RolloutPolicy
metadata: {name: canary-then-all}
spec:
  waves:
    - name: canary
      selector: {matchAttributes: {labels.wave: canary}}
    - {name: rest, percent: 100, requireApproval: true}
  maxConcurrent: 0
  healthWait: 5m
`

// Files is a valid revision of the fleet edge whose rendered configuration
// is config (another text, another hash: a new rollout).
func Files(config string) map[string]string {
	return FilesWithPolicy(config, CanaryPolicy)
}

// FilesWithPolicy is Files with another text of the fleet's policy
// canary-then-all (CanaryPolicy with more of its spec, for example).
func FilesWithPolicy(config, policy string) map[string]string {
	return map[string]string{"fleets/edge.yaml": EdgeFleet, "policies/canary-then-all.yaml": policy, "configs/edge.yaml": config}
}

// AddEdgeAgents adds n healthy edge agents e01, e02, ... on the
// configuration hash "old"; the first is the canary. It returns their ids.
func (s *Server) AddEdgeAgents(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("e%02d", i+1)
		attrs := map[string]string{"labels.fleet": "edge"}
		if i == 0 {
			attrs["labels.wave"] = "canary"
		}
		s.PutAgent(HealthyAgent(ids[i], attrs, "old", s.Now()))
	}
	return ids
}

// ApplyEdge adds n edge agents and applies Files(config) as admin; the
// planner creates the edge configuration rollout, whose id it returns.
func (s *Server) ApplyEdge(t testing.TB, n int, config string) string {
	t.Helper()
	return s.ApplyEdgeFiles(t, n, Files(config))
}

// ApplyEdgeFiles is ApplyEdge with the files of a revision.
func (s *Server) ApplyEdgeFiles(t testing.TB, n int, files map[string]string) string {
	t.Helper()
	s.AddEdgeAgents(n)
	res, err := s.Client(AdminToken).ApplyRevision(t.Context(), client.RevisionRequest{Commit: "9f3c2a17", Files: files})
	if err != nil {
		t.Fatal(err)
	}
	for _, fp := range res.Fleets {
		for _, p := range fp.Plans {
			if fp.Fleet == "edge" && p.Kind == "config" && p.Created {
				return p.RolloutID
			}
		}
	}
	t.Fatalf("the revision created no edge configuration rollout: %+v", res)
	return ""
}
