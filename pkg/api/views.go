package api

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/myriarch/myriarch/pkg/audit"
	"github.com/myriarch/myriarch/pkg/policy"
	"github.com/myriarch/myriarch/pkg/progress"
	"github.com/myriarch/myriarch/pkg/rollout"
	"github.com/myriarch/myriarch/pkg/selector"
	"github.com/myriarch/myriarch/pkg/windows"
)

// The views are the wire shapes of api/openapi.yaml. They are built from
// the stored values and never carry what only the machinery needs (task
// tokens, executions, health bookkeeping, followUntil).

// rolloutView is the schema Rollout.
type rolloutView struct {
	ID             string            `json:"id"`
	Fleet          string            `json:"fleet"`
	Kind           policy.Kind       `json:"kind"`
	Status         rollout.Status    `json:"status"`
	StatusReason   string            `json:"statusReason,omitempty"`
	Origin         rollout.Origin    `json:"origin"`
	CreatedBy      string            `json:"createdBy,omitempty"`
	CreatedByActor string            `json:"createdByActor,omitempty"`
	RequestReason  string            `json:"requestReason,omitempty"`
	ToRef          string            `json:"toRef"`
	Executor       string            `json:"executor,omitempty"`
	Annotations    map[string]string `json:"annotations,omitempty"`
	CreatedAt      time.Time         `json:"createdAt"`
	StartedAt      *time.Time        `json:"startedAt,omitempty"`
	FinishedAt     *time.Time        `json:"finishedAt,omitempty"`
	Policy         policyView        `json:"policy"`
	Waves          []waveView        `json:"waves"`
	TargetCounts   *targetCounts     `json:"targetCounts,omitempty"`
	AckedFailures  []ackedView       `json:"ackedFailures"`
}

type policyView struct {
	Name               string           `json:"name"`
	Path               string           `json:"path,omitempty"`
	Commit             string           `json:"commit,omitempty"`
	BuiltIn            bool             `json:"builtIn"`
	Kind               policy.Kind      `json:"kind"`
	Waves              []policy.Wave    `json:"waves"`
	MaxConcurrent      int              `json:"maxConcurrent"`
	HealthWait         string           `json:"healthWait"`
	HealthWaitSeconds  int64            `json:"healthWaitSeconds"`
	ApplyTimeout       string           `json:"applyTimeout"`
	OfflineGracePeriod string           `json:"offlineGracePeriod"`
	FailureThreshold   policy.Threshold `json:"failureThreshold"`
	OnFailure          policy.OnFailure `json:"onFailure"`
	TimezoneAttribute  string           `json:"timezoneAttribute"`
	DefaultTimezone    string           `json:"defaultTimezone,omitempty"`
	MaintenanceWindows []windows.Window `json:"maintenanceWindows,omitempty"`
	Source             string           `json:"source"`
}

type waveView struct {
	Index           int                `json:"index"`
	Name            string             `json:"name"`
	Percent         int                `json:"percent,omitempty"`
	Selector        *selector.Selector `json:"selector,omitempty"`
	RequireApproval bool               `json:"requireApproval,omitempty"`
	Implicit        bool               `json:"implicit,omitempty"`
	Status          rollout.WaveStatus `json:"status"`
	Approved        bool               `json:"approved,omitempty"`
	StartedAt       *time.Time         `json:"startedAt,omitempty"`
	FinishedAt      *time.Time         `json:"finishedAt,omitempty"`
	Total           *int               `json:"total,omitempty"`
	Counts          *targetCounts      `json:"counts,omitempty"`
	InHealthWait    *int               `json:"inHealthWait,omitempty"`
}

// targetCounts is the schema TargetCounts, keyed by target status.
type targetCounts struct {
	Pending       int `json:"pending"`
	WaitingWindow int `json:"waiting_window"`
	InProgress    int `json:"in_progress"`
	Verifying     int `json:"verifying"`
	Succeeded     int `json:"succeeded"`
	Failed        int `json:"failed"`
	Skipped       int `json:"skipped"`
	Cancelled     int `json:"cancelled"`
	RolledBack    int `json:"rolled_back"`
}

