package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/myriarch/myriarch/pkg/client"
	"github.com/myriarch/myriarch/pkg/policy"
	"github.com/myriarch/myriarch/pkg/progress"
	"github.com/myriarch/myriarch/pkg/rollout"
)

// view is one picture of a rollout as the rollout page shows it, at now
// by the local clock. targets nil means they were not read (rollouts get).
type view struct {
	r        client.Rollout
	targets  []client.Target
	now      time.Time
	perGroup int // targets shown per status group; the rest is "… and K more"
}

// healthWait is the remaining health wait of one verifying target.
type healthWait struct {
	AgentID          string    `json:"agentId"`
	Wave             int       `json:"wave"`
	EndsAt           time.Time `json:"endsAt"`
	RemainingSeconds int64     `json:"remainingSeconds"` // 0: the wait is over, the engine finishes the target
}

// evaluated reports whether the engine evaluates a rollout in the status,
// so that the health waits of its targets count down. It does not for
// failed, rolling_back and the final statuses; the page shows no remaining
// time for them (spec rollouts.md, "Health wait").
func evaluated(s rollout.Status) bool {
	switch s {
	case rollout.Pending, rollout.Running, rollout.WaitingApproval, rollout.Paused:
		return true
	}
	return false
}

// healthWaits counts down the health wait of every verifying target: it
// ends at verifiedAt + the snapshot's healthWait (60 s when the snapshot
// has none); the API has no field for the end. The remaining time is
// rounded up to whole seconds, so that 0 means over ("finishing…"). It is
// empty for a rollout the engine does not evaluate.
func healthWaits(r client.Rollout, ts []client.Target, now time.Time) map[string]healthWait {
	out := map[string]healthWait{}
	if !evaluated(r.Status) {
		return out
	}
	wait := r.Policy.EffectiveHealthWait()
	for _, t := range ts {
		if t.Status != rollout.TargetVerifying || t.VerifiedAt == nil {
			continue
		}
		end := t.VerifiedAt.Add(wait)
		left := max(end.Sub(now), 0)
		out[t.AgentID] = healthWait{AgentID: t.AgentID, Wave: t.Wave, EndsAt: end.UTC(),
			RemainingSeconds: int64((left + time.Second - 1) / time.Second)}
	}
	return out
}

// text is "4m12s left", or "finishing…" at 0.
func (h healthWait) text() string {
	if h.RemainingSeconds <= 0 {
		return "finishing…"
	}
	return shortDuration(time.Duration(h.RemainingSeconds)*time.Second) + " left"
}

// writeHeader writes who and what the rollout is, and where its health
// wait comes from (the policy source line).
func (v view) writeHeader(w io.Writer) {
	r := v.r
	fmt.Fprintf(w, "Rollout %s · fleet %s · %s · %s\n", r.ID, r.Fleet, r.Kind, r.Status)
	if r.StatusReason != "" {
		fmt.Fprintf(w, "  %s\n", r.StatusReason)
	}
	line := fmt.Sprintf("  origin %s", r.Origin)
	if r.CreatedBy != "" {
		line += " · created by " + r.CreatedBy
	}
	line += " at " + stamp(&r.CreatedAt) + " · to " + shortRef(r.ToRef)
	if r.Executor != "" {
		line += " · executor " + r.Executor
	}
	fmt.Fprintln(w, line)
	if r.RequestReason != "" {
		fmt.Fprintf(w, "  reason: %s\n", r.RequestReason)
	}
	fmt.Fprintf(w, "  %s\n", r.Policy.Source)
}

// barWidth is the width of a wave's progress bar.
const barWidth = 20

// writeWaves writes one line per wave: status, a bar of the targets that
// reached a final status, the counts, and the wave card's health wait.
func (v view) writeWaves(w io.Writer) {
	fmt.Fprintln(w, "Waves")
	waits := healthWaits(v.r, v.targets, v.now)
	tw := table(w)
	var approve []int
	for _, wave := range v.r.Waves {
		var c client.TargetCounts
		if wave.Counts != nil {
			c = *wave.Counts
		}
		total := 0
		if wave.Total != nil {
			total = *wave.Total
		}
		done := total - c.Pending - c.WaitingWindow - c.InProgress - c.Verifying
		row(tw, fmt.Sprintf("  %d %s", wave.Index, wave.Name), string(wave.Status), fmt.Sprintf("%s %d/%d", bar(done, total), done, total),
			countsLine(c)+v.waveWait(wave, c, waits))
		if wave.Status == rollout.WaveWaitingApproval {
			approve = append(approve, wave.Index)
		}
	}
	_ = tw.Flush()
	for _, n := range approve {
		fmt.Fprintf(w, "  wave %d waits for approval: myrctl rollouts approve %s --wave %d\n", n, v.r.ID, n)
	}
}

