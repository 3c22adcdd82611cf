package store

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/audit"
	"github.com/myriarch/myriarch/core/executorobject"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/revision"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/selection"
)

func rev(commit string, fleets ...string) revision.Revision {
	r := revision.Revision{Commit: commit, Configs: map[string]revision.Config{},
		Policies: []policy.Policy{{Name: "cfg", Commit: commit}}}
	for _, f := range fleets {
		body := []byte("receivers: {} # " + f + "@" + commit)
		h := revision.Hash(body)
		r.Fleets = append(r.Fleets, fleet.Fleet{Name: f, Config: fleet.Config{Hash: h}, Collector: fleet.Collector{Version: "0.161.0"}})
		r.Configs[f] = revision.Config{Hash: h, Body: body}
	}
	return r
}

func TestRevision_PointerFleetsPoliciesConfigs(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	if f, commit, err := s.Fleet(ctx, "edge"); err != nil || f != nil || commit != "" {
		t.Fatalf("before any apply: %v %q %v", f, commit, err)
	}
	if ps, err := s.Policies(ctx); err != nil || len(ps) != 0 {
		t.Fatalf("policies before any apply: %v %v", ps, err)
	}
	c1 := rev("c1", "edge", "core")
	must(t, s.PutRevision(ctx, c1, t0))
	f, commit, err := s.Fleet(ctx, "edge")
	must(t, err)
	if f == nil || commit != "c1" || f.Config.Hash != c1.Configs["edge"].Hash || f.GitTarget() != "0.161.0" {
		t.Fatalf("fleet %+v at %q", f, commit)
	}
	body, ct, err := s.ConfigByHash(ctx, f.Config.Hash)
	if err != nil || ct != "text/yaml" || string(body) != string(c1.Configs["edge"].Body) {
		t.Fatalf("config %q %q %v", body, ct, err)
	}
	if _, _, err := s.ConfigByHash(ctx, "nope"); !errors.Is(err, ErrConfigNotFound) {
		t.Fatalf("missing config: %v", err)
	}
	ps, err := s.Policies(ctx)
	must(t, err)
	if len(ps) != 1 || ps["cfg"].Commit != "c1" {
		t.Fatalf("policies %+v", ps)
	}

	must(t, s.PutRevision(ctx, rev("c2", "edge"), t0.Add(time.Hour))) // core left Git
	if f, commit, err := s.Fleet(ctx, "core"); err != nil || f != nil || commit != "c2" {
		t.Fatalf("removed fleet: %+v %q %v", f, commit, err)
	}
	info, err := s.CurrentRevision(ctx)
	must(t, err)
	if info.Commit != "c2" || info.Previous != "c1" || !info.AppliedAt.Equal(t0.Add(time.Hour)) || info.Version != 2 {
		t.Fatalf("pointer %+v", info)
	}
	if items, err := s.queryAll(ctx, revisionPK("c1", "fleet")); err != nil || len(items) != 2 {
		t.Fatalf("the previous revision stays for late readers: %d items %v", len(items), err)
	}
	must(t, s.PutRevision(ctx, rev("c3", "edge"), t0.Add(2*time.Hour)))
	if items, err := s.queryAll(ctx, revisionPK("c1", "fleet")); err != nil || len(items) != 0 {
		t.Fatalf("the revision before the previous one is deleted: %d items %v", len(items), err)
	}
	// The same commit applied again with other content replaces its objects.
	must(t, s.PutRevision(ctx, rev("c3", "other"), t0.Add(3*time.Hour)))
	fs, commit, err := s.Fleets(ctx)
	must(t, err)
	if len(fs) != 1 || fs[0].Name != "other" || commit != "c3" {
		t.Fatalf("fleets after re-applying c3: %+v %q", fs, commit)
	}
	if info, _ := s.CurrentRevision(ctx); info.Previous != "c2" {
		t.Fatalf("re-applying the current commit keeps its previous: %+v", info)
	}
	if err := s.PutRevision(ctx, revision.Revision{}, t0); err == nil {
		t.Fatal("a revision without commit must be refused")
	}
}

