package store

import (
	"context"
	"errors"
	"fmt"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/enginetask"
	"github.com/myriarch/myriarch/core/page"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

func TestRollout_CreateLoadAndActive(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	r, ts := newRollout("r1", 6, 2, t0)
	must(t, s.CreateRollout(ctx, r, ts))

	got, gotTs, err := s.LoadRollout(ctx, "r1")
	must(t, err)
	if got.Version != 1 || got.Status != rollout.Pending || got.ToRef != "h1" || len(got.Waves) != 2 || got.Policy.Name != r.Policy.Name {
		t.Fatalf("rollout %+v", got)
	}
	if len(gotTs) != 6 || gotTs[0].Wave != 0 || gotTs[5].Wave != 1 || gotTs[0].Version != 1 || gotTs[0].AgentID != "a00000" {
		t.Fatalf("targets %+v, want 6 in wave order with version 1", gotTs)
	}
	a, err := s.ActiveRollout(ctx, "edge", policy.KindConfig)
	must(t, err)
	if a == nil || a.Rollout.ID != "r1" || len(a.Targets) != 6 {
		t.Fatalf("active %+v", a)
	}
	if a, err := s.ActiveRollout(ctx, "edge", policy.KindVersion); err != nil || a != nil {
		t.Fatalf("active version rollout %+v %v, want none", a, err)
	}
	if _, err := s.GetRollout(ctx, "r-missing"); !errors.Is(err, enginetask.ErrRolloutNotFound) {
		t.Fatalf("missing rollout: %v, want ErrRolloutNotFound", err)
	}
	if _, err := s.GetRollout(ctx, lockID("edge", policy.KindConfig)); !errors.Is(err, enginetask.ErrRolloutNotFound) {
		t.Fatalf("a lock item is no rollout: %v", err)
	}
}

func TestRollout_TargetsOfAWave(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	r, ts := newRollout("r1", 9, 3, t0)
	must(t, s.CreateRollout(ctx, r, ts))
	p, err := s.TargetsPage(ctx, "r1", 1, "", 0)
	must(t, err)
	if len(p.Items) != 3 || p.Next != "" {
		t.Fatalf("wave 1: %d targets next %q, want 3 and no next page", len(p.Items), p.Next)
	}
	for _, tg := range p.Items {
		if tg.Wave != 1 {
			t.Fatalf("target %s of wave %d in the page of wave 1", tg.AgentID, tg.Wave)
		}
	}
	if _, err := s.TargetsPage(ctx, "r1", rollout.AllWaves, "not-a-token", 10); !errors.Is(err, page.ErrBadToken) {
		t.Fatalf("bad token: %v", err)
	}
	// Tokens that decode but that no listing issued: DynamoDB refuses their
	// start keys, and the caller gets page.ErrBadToken, not a fault.
	forged := encodeToken(map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "x"}})
	if _, err := s.TargetsPage(ctx, "r1", rollout.AllWaves, forged, 10); !errors.Is(err, page.ErrBadToken) {
		t.Fatalf("forged targets token: %v", err)
	}
	if _, err := s.RolloutsPage(ctx, "", "", forged, 10); !errors.Is(err, page.ErrBadToken) {
		t.Fatalf("forged rollouts token: %v", err)
	}
	if _, err := s.AuditOf(ctx, "rollout", "r1", forged, 10); !errors.Is(err, page.ErrBadToken) {
		t.Fatalf("forged audit token: %v", err)
	}
}