// writeStages lists the stages of a rollout whose waves split by region or
// zone: each with its state, the batches done of its passes and, while it
// bakes, the time until the bake ends.
func (v view) writeStages(w io.Writer) {
	fmt.Fprintf(w, "Stages %s\n", v.r.Progress)
	tw := table(w)
	for _, st := range v.r.Stages {
		done, total := 0, 0
		for _, p := range st.Passes {
			total += p.Batches
			if p.BatchesDone != nil {
				done += *p.BatchesDone
			}
		}
		note := fmt.Sprintf("%d pass(es), batches %d/%d", len(st.Passes), done, total)
		if st.Status == rollout.StageBaking && st.BakeUntil != nil {
			if left := st.BakeUntil.Sub(v.now); left > 0 {
				note += " · bake ends in " + shortDuration(left.Round(time.Second))
			} else {
				note += " · bake over, finishing…"
			}
		}
		row(tw, "  "+st.Name, string(st.Status), note)
	}
	_ = tw.Flush()
}

// waveWait is the wave card's health wait: how many of its targets are in
// it and when the wait that ends last is over.
func (v view) waveWait(wave client.Wave, c client.TargetCounts, waits map[string]healthWait) string {
	if c.Verifying == 0 {
		return ""
	}
	var last *healthWait
	for _, h := range waits {
		if h.Wave == wave.Index && (last == nil || h.EndsAt.After(last.EndsAt)) {
			last = &h
		}
	}
	s := fmt.Sprintf(" · %d in health wait", c.Verifying)
	if last != nil {
		if last.RemainingSeconds > 0 {
			s += ", the last ends in " + shortDuration(time.Duration(last.RemainingSeconds)*time.Second)
		} else {
			s += ", finishing…"
		}
	}
	return s
}

// bar is [#####---------------]: the share of done in total.
func bar(done, total int) string {
	filled := 0
	if total > 0 {
		filled = done * barWidth / total
	}
	return "[" + strings.Repeat("#", filled) + strings.Repeat("-", barWidth-filled) + "]"
}

// writeTargets writes the targets grouped by status in the page's order,
// at most perGroup of each group.
func (v view) writeTargets(w io.Writer) {
	groups := map[rollout.TargetStatus][]client.Target{}
	for _, t := range v.targets {
		groups[t.Status] = append(groups[t.Status], t)
	}
	waits := healthWaits(v.r, v.targets, v.now)
	fmt.Fprintf(w, "Targets (%d)\n", len(v.targets))
	for _, s := range statusOrder {
		ts := groups[s]
		if len(ts) == 0 {
			continue
		}
		fmt.Fprintf(w, "  %s (%d)\n", statusTitle[s], len(ts))
		tw := table(w)
		for i, t := range ts {
			if v.perGroup > 0 && i == v.perGroup {
				break
			}
			row(tw, "    "+agentName(t), fmt.Sprintf("wave %d", t.Wave), v.detail(t, waits))
		}
		_ = tw.Flush()
		if more := len(ts) - v.perGroup; v.perGroup > 0 && more > 0 {
			fmt.Fprintf(w, "    … and %d more\n", more)
		}
	}
}

// detail is what the status column says of a target: the phase of a
// version target, the remaining health wait, how long it has been
// working, the reason of an end, the attempt after a retry.
func (v view) detail(t client.Target, waits map[string]healthWait) string {
	var parts []string
	if p := t.Progress; p != nil && v.r.Kind == policy.KindVersion {
		phase := string(p.Phase)
		if p.Phase == progress.PhaseDownloading && p.DownloadPercent > 0 {
			phase += fmt.Sprintf(" %d%%", p.DownloadPercent)
		}
		parts = append(parts, phase)
	}
	switch t.Status {
	case rollout.TargetVerifying:
		if h, ok := waits[t.AgentID]; ok {
			parts = append(parts, h.text())
		}
	case rollout.TargetInProgress:
		if t.StartedAt != nil && v.now.After(*t.StartedAt) {
			parts = append(parts, "for "+shortDuration(v.now.Sub(*t.StartedAt).Truncate(time.Second)))
		}
	}
	if t.Reason != "" {
		reason := t.Reason
		if t.ReasonCode != "" {
			reason += " (" + t.ReasonCode + ")"
		}
		parts = append(parts, reason)
	}
	if t.Attempt > 1 {
		parts = append(parts, fmt.Sprintf("attempt %d", t.Attempt))
	}
	return strings.Join(parts, " · ")
}