// Executor objects are stored with their revision and replaced with it.
func TestRevision_ExecutorObjects(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	if objs, err := s.ExecutorObjects(ctx); err != nil || len(objs) != 0 {
		t.Fatalf("executor objects before any apply: %v %v", objs, err)
	}
	hook := executorobject.Object{Name: "edge-hook", Path: "executors/edge-hook.yaml", Commit: "c1", Type: executorobject.TypeWebhook,
		Webhook: &executorobject.Webhook{URL: "https://deploy.example.com/x", Method: "POST", Timeout: 10 * time.Second,
			RetryFor: 2 * time.Minute, SecretRef: "edge-hook", Headers: map[string]string{"X-Team": "obs"}}}
	c1 := rev("c1", "edge")
	c1.Executors = []executorobject.Object{hook}
	must(t, s.PutRevision(ctx, c1, t0))
	objs, err := s.ExecutorObjects(ctx)
	must(t, err)
	if got := objs["edge-hook"]; len(objs) != 1 || !reflect.DeepEqual(got, hook) {
		t.Fatalf("executor objects %+v, want %+v", objs, hook)
	}
	must(t, s.PutRevision(ctx, rev("c2", "edge"), t0.Add(time.Hour)))
	must(t, s.PutRevision(ctx, rev("c3", "edge"), t0.Add(2*time.Hour)))
	if objs, err := s.ExecutorObjects(ctx); err != nil || len(objs) != 0 {
		t.Fatalf("executor objects of a revision without them: %v %v", objs, err)
	}
	if items, err := s.queryAll(ctx, revisionPK("c1", kindExecutor)); err != nil || len(items) != 0 {
		t.Fatalf("the executor objects of the revision before the previous one are deleted: %d items %v", len(items), err)
	}
}

// Concurrent applies: every apply either moves the pointer or loses with
// ErrConflict, and the pointer names a revision that was applied whole.
func TestRevision_ConcurrentAppliesMovePointerOnce(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	must(t, s.PutRevision(ctx, rev("c0", "edge"), t0))
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs[i] = s.PutRevision(ctx, rev(fmt.Sprintf("c%d", i+1), "edge", fmt.Sprintf("f%d", i)), t0)
		}(i)
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
		} else if !errors.Is(err, rollout.ErrConflict) {
			t.Fatalf("apply: %v", err)
		}
	}
	info, err := s.CurrentRevision(ctx)
	must(t, err)
	fs, _, err := s.Fleets(ctx)
	must(t, err)
	if won < 1 || info.Version != int64(1+won) || len(fs) != 2 {
		t.Fatalf("%d applies won, pointer %+v with %d fleets", won, info, len(fs))
	}
}

func sel(version string, rev int64) *selection.Selection {
	return &selection.Selection{Fleet: "edge", Version: version, State: selection.Active, SelectedBy: "user:bob", SelectedAt: t0, UpdatedAt: t0, Revision: rev}
}

// The selection is a compare-and-set on its revision (a 409 for a stale view).
func TestSelection_CompareAndSet(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	steps := []struct {
		name     string
		next     *selection.Selection
		prev     int64
		conflict bool
	}{
		{name: "delete when none is stored", next: nil, prev: 0, conflict: false}, // the outcome is the same
		{name: "create", next: sel("0.162.0", 1), prev: 0, conflict: false},
		{name: "create again", next: sel("0.163.0", 1), prev: 0, conflict: true}, // one exists already
		{name: "update from a stale revision", next: sel("0.163.0", 3), prev: 2, conflict: true},
		{name: "update", next: sel("0.163.0", 2), prev: 1, conflict: false},
		{name: "delete at a stale revision", next: nil, prev: 1, conflict: true},
		{name: "delete", next: nil, prev: 2, conflict: false},
		{name: "create after the delete", next: sel("0.164.0", 1), prev: 0, conflict: false},
	}
	for _, st := range steps {
		err := s.SaveSelection(ctx, "edge", st.next, st.prev)
		if st.conflict != errors.Is(err, rollout.ErrConflict) || !st.conflict && err != nil {
			t.Fatalf("%s: %v, conflict want %v", st.name, err, st.conflict)
		}
	}
	got, err := s.Selection(ctx, "edge")
	must(t, err)
	if got == nil || got.Version != "0.164.0" || got.Revision != 1 || got.Fleet != "edge" {
		t.Fatalf("selection %+v", got)
	}
	if err := s.SaveSelection(ctx, "edge", sel("0.1.0", 5), 1); err == nil || errors.Is(err, rollout.ErrConflict) {
		t.Fatalf("a revision that does not follow: %v, want a plain error", err)
	}
	if got, err := s.Selection(ctx, "core"); err != nil || got != nil {
		t.Fatalf("no selection: %+v %v", got, err)
	}
}