func (c *targetCounts) add(s rollout.TargetStatus) {
	switch s {
	case rollout.TargetPending:
		c.Pending++
	case rollout.TargetWaitingWindow:
		c.WaitingWindow++
	case rollout.TargetInProgress:
		c.InProgress++
	case rollout.TargetVerifying:
		c.Verifying++
	case rollout.TargetSucceeded:
		c.Succeeded++
	case rollout.TargetFailed:
		c.Failed++
	case rollout.TargetSkipped:
		c.Skipped++
	case rollout.TargetCancelled:
		c.Cancelled++
	case rollout.TargetRolledBack:
		c.RolledBack++
	}
}

type ackedView struct {
	Wave     int      `json:"wave"`
	Attempts []string `json:"attempts"`
}

// newRolloutView is the rollout without target counts (listRollouts).
func newRolloutView(r rollout.Rollout, names Directory) rolloutView {
	actor := createdByActor(r)
	v := rolloutView{
		ID: r.ID, Fleet: r.Fleet, Kind: r.Kind, Status: r.Status, StatusReason: r.StatusReason, Origin: r.Origin,
		CreatedByActor: actor, CreatedBy: names.DisplayName(actor), RequestReason: r.RequestReason,
		ToRef: r.ToRef, Executor: r.Executor, Annotations: r.Annotations,
		CreatedAt: r.CreatedAt.UTC(), StartedAt: utcPtr(r.StartedAt), FinishedAt: utcPtr(r.FinishedAt),
		Policy: newPolicyView(r.Policy), Waves: make([]waveView, len(r.Waves)), AckedFailures: ackedViews(r.AckedFailures),
	}
	if actor == "" {
		v.CreatedBy = ""
	}
	for i, w := range r.Waves {
		v.Waves[i] = waveView{Index: w.Index, Name: w.Name, Percent: w.Percent, Selector: w.Selector,
			RequireApproval: w.RequireApproval, Implicit: w.Implicit, Status: w.Status, Approved: w.Approved,
			StartedAt: utcPtr(w.StartedAt), FinishedAt: utcPtr(w.FinishedAt)}
	}
	return v
}

// newRolloutDetail adds what the rollout page shows per wave: the targets by
// status and the number in the health wait (verifying). The end of each
// wait is no field: the page adds policy.healthWait to verifiedAt.
func newRolloutDetail(r rollout.Rollout, ts []rollout.Target, names Directory) rolloutView {
	v := newRolloutView(r, names)
	all := targetCounts{}
	per := make([]targetCounts, len(v.Waves))
	for _, t := range ts {
		all.add(t.Status)
		if t.Wave >= 0 && t.Wave < len(per) {
			per[t.Wave].add(t.Status)
		}
	}
	for i := range v.Waves {
		c := per[i]
		total, wait := total(c), c.Verifying
		v.Waves[i].Counts, v.Waves[i].Total, v.Waves[i].InHealthWait = &c, &total, &wait
	}
	v.TargetCounts = &all
	return v
}

func total(c targetCounts) int {
	return c.Pending + c.WaitingWindow + c.InProgress + c.Verifying + c.Succeeded + c.Failed + c.Skipped + c.Cancelled + c.RolledBack
}

// createdByActor is the actor reference of the rollout: the stored one,
// else gitops or system after the origin.
func createdByActor(r rollout.Rollout) string {
	switch {
	case r.CreatedBy != "":
		return r.CreatedBy
	case r.Origin == rollout.OriginGitOps:
		return audit.ActorGitOps
	case r.Origin == rollout.OriginSystem:
		return string(rollout.OriginSystem)
	}
	return ""
}

