package plannertask

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/myriarch/myriarch/core/planner"
	"github.com/myriarch/myriarch/core/rollout"
)

// The wire between the api and the planner Lambda is golden JSON in
// testdata/: every file decodes into its type and encodes back unchanged,
// so a renamed field or a changed omitempty shows as a diff of the wire.
func TestWire_GoldenRoundTrip(t *testing.T) {
	cases := []struct {
		file string
		into any
	}{
		{file: "plan-request.json", into: &Request{}},
		{file: "plan-reply.json", into: &Reply{}},
		{file: "plan-reply-updated.json", into: &Reply{}},
		{file: "plan-reply-bootstrapped.json", into: &Reply{}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			golden := readGolden(t, c.file)
			dec := json.NewDecoder(bytes.NewReader(golden))
			dec.DisallowUnknownFields()
			if err := dec.Decode(c.into); err != nil {
				t.Fatal(err)
			}
			back, err := json.Marshal(c.into)
			if err != nil {
				t.Fatal(err)
			}
			assertJSONEqual(t, golden, back)
		})
	}
}

// The reply of a known decision is the golden reply: ids and counts, the
// target and the note, and nothing of the targets themselves.
func TestReplyOf_IsTheGoldenReply(t *testing.T) {
	cases := []struct {
		file string
		d    planner.Decision
	}{
		{file: "plan-reply.json", d: planner.Decision{Target: "0.162.0", Note: "superseded r-20260301t090000-ba9876543210",
			Created:    &planner.Active{Rollout: rollout.Rollout{ID: "r-20260302t120000-0123456789ab"}, Targets: make([]rollout.Target, 4)},
			Ended:      &planner.Ended{Rollout: rollout.Rollout{ID: "r-20260301t090000-ba9876543210", Status: rollout.Superseded}},
			Stragglers: make([]rollout.Target, 2)}},
		{file: "plan-reply-updated.json", d: planner.Decision{Target: "h2",
			Updated: &rollout.Rollout{ID: "r-20260302t120000-0123456789ab"}}},
		{file: "plan-reply-bootstrapped.json", d: planner.Decision{Target: "h1", Bootstrap: []string{"a1", "a2", "a3"},
			Note: planner.NoteNoneRelevant}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			got, err := json.Marshal(ReplyOf(c.d))
			if err != nil {
				t.Fatal(err)
			}
			assertJSONEqual(t, readGolden(t, c.file), got)
		})
	}
}

func readGolden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// assertJSONEqual compares two documents as JSON values, so that layout
// and key order do not matter.
func assertJSONEqual(t *testing.T, want, got []byte) {
	t.Helper()
	var w, g any
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("want: %v", err)
	}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got: %v", err)
	}
	wb, _ := json.Marshal(w)
	gb, _ := json.Marshal(g)
	if !bytes.Equal(wb, gb) {
		t.Errorf("JSON differs:\n got %s\nwant %s", gb, wb)
	}
}
