package store

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/myriarch/myriarch/core/agent"
)

// An imported agent is stored as its first report would create it, and
// 60 agents take 3 batch writes.
func TestImportAgents_StoresAsFirstReport(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	reported := agentOf("reported", "edge")
	reported.DesiredHash = "h0"
	must(t, s.RecordAgent(ctx, reported))
	as := make([]agent.Agent, 60)
	for i := range as {
		as[i] = agentOf(fmt.Sprintf("i%02d", i), "edge")
		as[i].DesiredHash = "h0"
	}
	s.ResetUsage()
	must(t, s.ImportAgents(ctx, as))
	if u := s.Usage(); u.Requests != 3 || u.ItemsWritten != 60 {
		t.Fatalf("import of 60 agents: %v, want 3 requests writing 60 items", u)
	}
	want, err := s.GetAgentRecord(ctx, "reported")
	must(t, err)
	for _, a := range as {
		got, err := s.GetAgentRecord(ctx, a.ID)
		must(t, err)
		if got == nil {
			t.Fatalf("agent %s not stored", a.ID)
		}
		got.ID, got.Attributes = want.ID, want.Attributes // the name, as attribute host.name
		if !reflect.DeepEqual(*got, *want) {
			t.Fatalf("imported agent %s:\n%+v\nwant as its first report stores it:\n%+v", a.ID, *got, *want)
		}
	}
}