func ackedViews(m map[int][]string) []ackedView {
	out := []ackedView{}
	for w, as := range m {
		out = append(out, ackedView{Wave: w, Attempts: append([]string{}, as...)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Wave < out[j].Wave })
	return out
}

func newPolicyView(s policy.Snapshot) policyView {
	hw := s.HealthWait
	if hw <= 0 {
		hw = policy.DefaultHealthWait // the rule of the spec for a snapshot without a value
	}
	waves := s.Waves
	if waves == nil {
		waves = []policy.Wave{}
	}
	return policyView{
		Name: s.Name, Path: s.Path, Commit: s.Commit, BuiltIn: s.BuiltIn, Kind: s.Kind, Waves: waves,
		MaxConcurrent: s.MaxConcurrent, HealthWait: hw.String(), HealthWaitSeconds: int64(hw / time.Second),
		ApplyTimeout: s.ApplyTimeout.String(), OfflineGracePeriod: s.OfflineGracePeriod.String(),
		FailureThreshold: s.FailureThreshold, OnFailure: s.OnFailure, TimezoneAttribute: s.TimezoneAttribute,
		DefaultTimezone: s.DefaultTimezone, MaintenanceWindows: s.MaintenanceWindows, Source: policySource(s, hw),
	}
}

// policySource is the line the rollout page shows where a health wait comes
// from (spec rollouts.md, "Health wait"):
//
//	Policy canary-then-all · healthWait 5m · policies/canary-then-all.yaml@9f3c2a17
//	Policy default · healthWait 1m · built-in policy
//
// A full commit id is shortened to its first 8 digits, as Git shows it.
func policySource(s policy.Snapshot, healthWait time.Duration) string {
	where := "built-in policy"
	if !s.BuiltIn {
		where = s.Path
		if s.Commit != "" {
			where += "@" + shortCommit(s.Commit)
		}
	}
	line := fmt.Sprintf("Policy %s · healthWait %s", s.Name, shortDuration(healthWait))
	if where != "" {
		line += " · " + where
	}
	return line
}

var fullCommit = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

func shortCommit(c string) string {
	if fullCommit.MatchString(c) {
		return c[:8]
	}
	return c
}

// shortDuration writes a duration as a person does: 5m, 30s, 1h30m, 90ms.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// targetView is the schema RolloutTarget.
type targetView struct {
	RolloutID   string                   `json:"rolloutId"`
	AgentID     string                   `json:"agentId"`
	Wave        int                      `json:"wave"`
	Status      rollout.TargetStatus     `json:"status"`
	Reason      string                   `json:"reason,omitempty"`
	ReasonCode  string                   `json:"reasonCode,omitempty"`
	Attempt     int                      `json:"attempt"`
	FromRef     string                   `json:"fromRef"`
	ToRef       string                   `json:"toRef"`
	StartedAt   *time.Time               `json:"startedAt,omitempty"`
	VerifiedAt  *time.Time               `json:"verifiedAt,omitempty"`
	FinishedAt  *time.Time               `json:"finishedAt,omitempty"`
	ExternalRef string                   `json:"externalRef,omitempty"`
	Progress    *progress.TargetProgress `json:"progress,omitempty"`
}

// newTargetView normalizes the progress for reading (a target ended from
// outside shows a consistent final picture) and drops followUntil, which is
// the engine's bookkeeping and no part of the schema.
func newTargetView(t rollout.Target) targetView {
	v := targetView{
		RolloutID: t.RolloutID, AgentID: t.AgentID, Wave: t.Wave, Status: t.Status, Reason: t.Reason, ReasonCode: t.ReasonCode,
		Attempt: t.Attempt, FromRef: t.FromRef, ToRef: t.ToRef, StartedAt: utcPtr(t.StartedAt), VerifiedAt: utcPtr(t.VerifiedAt),
		FinishedAt: utcPtr(t.FinishedAt), ExternalRef: t.ExternalRef,
	}
	if p := progress.Normalize(t.Progress, string(t.Status)); p != nil {
		q := *p
		q.FollowUntil = nil
		q.UpdatedAt = q.UpdatedAt.UTC()
		v.Progress = &q
	}
	return v
}

// rolloutSummaryView is the schema RolloutSummary.
type rolloutSummaryView struct {
	ID        string         `json:"id"`
	Fleet     string         `json:"fleet"`
	Kind      policy.Kind    `json:"kind"`
	Status    rollout.Status `json:"status"`
	Origin    rollout.Origin `json:"origin"`
	ToRef     string         `json:"toRef"`
	CreatedBy string         `json:"createdBy,omitempty"`
	CreatedAt time.Time      `json:"createdAt"`
}

func newSummary(r rollout.Rollout, names Directory) rolloutSummaryView {
	v := rolloutSummaryView{ID: r.ID, Fleet: r.Fleet, Kind: r.Kind, Status: r.Status, Origin: r.Origin, ToRef: r.ToRef, CreatedAt: r.CreatedAt.UTC()}
	if a := createdByActor(r); a != "" {
		v.CreatedBy = names.DisplayName(a)
	}
	return v
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
