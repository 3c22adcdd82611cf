package policy

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func canaryThenAll(t *testing.T) Policy { return readPolicy(t, "canary-then-all") }

func readPolicy(t *testing.T, name string) Policy {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name + ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, issues := Parse(data)
	if len(issues) != 0 {
		t.Fatal(issues)
	}
	p.Path, p.Commit = "policies/"+name+".yaml", "9f3c2a17"
	return p
}

// The snapshot is stored on the rollout: its JSON shape is pinned by a golden
// file and must read back to the same value.
func TestSnapshotJSON_Golden(t *testing.T) {
	for _, name := range []string{"canary-then-all", "regions", "gates"} {
		t.Run(name, func(t *testing.T) { testGolden(t, name) })
	}
}

func testGolden(t *testing.T, name string) {
	s := readPolicy(t, name).Snapshot(KindVersion)
	got, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden := "testdata/" + name + ".snapshot.json"
	if *update {
		if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(append(got, '\n'), want) {
		t.Errorf("snapshot JSON =\n%s\nwant (go test -run Golden -update to accept)\n%s", got, want)
	}
	var back Snapshot
	if err := json.Unmarshal(want, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, s) {
		t.Errorf("round trip =\n%+v\nwant\n%+v", back, s)
	}
}

func TestSnapshotJSON_RoundTrip(t *testing.T) {
	for name, s := range map[string]Snapshot{
		"builtIn config":  BuiltIn(KindConfig),
		"builtIn version": BuiltIn(KindVersion),
		"canary":          canaryThenAll(t).Snapshot(KindConfig),
		"regions":         readPolicy(t, "regions").Snapshot(KindConfig),
		"sub-second":      (Policy{Name: "p", Spec: Spec{HealthWait: 1500 * time.Millisecond}}).Snapshot(KindConfig),
	} {
		data, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var back Snapshot
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(back, s) {
			t.Errorf("%s: round trip =\n%+v\nwant\n%+v", name, back, s)
		}
	}
}

// Durations are written as Go duration strings, never as nanoseconds.
func TestSnapshotJSON_Durations(t *testing.T) {
	data, err := json.Marshal(BuiltIn(KindVersion))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"healthWait":"1m0s"`, `"applyTimeout":"30m0s"`, `"offlineGracePeriod":"15m0s"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("%s lacks %s", data, want)
		}
	}
}

func TestSpecJSON_RoundTrip(t *testing.T) {
	for _, name := range []string{"canary-then-all", "regions", "gates"} {
		testSpecRoundTrip(t, readPolicy(t, name))
	}
}

func testSpecRoundTrip(t *testing.T, p Policy) {
	t.Helper()
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"healthWait":"`+p.Spec.HealthWait.String()+`"`) {
		t.Errorf("%s: healthWait not a duration string", data)
	}
	var back Policy
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, p) {
		t.Errorf("round trip =\n%+v\nwant\n%+v", back, p)
	}
	// Unset durations stay out of the spec's JSON, so they read back as unset.
	empty, _ := json.Marshal(Spec{})
	if strings.Contains(string(empty), "healthWait") {
		t.Errorf("empty spec JSON %s names healthWait", empty)
	}
}

func TestDurationJSON_Invalid(t *testing.T) {
	for _, in := range []string{
		`{"healthWait": 60000000000}`, // nanoseconds: refused rather than guessed
		`{"healthWait": "5 minutes"}`, // not a Go duration
		`{"healthWait": null}`,        // not a string
	} {
		var s Snapshot
		if err := json.Unmarshal([]byte(in), &s); err == nil {
			t.Errorf("%s: want an error", in)
		}
	}
}

// The example revision of docs/policy.md parses without an issue and is the
// policy whose snapshot is pinned in testdata.
func TestExample_MultiRegion(t *testing.T) {
	example, err := os.ReadFile("../../examples/multi-region/policies/regions.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, issues := Parse(example); len(issues) != 0 {
		t.Errorf("example issues: %v", issues)
	}
	if pinned, _ := os.ReadFile("testdata/regions.yaml"); !bytes.Equal(example, pinned) {
		t.Error("examples/multi-region/policies/regions.yaml differs from testdata/regions.yaml; keep them equal")
	}
}
