package storecontract

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/audit"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/page"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/releases"
	"github.com/myriarch/myriarch/core/revision"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/selection"
)

var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// newRollout is a pending configuration rollout of fleet on kind k with n
// targets over two waves (wave = i % 2).
func newRollout(id, fleetName string, k policy.Kind, n int, created time.Time) (rollout.Rollout, []rollout.Target) {
	r := rollout.Rollout{ID: id, Fleet: fleetName, Kind: k, Status: rollout.Pending, ToRef: "h1",
		Origin: rollout.OriginGitOps, CreatedAt: created, Policy: policy.BuiltIn(k),
		Waves: []rollout.Wave{{Index: 0, Name: "w0", Status: rollout.WavePending}, {Index: 1, Name: "w1", Status: rollout.WavePending}}}
	ts := make([]rollout.Target, n)
	for i := range ts {
		ts[i] = rollout.Target{RolloutID: id, AgentID: fmt.Sprintf("a%05d", i), Wave: i % 2, Status: rollout.TargetPending,
			Attempt: 1, FromRef: "h0", ToRef: "h1"}
	}
	return r, ts
}

func create(t *testing.T, s Store, id, fleetName string, k policy.Kind, n int, created time.Time) (rollout.Rollout, []rollout.Target) {
	t.Helper()
	r, ts := newRollout(id, fleetName, k, n, created)
	must(t, s.CreateRollout(t.Context(), r, ts))
	r, ts, err := s.LoadRollout(t.Context(), id)
	must(t, err)
	return r, ts
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantConflict(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, rollout.ErrConflict) {
		t.Fatalf("%s: %v, want rollout.ErrConflict", what, err)
	}
}

func createStoresVersionOne(t *testing.T, s Store) {
	r, ts := create(t, s, "r-1", "edge", policy.KindConfig, 4, t0)
	if r.Version != 1 || len(ts) != 4 {
		t.Fatalf("rollout version %d with %d targets, want version 1 with 4", r.Version, len(ts))
	}
	for _, tg := range ts {
		if tg.Version != 1 {
			t.Fatalf("target %s version %d, want 1", tg.AgentID, tg.Version)
		}
	}
	if _, err := s.GetRollout(t.Context(), "r-none"); err == nil {
		t.Fatal("an unknown rollout was found")
	}
}

func oneActivePerFleetAndKind(t *testing.T, s Store) {
	ctx := t.Context()
	create(t, s, "r-1", "edge", policy.KindConfig, 2, t0)
	second, ts := newRollout("r-2", "edge", policy.KindConfig, 2, t0.Add(time.Minute))
	wantConflict(t, "a second active config rollout of edge", s.CreateRollout(ctx, second, ts))
	if _, err := s.GetRollout(ctx, "r-2"); err == nil {
		t.Fatal("the refused rollout was stored")
	}
	if a, err := s.ActiveRollout(ctx, "edge", policy.KindConfig); err != nil || a == nil || a.Rollout.ID != "r-1" {
		t.Fatalf("active rollout %+v (%v), want r-1", a, err)
	}
	create(t, s, "r-3", "edge", policy.KindVersion, 2, t0) // the other kind has a lock of its own
	create(t, s, "r-4", "core", policy.KindConfig, 2, t0)  // and so has another fleet
}

func lockReleasedAtTheEnd(t *testing.T, s Store) {
	ctx := t.Context()
	r, _ := create(t, s, "r-1", "edge", policy.KindConfig, 2, t0)
	r.Status = rollout.Failed // not final: it keeps the lock
	must(t, s.SaveEvaluation(ctx, r, nil))
	next, ts := newRollout("r-2", "edge", policy.KindConfig, 2, t0.Add(time.Minute))
	wantConflict(t, "a new rollout beside a failed one", s.CreateRollout(ctx, next, ts))
	r, _, err := s.LoadRollout(ctx, "r-1")
	must(t, err)
	r.Status = rollout.Aborted
	must(t, s.SaveEvaluation(ctx, r, nil))
	must(t, s.CreateRollout(ctx, next, ts))
	if a, err := s.ActiveRollout(ctx, "edge", policy.KindConfig); err != nil || a == nil || a.Rollout.ID != "r-2" {
		t.Fatalf("active rollout %+v (%v), want r-2", a, err)
	}
}