// Paging of a rollout with 5,000 targets: every target once, in wave order.
func TestRollout_Paging5000Targets(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	r, ts := newRollout("big", 5000, 3, t0)
	must(t, s.CreateRollout(ctx, r, ts))

	seen := map[string]bool{}
	pages, lastKey, token := 0, "", ""
	for {
		p, err := s.TargetsPage(ctx, "big", rollout.AllWaves, token, 1000)
		must(t, err)
		pages++
		for _, tg := range p.Items {
			key := fmt.Sprintf("%05d#%s", tg.Wave, tg.AgentID)
			if key <= lastKey || seen[tg.AgentID] {
				t.Fatalf("target %s out of order or repeated after %s", key, lastKey)
			}
			seen[tg.AgentID], lastKey = true, key
		}
		if token = p.Next; token == "" {
			break
		}
	}
	if len(seen) != 5000 || pages < 5 {
		t.Fatalf("%d targets in %d pages, want 5000 in at least 5", len(seen), pages)
	}
	_, all, err := s.LoadRollout(ctx, "big")
	must(t, err)
	if len(all) != 5000 {
		t.Fatalf("LoadRollout: %d targets, want 5000", len(all))
	}
	wave2, token := 0, ""
	for {
		p, err := s.TargetsPage(ctx, "big", 2, token, 700)
		must(t, err)
		wave2 += len(p.Items)
		if token = p.Next; token == "" {
			break
		}
	}
	if wave2 != 1666 {
		t.Fatalf("wave 2: %d targets, want 1666", wave2)
	}
}

func TestRollout_ListingsNewestFirst(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	create := func(id, fleet string, k policy.Kind, hour int) {
		r, ts := newRollout(id, 1, 1, t0.Add(time.Duration(hour)*time.Hour))
		r.Fleet, r.Kind, ts[0].AgentID = fleet, k, id+"-agent"
		must(t, s.CreateRollout(ctx, r, ts))
		r.Version, r.Status = 1, rollout.Completed // final: releases the lock for the next
		must(t, s.SaveEvaluation(ctx, r, nil))
	}
	for i := 0; i < 5; i++ {
		create(fmt.Sprintf("c%d", i), "edge", policy.KindConfig, 2*i)
	}
	create("v1", "edge", policy.KindVersion, 3)
	create("o1", "core", policy.KindConfig, 5)
	tests := []struct {
		fleet string
		kind  policy.Kind
		want  string
	}{
		{fleet: "edge", kind: policy.KindConfig, want: "c4,c3,c2,c1,c0"},
		{fleet: "edge", kind: "", want: "c4,c3,c2,v1,c1,c0"}, // both kinds, core's o1 filtered out
		{fleet: "", kind: policy.KindVersion, want: "v1"},
		{fleet: "", kind: "", want: "c4,c3,o1,c2,v1,c1,c0"},
		{fleet: "core", kind: "", want: "o1"},
		{fleet: "gone", kind: policy.KindConfig, want: ""},
	}
	for _, tt := range tests {
		var ids []string
		token := ""
		for pages := 0; ; pages++ {
			p, err := s.RolloutsPage(ctx, tt.fleet, tt.kind, token, 2)
			must(t, err)
			if len(p.Items) > 2 || pages > 10 {
				t.Fatalf("%s/%s: page of %d, page %d", tt.fleet, tt.kind, len(p.Items), pages)
			}
			for _, r := range p.Items {
				ids = append(ids, r.ID)
			}
			if token = p.Next; token == "" {
				break
			}
		}
		if got := strings.Join(ids, ","); got != tt.want {
			t.Errorf("rollouts of %q/%q = %s, want %s", tt.fleet, tt.kind, got, tt.want)
		}
	}
}

// Two planners create the active rollout of one fleet and kind at once:
// exactly one succeeds, and the losers leave no targets behind.
func TestRollout_CreateRaceExactlyOneWins(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	const planners = 4
	errs := make([]error, planners)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < planners; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r, ts := newRollout(fmt.Sprintf("p%d", i), 30, 2, t0)
			<-start
			errs[i] = s.CreateRollout(ctx, r, ts)
		}(i)
	}
	close(start)
	wg.Wait()
	winners := 0
	for i, err := range errs {
		switch {
		case err == nil:
			winners++
		case !errors.Is(err, rollout.ErrConflict):
			t.Fatalf("planner %d: %v, want ErrConflict", i, err)
		default:
			p, perr := s.TargetsPage(ctx, fmt.Sprintf("p%d", i), rollout.AllWaves, "", 0)
			must(t, perr)
			if len(p.Items) != 0 {
				t.Fatalf("planner %d lost but left %d targets", i, len(p.Items))
			}
		}
	}
	if winners != 1 {
		t.Fatalf("%d planners created the active rollout, want exactly 1 (%v)", winners, errs)
	}
}

