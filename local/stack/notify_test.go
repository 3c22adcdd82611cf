package stack

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/notify"
	"github.com/myriarch/myriarch/core/notify/notifytest"
	"github.com/myriarch/myriarch/core/revision"
	"github.com/myriarch/myriarch/local/simfleet"
	"github.com/myriarch/myriarch/local/storetest"
)

// TestNotifications_EndToEnd: a rollout of real OpAMP agents on the local
// stack; its notifications come out of DynamoDB Local's stream at the
// webhook, in order, as the API's feed lists them.
func TestNotifications_EndToEnd(t *testing.T) {
	storetest.Client(t) // fails, not skips, without DynamoDB Local
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	inbox := &notifytest.Webhook{}
	hook := httptest.NewServer(inbox)
	defer hook.Close()
	s, err := Start(ctx, Options{APIAddr: "127.0.0.1:0", GatewayAddr: "127.0.0.1:0", SFNAddr: "127.0.0.1:0",
		TablePrefix: "notify-test-", StateMachineFile: "../../statemachines/rollout.asl.json", Clock: time.Now, PlannerEvery: time.Hour,
		EventsWebhook: hook.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	c := client{base: s.APIURL, token: s.AdminToken}
	files, err := revision.ReadDir("../../examples/quickstart")
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range labFleet {
		files[k] = []byte(v)
	}
	if err := s.apply(ctx, c, files, "notify-1"); err != nil {
		t.Fatal(err)
	}
	cfg := simfleet.DefaultConfig()
	cfg.N, cfg.Endpoint, cfg.Token, cfg.Speed, cfg.Fleet = 3, s.GatewayURL, s.AgentToken, 10, "lab"
	fleet, err := simfleet.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = fleet.Stop() }()
	first := revision.Hash(files["configs/lab.yaml"])
	if err := fleet.Wait(ctx, allOn(func(a simfleet.AgentState) bool { return a.ConfigHash == first })); err != nil {
		t.Fatalf("the agents never got fleet lab's first configuration: %v", err)
	}

	files["configs/lab.yaml"] = append(files["configs/lab.yaml"], []byte("# the second commit\n")...)
	out, err := s.applyResult(ctx, c, files, "notify-2")
	if err != nil {
		t.Fatal(err)
	}
	id := ""
	for _, f := range out.Fleets {
		for _, p := range f.Plans {
			if f.Fleet == "lab" && p.Kind == "config" && p.RolloutID != "" {
				id = p.RolloutID
			}
		}
	}
	if id == "" {
		t.Fatalf("the second commit created no rollout of fleet lab: %+v", out)
	}
	if _, err := s.watch(ctx, c, id, func(string, ...any) {}, "completed"); err != nil {
		t.Fatal(err)
	}

	var feed struct{ Items []notify.Event }
	if err := c.do(ctx, "GET", "/api/v1/events?rollout="+id, nil, &feed); err != nil {
		t.Fatal(err)
	}
	var feedTypes, feedIDs []string
	for _, e := range feed.Items {
		feedTypes, feedIDs = append(feedTypes, notify.DetailType(e.Type)), append(feedIDs, e.EventID)
	}
	if fmt.Sprint(feedTypes) != "[Rollout Started Rollout Completed]" {
		t.Fatalf("feed %v, want the rollout's start and completion", feedTypes)
	}
	deadline := time.Now().Add(30 * time.Second)
	for fmt.Sprint(inbox.IDs(id)) != fmt.Sprint(feedIDs) {
		if time.Now().After(deadline) {
			t.Fatalf("the webhook received %v, want what the feed lists: %v", inbox.IDs(id), feedIDs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, c := range inbox.Accepted() {
		if c.Envelope.Detail.Rollout.ID == id && c.Envelope.DetailType != notify.DetailType(c.Envelope.Detail.Type) {
			t.Errorf("envelope %+v: the detail-type is not its type's", c.Envelope)
		}
	}
}
