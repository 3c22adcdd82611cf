package notify

import (
	"encoding/json"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

var t0 = time.Date(2026, 3, 2, 12, 4, 10, 0, time.UTC)

// Every event type the code emits is in the catalogue: the engine's
// e.emit(rollout.Event...) calls and the adapters' types, read from the
// sources (the constants' values from core/rollout's), so that a new event
// cannot be published without a detail-type and a line in
// docs/notifications.md.
func TestCatalogue_CoversEveryEmittedType(t *testing.T) {
	emitted := map[string]string{TypeFailed: "notify", TypeSuperseded: "notify"}
	values := eventConstants(t)
	emit := regexp.MustCompile(`\be\.emit\(([^,]+),`)
	files, err := filepath.Glob("../engine/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no engine sources: %v", err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range emit.FindAllStringSubmatch(string(src), -1) {
			name, ok := strings.CutPrefix(m[1], "rollout.")
			if !ok || values[name] == "" {
				t.Errorf("%s emits %s: the engine emits the constants of core/rollout (event.go)", f, m[1])
				continue
			}
			emitted[values[name]] = f
		}
	}
	if len(emitted) < 15 {
		t.Fatalf("found %d types, want the engine's too: did e.emit change its form?", len(emitted))
	}
	known := map[string]bool{}
	for _, k := range Catalogue {
		if known[k.Type] {
			t.Errorf("%s is in the catalogue twice", k.Type)
		}
		known[k.Type] = true
		if _, ok := emitted[k.Type]; !ok {
			t.Errorf("%s is in the catalogue, nothing emits it", k.Type)
		}
	}
	for typ, where := range emitted {
		if !known[typ] {
			t.Errorf("%s (%s) is not in the catalogue", typ, where)
		}
	}
	doc, err := os.ReadFile("../../docs/notifications.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range Catalogue {
		if !strings.Contains(string(doc), "`"+k.Type+"`") || !strings.Contains(string(doc), k.DetailType) {
			t.Errorf("docs/notifications.md does not list %s (%s)", k.Type, k.DetailType)
		}
	}
}

// eventConstants maps the names of core/rollout's event constants to their
// values.
func eventConstants(t *testing.T) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "../rollout/event.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok && len(vs.Values) == len(vs.Names) {
			for i, name := range vs.Names {
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok {
					out[name.Name], _ = strconv.Unquote(lit.Value)
				}
			}
		}
		return true
	})
	return out
}

func TestDetailType(t *testing.T) {
	tests := []struct{ typ, want string }{
		{typ: "rollout.paused", want: "Rollout Paused"},                         // the catalogue
		{typ: "rollout.waiting_approval", want: "Rollout Waiting For Approval"}, // the catalogue's phrase
		{typ: "rollout.some_new_thing", want: "Rollout Some New Thing"},         // not catalogued: derived
	}
	for _, tt := range tests {
		if got := DetailType(tt.typ); got != tt.want {
			t.Errorf("DetailType(%q) = %q, want %q", tt.typ, got, tt.want)
		}
	}
	for _, k := range Catalogue {
		if len(k.DetailType) > 128 { // EventBridge's limit
			t.Errorf("%s: detail-type over 128 characters", k.Type)
		}
	}
}

func pausedCanary() (rollout.Rollout, []rollout.Target) {
	r := rollout.Rollout{ID: "r-20260302t120000-9f86d081", Fleet: "edge", Kind: policy.KindConfig, Status: rollout.Paused,
		StatusReason: `wave 0 "canary": failure threshold reached (1 failed, at most 0 allowed)`, ToRef: "5f2c0b1e", Origin: rollout.OriginGitOps,
		Version: 6, Waves: []rollout.Wave{{Index: 0, Name: "canary", Status: rollout.WaveFailed}, {Index: 1, Name: "rest", Status: rollout.WavePending}}}
	ts := []rollout.Target{
		{AgentID: "a00", Wave: 0, Status: rollout.TargetFailed}, {AgentID: "a01", Wave: 0, Status: rollout.TargetSucceeded},
		{AgentID: "a02", Wave: 1, Status: rollout.TargetPending}, {AgentID: "a03", Wave: 1, Status: rollout.TargetPending},
	}
	return r, ts
}