func TestRollout_LockFollowsTheStatus(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	r, ts := newRollout("r1", 2, 1, t0)
	must(t, s.CreateRollout(ctx, r, ts))
	r.Version, r.Status = 1, rollout.Failed // failed is not final: a person decides
	must(t, s.SaveEvaluation(ctx, r, nil))
	next, nts := newRollout("r2", 2, 1, t0.Add(time.Hour))
	if err := s.CreateRollout(ctx, next, nts); !errors.Is(err, rollout.ErrConflict) {
		t.Fatalf("create while r1 is failed: %v, want ErrConflict", err)
	}
	r.Version, r.Status = 2, rollout.Aborted
	must(t, s.SaveEvaluation(ctx, r, nil))
	if a, err := s.ActiveRollout(ctx, "edge", policy.KindConfig); err != nil || a != nil {
		t.Fatalf("active after abort: %+v %v, want none", a, err)
	}
	must(t, s.CreateRollout(ctx, next, nts))
	// Saving r1 again (final, no longer holding the lock) must neither fail
	// nor release r2's lock.
	r.Version, r.StatusReason = 3, "noted"
	must(t, s.SaveEvaluation(ctx, r, nil))
	if a, err := s.ActiveRollout(ctx, "edge", policy.KindConfig); err != nil || a == nil || a.Rollout.ID != "r2" {
		t.Fatalf("active after saving the aborted r1: %+v %v, want r2", a, err)
	}
}

// Two writers update the same rollout: the first wins, the second gets
// ErrConflict, re-reads through RetryOnConflict and sees the new version.
func TestRollout_TwoWritersOneWins(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	r, ts := newRollout("r1", 4, 1, t0)
	must(t, s.CreateRollout(ctx, r, ts))
	a, aTs, err := s.LoadRollout(ctx, "r1")
	must(t, err)
	b, bTs, err := s.LoadRollout(ctx, "r1")
	must(t, err)

	a.Status = rollout.Running
	aTs[0].Status = rollout.TargetInProgress
	must(t, s.SaveEvaluation(ctx, a, aTs[:1]))

	b.Status = rollout.Running
	bTs[1].Status = rollout.TargetInProgress // another target: only the rollout's version catches it
	if err := s.SaveEvaluation(ctx, b, bTs[1:2]); !errors.Is(err, rollout.ErrConflict) {
		t.Fatalf("second writer: %v, want ErrConflict", err)
	}
	attempts, sawVersion := 0, int64(0)
	must(t, RetryOnConflict(ctx, 3, func(ctx context.Context) error {
		attempts++
		b, bTs, err := s.LoadRollout(ctx, "r1")
		if err != nil {
			return err
		}
		sawVersion = b.Version
		bTs[1].Status = rollout.TargetInProgress
		return s.SaveEvaluation(ctx, b, bTs[1:2])
	}))
	got, gotTs, err := s.LoadRollout(ctx, "r1")
	must(t, err)
	if attempts != 1 || sawVersion != 2 || got.Version != 3 || gotTs[0].Status != rollout.TargetInProgress || gotTs[1].Status != rollout.TargetInProgress || gotTs[1].Version != 2 {
		t.Fatalf("after retry: attempts %d saw v%d, rollout v%d, targets %+v", attempts, sawVersion, got.Version, gotTs[:2])
	}
	// A stale target version alone is a conflict too.
	gotTs[0].Version = 1
	if err := s.SaveEvaluation(ctx, got, gotTs[:1]); !errors.Is(err, rollout.ErrConflict) {
		t.Fatalf("stale target: %v, want ErrConflict", err)
	}
}