func staleRolloutWritesNothing(t *testing.T, s Store) {
	ctx := t.Context()
	r, ts := create(t, s, "r-1", "edge", policy.KindConfig, 2, t0)
	r.Status = rollout.Running
	must(t, s.SaveEvaluation(ctx, r, nil)) // version 1 → 2
	stale := r                             // still version 1
	stale.Status = rollout.Paused
	ts[0].Status = rollout.TargetInProgress
	wantConflict(t, "a pass on version 1 of version 2", s.SaveEvaluation(ctx, stale, ts[:1]))
	got, gotTs, err := s.LoadRollout(ctx, "r-1")
	must(t, err)
	if got.Version != 2 || got.Status != rollout.Running || gotTs[0].Status != rollout.TargetPending || gotTs[0].Version != 1 {
		t.Fatalf("after the lost race: rollout %s v%d, target %s v%d; want running v2, pending v1",
			got.Status, got.Version, gotTs[0].Status, gotTs[0].Version)
	}
}

func staleTargetWritesNothing(t *testing.T, s Store) {
	ctx := t.Context()
	r, ts := create(t, s, "r-1", "edge", policy.KindConfig, 3, t0)
	ts[0].Status = rollout.TargetInProgress
	must(t, s.SaveEvaluation(ctx, r, ts[:1])) // rollout v2, target 0 v2
	r, _, err := s.LoadRollout(ctx, "r-1")
	must(t, err)
	// The rollout's version is current, target 0's is not: nothing of the
	// pass may be written, neither target 1 nor the rollout.
	ts[0].Status, ts[1].Status, r.Status = rollout.TargetSucceeded, rollout.TargetInProgress, rollout.Running
	wantConflict(t, "a pass with a stale target", s.SaveEvaluation(ctx, r, ts[:2]))
	got, gotTs, err := s.LoadRollout(ctx, "r-1")
	must(t, err)
	if got.Version != 2 || got.Status != rollout.Pending || gotTs[0].Status != rollout.TargetInProgress || gotTs[1].Status != rollout.TargetPending {
		t.Fatalf("after the refused pass: rollout %s v%d, targets %s, %s; want pending v2, in_progress, pending",
			got.Status, got.Version, gotTs[0].Status, gotTs[1].Status)
	}
}

// follow reads every page of a listing with limit, checking each page's
// size, and returns the items in order.
func follow[T any](t *testing.T, limit int, list func(token string) (page.Page[T], error)) []T {
	t.Helper()
	var out []T
	token := ""
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatal("the listing does not end")
		}
		p, err := list(token)
		must(t, err)
		if len(p.Items) > limit {
			t.Fatalf("a page of %d items, limit %d", len(p.Items), limit)
		}
		out = append(out, p.Items...)
		if token = p.Next; token == "" {
			return out
		}
	}
}

func targetsFollowToTheEnd(t *testing.T, s Store) {
	ctx := t.Context()
	create(t, s, "r-1", "edge", policy.KindConfig, 25, t0)
	all := follow(t, 7, func(token string) (page.Page[rollout.Target], error) {
		return s.TargetsPage(ctx, "r-1", rollout.AllWaves, token, 7)
	})
	if len(all) != 25 {
		t.Fatalf("%d targets, want 25", len(all))
	}
	seen := map[string]bool{}
	for i, tg := range all {
		if seen[tg.AgentID] {
			t.Fatalf("target %s listed twice", tg.AgentID)
		}
		seen[tg.AgentID] = true
		if i > 0 && (all[i-1].Wave > tg.Wave || all[i-1].Wave == tg.Wave && all[i-1].AgentID > tg.AgentID) {
			t.Fatalf("target %d (%d/%s) out of wave, agent order", i, tg.Wave, tg.AgentID)
		}
	}
	wave1 := follow(t, 5, func(token string) (page.Page[rollout.Target], error) {
		return s.TargetsPage(ctx, "r-1", 1, token, 5)
	})
	if len(wave1) != 12 || wave1[0].Wave != 1 {
		t.Fatalf("%d targets of wave 1, want 12", len(wave1))
	}
}

func rolloutsNewestFirst(t *testing.T, s Store) {
	ctx := t.Context()
	fleets := []string{"f0", "f1", "f2", "f3", "f4", "f5", "f6"}
	for i, f := range fleets {
		create(t, s, fmt.Sprintf("r-%d", i), f, policy.KindConfig, 1, t0.Add(time.Duration(i)*time.Minute))
	}
	all := follow(t, 3, func(token string) (page.Page[rollout.Rollout], error) {
		return s.RolloutsPage(ctx, "", "", token, 3)
	})
	if len(all) != len(fleets) {
		t.Fatalf("%d rollouts, want %d", len(all), len(fleets))
	}
	for i, r := range all {
		if want := fmt.Sprintf("r-%d", len(fleets)-1-i); r.ID != want {
			t.Fatalf("rollout %d is %s, want %s (newest first)", i, r.ID, want)
		}
	}
	one, err := s.RolloutsPage(ctx, "f3", policy.KindConfig, "", 10)
	must(t, err)
	if len(one.Items) != 1 || one.Items[0].ID != "r-3" || one.Next != "" {
		t.Fatalf("rollouts of f3: %+v", one)
	}
}