// The detail as EventBridge, the feed and a webhook carry it: golden JSON.
func TestNew_TheDetailOfAPausedRollout(t *testing.T) {
	r, ts := pausedCanary()
	es := New(r, ts, []engine.Event{{Type: "rollout.paused", Reason: r.StatusReason}}, t0.In(time.FixedZone("CET", 3600)))
	Stamp(es, 7)
	got, err := json.MarshalIndent(es[0], "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "rollout.paused.json")
	if *update {
		if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(got)+"\n" != string(want) {
		t.Errorf("detail\n%s\nwant (testdata/rollout.paused.json)\n%s", got, want)
	}
	var back Event
	if err := json.Unmarshal(want, &back); err != nil || back.EventID != "r-20260302t120000-9f86d081:v7:0" || !back.Time.Equal(t0) {
		t.Errorf("round trip: %+v %v", back, err)
	}
}

func TestNew_EventsOfOneChangeShareTheSummary(t *testing.T) {
	r, ts := pausedCanary()
	if got := New(r, ts, nil, t0); got != nil {
		t.Fatalf("no events, got %v", got)
	}
	es := New(r, ts, []engine.Event{{Type: "rollout.resumed"}, {Type: "rollout.waiting_approval", Reason: "wave 1"}}, t0)
	Stamp(es, 8)
	for i, e := range es {
		want := ID(r.ID, 8, i)
		if e.EventID != want || e.Index != i || e.Rollout.Version != 8 || e.Rollout.Counts["total"] != 4 || e.Rollout.Counts["pending"] != 2 {
			t.Errorf("event %d: %+v, want id %s, version 8, 4 targets of which 2 pending", i, e, want)
		}
	}
	es[0].Rollout.Counts["total"] = 99
	if es[1].Rollout.Counts["total"] != 4 {
		t.Error("the events of one change share their counts: changing one changed the other")
	}
}

func TestNew_WaveAndStageWhenKnown(t *testing.T) {
	r, ts := pausedCanary()
	r.Waves[0].Status = rollout.WaveCompleted
	r.Stages = []rollout.Stage{{Name: "eu-1", Wave: 1, Status: rollout.StagePassed}, {Name: "us-1", Wave: 1, Status: rollout.StageRunning}}
	s := New(r, ts, []engine.Event{{Type: "rollout.frozen"}}, t0)[0].Rollout
	if s.Wave == nil || *s.Wave != (Wave{Index: 1, Name: "rest"}) || s.Stage != "us-1" {
		t.Errorf("wave %+v stage %q, want rest (1) and us-1", s.Wave, s.Stage)
	}
	r.Waves[1].Status, r.Stages[1].Status = rollout.WaveCompleted, rollout.StagePassed
	s = New(r, ts, []engine.Event{{Type: "rollout.completed"}}, t0)[0].Rollout
	if s.Wave != nil || s.Stage != "" {
		t.Errorf("wave %+v stage %q of a completed rollout, want none", s.Wave, s.Stage)
	}
}

// The examples of docs/notifications.md are details as published: each
// decodes strictly, under the heading of its type, with its stable id;
// every type of the catalogue has one.
func TestCatalogue_TheDocumentedExamplesAreDetails(t *testing.T) {
	doc, err := os.ReadFile("../../docs/notifications.md")
	if err != nil {
		t.Fatal(err)
	}
	section := regexp.MustCompile("(?s)### `(rollout\\.[a-z_]+)`\n.*?```json\n(.*?)```")
	seen := map[string]bool{}
	for _, m := range section.FindAllStringSubmatch(string(doc), -1) {
		dec := json.NewDecoder(strings.NewReader(m[2]))
		dec.DisallowUnknownFields()
		var e Event
		if err := dec.Decode(&e); err != nil {
			t.Errorf("%s: the example does not decode: %v", m[1], err)
			continue
		}
		seen[m[1]] = true
		if e.Type != m[1] || e.EventID != ID(e.Rollout.ID, e.Rollout.Version, e.Index) || e.Time.IsZero() || e.Rollout.Counts["total"] == 0 {
			t.Errorf("%s: example %+v: type, id or time wrong", m[1], e)
		}
		total := 0
		for _, st := range rollout.TargetStatuses {
			n, ok := e.Rollout.Counts[string(st)]
			if !ok {
				t.Errorf("%s: the counts lack %s", m[1], st)
			}
			total += n
		}
		if total != e.Rollout.Counts["total"] {
			t.Errorf("%s: counts add up to %d, total says %d", m[1], total, e.Rollout.Counts["total"])
		}
	}
	for _, k := range Catalogue {
		if !seen[k.Type] {
			t.Errorf("docs/notifications.md has no example of %s", k.Type)
		}
	}
}