// Many concurrent read-modify-writes of one rollout lose no update.
func TestRollout_ConcurrentWritersLoseNoUpdate(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	r, ts := newRollout("r1", 1, 1, t0)
	must(t, s.CreateRollout(ctx, r, ts))
	const writers = 6
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs <- RetryOnConflict(ctx, 50, func(ctx context.Context) error {
				cur, err := s.GetRollout(ctx, "r1")
				if err != nil {
					return err
				}
				cur.AckedFailures = copyAcked(cur.AckedFailures)
				cur.AckedFailures[0] = append(cur.AckedFailures[0], fmt.Sprintf("w%d#1", i))
				return s.SaveEvaluation(ctx, cur, nil)
			})
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		must(t, err)
	}
	got, err := s.GetRollout(ctx, "r1")
	must(t, err)
	if len(got.AckedFailures[0]) != writers || got.Version != 1+writers {
		t.Fatalf("after %d writers: %v at version %d", writers, got.AckedFailures[0], got.Version)
	}
}

func copyAcked(m map[int][]string) map[int][]string {
	out := map[int][]string{}
	for k, v := range m {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// A pass larger than one transaction is stored as a chain of transactions
// guarded by the rollout's counter.
func TestRollout_LargePassIsChained(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	r, ts := newRollout("r1", 250, 1, t0)
	must(t, s.CreateRollout(ctx, r, ts))
	cur, curTs, err := s.LoadRollout(ctx, "r1")
	must(t, err)
	stale := cur
	cur.Status = rollout.Running
	for i := range curTs {
		curTs[i].Status = rollout.TargetInProgress
	}
	must(t, s.SaveEvaluation(ctx, cur, curTs))
	got, gotTs, err := s.LoadRollout(ctx, "r1")
	must(t, err)
	if got.Status != rollout.Running || got.Version != 4 { // 1 + two intermediate links + the last
		t.Fatalf("rollout %s v%d, want running v4", got.Status, got.Version)
	}
	for _, tg := range gotTs {
		if tg.Status != rollout.TargetInProgress || tg.Version != 2 {
			t.Fatalf("target %s %s v%d, want in_progress v2", tg.AgentID, tg.Status, tg.Version)
		}
	}
	if err := s.SaveEvaluation(ctx, stale, curTs); !errors.Is(err, rollout.ErrConflict) || !strings.Contains(err.Error(), "0 of 250 targets stored") {
		t.Fatalf("stale large pass: %v, want ErrConflict with nothing stored", err)
	}
}

func TestRollout_Tokens(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	r, ts := newRollout("r1", 1, 1, t0)
	r.Status = rollout.WaitingApproval
	must(t, s.CreateRollout(ctx, r, ts))

	stored, err := s.ParkToken(ctx, "r1", "tok-1", rollout.Paused)
	if err != nil || stored {
		t.Fatalf("park as paused while waiting_approval: %v %v, want not stored", stored, err)
	}
	stored, err = s.ParkToken(ctx, "r1", "tok-1", rollout.WaitingApproval)
	if err != nil || !stored {
		t.Fatalf("park: %v %v", stored, err)
	}
	must(t, s.SetExecution(ctx, "r1", "arn:exec:2", 2))
	got, err := s.GetRollout(ctx, "r1")
	must(t, err)
	if got.TaskToken != "tok-1" || got.ExecutionArn != "arn:exec:2" || got.Executions != 2 || got.Version != 3 {
		t.Fatalf("rollout %+v", got)
	}
	must(t, s.ClearTaskToken(ctx, "r1", "tok-old")) // another token: it stays
	if got, _ := s.GetRollout(ctx, "r1"); got.TaskToken != "tok-1" {
		t.Fatalf("a stale clear removed token %q", got.TaskToken)
	}
	must(t, s.ClearTaskToken(ctx, "r1", "tok-1"))
	must(t, s.ClearTaskToken(ctx, "r-missing", "tok-1"))
	st, err := s.RecordFailure(ctx, "r1", "engine error X: boom", t0)
	if err != nil || st != rollout.Failed {
		t.Fatalf("record failure: %s %v", st, err)
	}
	got, err = s.GetRollout(ctx, "r1")
	must(t, err)
	if got.TaskToken != "" || got.Status != rollout.Failed || got.StatusReason != "engine error X: boom" {
		t.Fatalf("rollout %+v", got)
	}
}
