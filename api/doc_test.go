package apidoc

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

func load(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPI)
	if err != nil {
		t.Fatalf("load openapi.yaml: %v", err)
	}
	return doc
}

// TestDocument_Validates checks the document against OpenAPI 3.0.3,
// examples included (kin-openapi validates them by default).
func TestDocument_Validates(t *testing.T) {
	doc := load(t)
	if doc.OpenAPI != "3.0.3" {
		t.Errorf("openapi = %s, want 3.0.3", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background(), openapi3.EnableExamplesValidation()); err != nil {
		t.Fatalf("validate: %v", err)
	}
}

// TestDocument_EveryExampleMatchesItsSchema validates each example of a
// media type and a parameter explicitly, as a response (required fields
// must be there), so that an example cannot slip through unchecked.
func TestDocument_EveryExampleMatchesItsSchema(t *testing.T) {
	doc := load(t)
	checked := 0
	check := func(where string, schema *openapi3.SchemaRef, value any) {
		if schema == nil || schema.Value == nil {
			t.Errorf("%s: example without a schema", where)
			return
		}
		if err := schema.Value.VisitJSON(value, openapi3.MultiErrors()); err != nil {
			t.Errorf("%s: example does not match its schema: %v", where, err)
		}
		checked++
	}
	media := func(where string, mt *openapi3.MediaType) {
		if mt.Example != nil {
			check(where, mt.Schema, mt.Example)
		}
		for name, ex := range mt.Examples {
			check(where+" example "+name, mt.Schema, ex.Value.Value)
		}
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			where := method + " " + path
			for _, p := range append(append(openapi3.Parameters{}, item.Parameters...), op.Parameters...) {
				if p.Value.Example != nil {
					check(where+" parameter "+p.Value.Name, p.Value.Schema, p.Value.Example)
				}
			}
			if op.RequestBody != nil {
				for ct, mt := range op.RequestBody.Value.Content {
					media(where+" request "+ct, mt)
				}
			}
			for code, r := range op.Responses.Map() {
				for ct, mt := range r.Value.Content {
					media(where+" "+code+" "+ct, mt)
				}
			}
		}
	}
	if checked < 40 {
		t.Errorf("checked %d examples, want at least 40: are the examples still reached?", checked)
	}
}

// TestDocument_OperationIDs pins the operations the specs and clients name.
func TestDocument_OperationIDs(t *testing.T) {
	doc := load(t)
	var got []string
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			got = append(got, op.OperationID)
		}
	}
	sort.Strings(got)
	want := []string{
		"abortRollout", "applyRevision", "approveRollout", "clearFleetVersionSelection", "getAgent", "getCurrentRevision",
		"getFleet", "getFleetVersionOptions", "getMe", "getOpenAPIDocument", "getRollout", "listAgents", "listAudit", "listEvents", "listFleets",
		"listRolloutTargets", "listRollouts", "pauseRollout", "rejectRollout", "resumeRollout", "retryFailedRollout", "rollbackRollout",
		"selectFleetVersion", "validateRevision",
		// releases and install plans
		"deleteRelease", "getFleetInstallPlan", "getLatestReleaseFleets", "getRelease", "getReleaseSummary", "listReleases", "putRelease",
		// plans
		"createPlan",
		// agent identity
		"resetAgentCredential", "rotateAgentCredential",
	}
	sort.Strings(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("operationIds\n got %v\nwant %v", got, want)
	}
}

// TestDocument_FleetStatusRequiresVersionTarget is a required field of the fleet status.
func TestDocument_RequiredFieldsOfTheSpec(t *testing.T) {
	doc := load(t)
	cases := []struct{ schema, field string }{
		{schema: "FleetStatus", field: "versionTarget"}, // spec: getFleet and listFleets return FleetStatus.versionTarget (required)
		{schema: "Rollout", field: "origin"},            // spec: Rollout.origin (required)
		{schema: "RolloutSummary", field: "origin"},     // spec: RolloutSummary.origin
		{schema: "Problem", field: "code"},              // conventions: a stable code on every problem
		{schema: "RolloutTarget", field: "displayName"}, // targets name their agents as people know them
		{schema: "Agent", field: "displayName"},         // the inventory too
	}
	for _, c := range cases {
		s := doc.Components.Schemas[c.schema]
		if s == nil {
			t.Errorf("schema %s missing", c.schema)
			continue
		}
		found := false
		for _, r := range s.Value.Required {
			found = found || r == c.field
		}
		if !found {
			t.Errorf("%s.%s is not required", c.schema, c.field)
		}
	}
}

// TestDocument_RolloutTimesAreDescribed: every moment a rollout, its waves,
// stages and targets carry says which moment it is, and the wave's
// startedAt says how it relates to a plan's wave start (the first target's
// start), which it is not.
func TestDocument_RolloutTimesAreDescribed(t *testing.T) {
	doc := load(t)
	for _, name := range []string{"Rollout", "RolloutWave", "RolloutStage", "RolloutTarget"} {
		s := doc.Components.Schemas[name]
		if s == nil || s.Value == nil {
			t.Fatalf("no schema %s", name)
		}
		for prop, p := range s.Value.Properties {
			if p.Value != nil && p.Value.Format == "date-time" && strings.TrimSpace(p.Value.Description) == "" {
				t.Errorf("%s.%s is a moment without a description", name, prop)
			}
		}
	}
	d := strings.Join(strings.Fields(doc.Components.Schemas["RolloutWave"].Value.Properties["startedAt"].Value.Description), " ")
	if !strings.Contains(d, "wave `start` is when its first target") || !strings.Contains(d, "at or after `startedAt`") {
		t.Errorf("RolloutWave.startedAt does not relate itself to a plan's wave start:\n%s", d)
	}
}