func auditNewestFirst(t *testing.T, s Store) {
	ctx := t.Context()
	var es []audit.Entry
	for i := range 9 {
		es = append(es, audit.Entry{At: t0.Add(time.Duration(i) * time.Second), Actor: "user:alice", Action: "fleet.select-version",
			TargetType: "fleet", TargetID: "edge", Result: audit.ResultSuccess, Details: map[string]any{"n": i}})
	}
	must(t, s.AppendAudit(ctx, es))
	must(t, s.AppendAudit(ctx, []audit.Entry{{At: t0, Actor: "user:bob", Action: "fleet.select-version", TargetType: "fleet", TargetID: "core", Result: audit.ResultSuccess}}))
	all := follow(t, 4, func(token string) (page.Page[audit.Entry], error) {
		return s.AuditOf(ctx, "fleet", "edge", token, 4)
	})
	if len(all) != 9 {
		t.Fatalf("%d entries of edge, want 9", len(all))
	}
	for i := 1; i < len(all); i++ {
		if all[i].At.After(all[i-1].At) {
			t.Fatalf("entry %d is newer than entry %d", i, i-1)
		}
	}
}

func foreignTokenIsBadToken(t *testing.T, s Store) {
	ctx := t.Context()
	create(t, s, "r-1", "edge", policy.KindConfig, 3, t0)
	for what, err := range map[string]error{
		"targets":  second(s.TargetsPage(ctx, "r-1", rollout.AllWaves, "forged", 10)),
		"rollouts": second(s.RolloutsPage(ctx, "", "", "forged", 10)),
		"audit":    second(s.AuditOf(ctx, "fleet", "edge", "forged", 10)),
	} {
		if !errors.Is(err, page.ErrBadToken) {
			t.Errorf("%s with a forged token: %v, want page.ErrBadToken", what, err)
		}
	}
}

func second[T any](_ T, err error) error { return err }

func selectionCompareAndSet(t *testing.T, s Store) {
	ctx := t.Context()
	sel := func(rev int64, v string) *selection.Selection {
		return &selection.Selection{Fleet: "edge", Version: v, Revision: rev, SelectedBy: "user:alice", SelectedAt: t0}
	}
	must(t, s.SaveSelection(ctx, "edge", sel(1, "0.160.0"), 0))
	wantConflict(t, "a second first selection", s.SaveSelection(ctx, "edge", sel(1, "0.161.0"), 0))
	must(t, s.SaveSelection(ctx, "edge", sel(2, "0.162.0"), 1))
	wantConflict(t, "a selection on a stale revision", s.SaveSelection(ctx, "edge", sel(2, "0.163.0"), 1))
	wantConflict(t, "a delete on a stale revision", s.SaveSelection(ctx, "edge", nil, 1))
	got, err := s.Selection(ctx, "edge")
	must(t, err)
	if got == nil || got.Revision != 2 || got.Version != "0.162.0" {
		t.Fatalf("selection %+v, want revision 2 of 0.162.0", got)
	}
	must(t, s.SaveSelection(ctx, "edge", nil, 2))
	if got, err := s.Selection(ctx, "edge"); err != nil || got != nil {
		t.Fatalf("a deleted selection: %+v (%v)", got, err)
	}
}

func concurrentApplies(t *testing.T, s Store) {
	ctx := t.Context()
	const n = 4
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			rev := revision.Revision{Commit: fmt.Sprintf("c%d", i), Fleets: []fleet.Fleet{{Name: "edge"}}}
			errs[i] = s.PutRevision(context.WithoutCancel(ctx), rev, t0.Add(time.Duration(i)*time.Second))
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, rollout.ErrConflict):
			t.Fatalf("a concurrent apply: %v, want success or rollout.ErrConflict", err)
		}
	}
	p, err := s.CurrentRevision(ctx)
	must(t, err)
	if won == 0 || p == nil || p.Version != int64(won) {
		t.Fatalf("%d applies won, pointer %+v: want its counter to count every win", won, p)
	}
}

func staleRelease(t *testing.T, s Store) {
	ctx := t.Context()
	r := releases.Release{Distribution: "otelcol-contrib", Version: "0.171.0", Platforms: []string{"linux/amd64"},
		Source: releases.SourceAdmin, UpdatedAt: &t0, UpdatedBy: "user:alice"}
	must(t, s.PutRelease(ctx, r, 0))
	wantConflict(t, "a second first put", s.PutRelease(ctx, r, 0))
	must(t, s.PutRelease(ctx, r, 1))
	got, err := s.GetRelease(ctx, "otelcol-contrib", "0.171.0")
	must(t, err)
	if got == nil || got.Revision != 2 {
		t.Fatalf("release %+v, want revision 2", got)
	}
}