// Concurrent selection changes from one revision: exactly one is stored.
func TestSelection_ConcurrentChangesOneWins(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	must(t, s.SaveSelection(ctx, "edge", sel("0.162.0", 1), 0))
	var wg sync.WaitGroup
	errs := make([]error, 5)
	for i := range errs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs[i] = s.SaveSelection(ctx, "edge", sel(fmt.Sprintf("0.16%d.0", 3+i), 2), 1)
		}(i)
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
		} else if !errors.Is(err, rollout.ErrConflict) {
			t.Fatal(err)
		}
	}
	if won != 1 {
		t.Fatalf("%d concurrent selections stored, want 1", won)
	}
}

func TestAudit_NewestFirstPaged(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	var es []audit.Entry
	for i := 0; i < 5; i++ {
		es = append(es, audit.Entry{At: t0.Add(time.Duration(i) * time.Minute), Actor: "gitops", Action: "rollout.create",
			TargetType: "fleet", TargetID: "edge", Result: audit.ResultSuccess, Details: map[string]any{"n": i}})
	}
	es = append(es, audit.Entry{At: t0, Actor: "gitops", Action: "rollout.create", TargetType: "fleet", TargetID: "core", Result: audit.ResultSuccess})
	must(t, s.AppendAudit(ctx, es))

	var got []string
	token := ""
	for {
		p, err := s.AuditOf(ctx, "fleet", "edge", token, 2)
		must(t, err)
		for _, e := range p.Items {
			if e.ID == "" || e.TargetID != "edge" {
				t.Fatalf("entry %+v", e)
			}
			got = append(got, fmt.Sprint(e.Details["n"]))
		}
		if token = p.Next; token == "" {
			break
		}
	}
	if strings.Join(got, ",") != "4,3,2,1,0" {
		t.Fatalf("audit of edge: %v, want newest first 4,3,2,1,0", got)
	}
}

// The audit log is append-only in the store as in IAM: an entry whose key
// is taken is refused, whoever repeats the id, and the stored entry keeps
// its content; entries without an id never collide.
func TestAudit_AppendNeverOverwrites(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	first := audit.Entry{ID: "20260302T100000.000000000Z-0000000000000001", At: t0, Actor: "user:a", Action: "rollout.approve",
		TargetType: "rollout", TargetID: "r-1", Result: audit.ResultSuccess, Details: map[string]any{"wave": "0"}}
	must(t, s.AppendAudit(ctx, []audit.Entry{first}))

	forged := first
	forged.Actor, forged.Details = "user:b", map[string]any{"wave": "1"}
	err := s.AppendAudit(ctx, []audit.Entry{forged})
	if !errors.Is(err, rollout.ErrConflict) {
		t.Fatalf("appending an entry with a taken id: %v, want ErrConflict", err)
	}

	twice := audit.Entry{At: t0, Actor: "system", Action: "rollout.approval_expire", TargetType: "rollout", TargetID: "r-1", Result: audit.ResultSuccess}
	must(t, s.AppendAudit(ctx, []audit.Entry{twice, twice})) // same instant, no id: two entries

	p, err := s.AuditOf(ctx, "rollout", "r-1", "", 10)
	must(t, err)
	if len(p.Items) != 3 {
		t.Fatalf("%d entries, want the first and the two without an id: %+v", len(p.Items), p.Items)
	}
	var got *audit.Entry
	for i, e := range p.Items {
		if e.ID == first.ID {
			got = &p.Items[i]
		}
	}
	if got == nil || got.Actor != "user:a" || got.Details["wave"] != "0" {
		t.Fatalf("entry %s is %+v, want it as first written", first.ID, got)
	}
}
