package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/myriarch/myriarch/adapters/client"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/progress"
	"github.com/myriarch/myriarch/core/rollout"
)

// view is one picture of a rollout as the rollout page shows it, at now
// by the local clock. targets nil means they were not read (rollouts get).
type view struct {
	r        client.Rollout
	targets  []client.Target
	now      time.Time
	perGroup int // targets shown per status group; the rest is "… and K more"
	// operatorToken: the environment holds the local stack's operator
	// token (MYRIARCH_OPERATOR_TOKEN, from make run's export line) and
	// myrctl runs with another; the approval hint then shows how to use it.
	operatorToken bool
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
// time for them (docs/rollouts.md, "The health wait").
func evaluated(s rollout.Status) bool {
	switch s {
	case rollout.Pending, rollout.Running, rollout.WaitingApproval, rollout.Paused, rollout.Frozen:
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
	if by := createdByText(r); by != "" {
		line += " · created by " + by
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
	if o := r.FreezeOverride; o != nil {
		fmt.Fprintf(w, "  %s\n", overrideLine(*o))
	}
	if line := predictionLine(r.Prediction, v.now); line != "" {
		fmt.Fprintf(w, "  %s\n", line)
	}
	if line := windowLine(r, v.now); line != "" {
		fmt.Fprintf(w, "  %s\n", line)
	}
}

// windowLine says why nothing works now in a rollout whose targets left
// all wait for a maintenance window, and when the first starts by the
// prediction: "nothing progresses before 22:00 (in 7h): 17 targets wait
// for a maintenance window"; "" while a target works or for a rollout the
// engine does not evaluate.
func windowLine(r client.Rollout, now time.Time) string {
	c := r.TargetCounts
	if c == nil || c.WaitingWindow == 0 || c.InProgress+c.Verifying > 0 || !evaluated(r.Status) || r.Status == rollout.Paused {
		return ""
	}
	why := plural(c.WaitingWindow, "target") + " wait for a maintenance window"
	if c.WaitingWindow == 1 {
		why = "1 target waits for a maintenance window"
	}
	if pr := r.Prediction; pr != nil && pr.Start != nil && pr.Start.At != nil && pr.Start.At.After(now) {
		return "nothing progresses before " + clockText(*pr.Start.At, now) + ": " + why
	}
	return "nothing progresses now: " + why
}

// createdByText is who created the rollout, with those who applied the
// revision of a GitOps rollout, whom the rule of no self-approval counts
// as its creators too: "gitops (revision applied by local admin)".
func createdByText(r client.Rollout) string {
	if len(r.AppliedBy) == 0 {
		return r.CreatedBy
	}
	names := make([]string, len(r.AppliedBy))
	for i, d := range r.AppliedBy {
		names[i] = d.By
	}
	return cmp.Or(r.CreatedBy, "gitops") + " (revision applied by " + strings.Join(names, ", ") + ")"
}

// creator is one who may not approve a rollout, and why.
type creator struct{ name, actor, why string }

// creators are those the rule of no self-approval refuses: the rollout's
// creator when a person is (not gitops or system), and who applied its
// revision.
func creators(r client.Rollout) []creator {
	var out []creator
	if a := r.CreatedByActor; a != "" && a != "gitops" && a != string(rollout.OriginSystem) {
		out = append(out, creator{name: r.CreatedBy, actor: a, why: "created it"})
	}
	for _, d := range r.AppliedBy {
		if !slices.ContainsFunc(out, func(c creator) bool { return c.actor == d.ByActor }) {
			out = append(out, creator{name: d.By, actor: d.ByActor, why: "applied its revision"})
		}
	}
	return out
}

// whoMayApprove says who may approve wave w: "an operator or admin
// (rollouts:operate) other than local admin (applied its revision), Dana
// Operator (approved already)".
func whoMayApprove(r client.Rollout, w client.Wave) string {
	var not []string
	for _, c := range creators(r) {
		not = append(not, c.name+" ("+c.why+")")
	}
	for _, a := range w.Approvals {
		not = append(not, a.By+" (approved already)")
	}
	s := "who may approve: an operator or admin (rollouts:operate)"
	if len(not) > 0 {
		s += " other than " + strings.Join(not, ", ")
	}
	return s
}

// predictionLine is the predicted finish of a rollout the engine
// evaluates: "predicted finish 14:32 (in 12m) · pessimistic 14:40 (in
// 20m)", or "12m after the approval of wave 1"; "" without a prediction.
func predictionLine(pr *client.Prediction, now time.Time) string {
	switch {
	case pr == nil:
		return ""
	case !pr.Complete:
		return "no predicted finish: " + pr.Reason
	}
	line := "predicted finish " + whenText(pr.Finish, now)
	if p := whenText(pr.FinishPessimistic, now); p != whenText(pr.Finish, now) {
		line += " · pessimistic " + p
	}
	return line
}

// overrideLine is "freezes bypassed by Dana Operator at <time>: hotfix".
func overrideLine(o client.Decision) string {
	return "freezes bypassed by " + decided(o)
}

// decided is "Dana Operator at 2026-12-01T10:00:00Z: the reason".
func decided(d client.Decision) string {
	s := d.By + " at " + stamp(&d.At)
	if d.Reason != "" {
		s += ": " + d.Reason
	}
	return s
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
		row(tw, fmt.Sprintf("  %d %s", wave.Index, wave.Name), string(wave.Status), fmt.Sprintf("%s %d/%d", bar(done, failedOf(c), total), done, total),
			countsLine(c)+v.waveWait(wave, c, waits))
		if wave.Status == rollout.WaveWaitingApproval {
			approve = append(approve, wave.Index)
		}
	}
	_ = tw.Flush()
	for _, n := range approve {
		fmt.Fprintf(w, "  wave %d waits for approval: myrctl rollouts approve %s --wave %d\n", n, v.r.ID, n)
		if line := approvalsLine(v.r.Waves[n], v.now); line != "" {
			fmt.Fprintf(w, "    %s\n", line)
		}
		fmt.Fprintf(w, "    %s\n", whoMayApprove(v.r, v.r.Waves[n]))
		if v.operatorToken {
			fmt.Fprintf(w, "    with the local stack's operator token: MYRIARCH_TOKEN=$MYRIARCH_OPERATOR_TOKEN myrctl rollouts approve %s --wave %d\n", v.r.ID, n)
		}
	}
	for _, wave := range v.r.Waves {
		if d := wave.Rejected; d != nil && wave.Status == rollout.WaveFailed {
			fmt.Fprintf(w, "  wave %d %s · resume asks for its approval again\n", wave.Index, rejectedLine(*d))
		}
	}
}

// approvalsLine is what a wave that waits for approval has so far:
// "approvals 1/2 (Dana Operator) · expires in 71h"; "" for any other wave.
// The expiry counts with the local clock.
func approvalsLine(w client.Wave, now time.Time) string {
	if w.Status != rollout.WaveWaitingApproval || w.Approved {
		return ""
	}
	names := make([]string, len(w.Approvals))
	for i, a := range w.Approvals {
		names[i] = a.By
	}
	s := fmt.Sprintf("approvals %d/%d", len(w.Approvals), max(w.ApprovalsRequired, 1))
	if len(names) > 0 {
		s += " (" + strings.Join(names, ", ") + ")"
	}
	if w.ApprovalExpiresAt != nil {
		if left := w.ApprovalExpiresAt.Sub(now); left > 0 {
			s += " · expires in " + roughDuration(left)
		} else {
			s += " · expired"
		}
	}
	return s
}

// rejectedLine says what stopped a wave: "rejected by Sam Reviewer at
// <time>: not during the sale", or the expiry of its approval.
func rejectedLine(d client.Decision) string {
	if d.ByActor == "" && d.By == "system" {
		return "approval expired at " + stamp(&d.At)
	}
	return "rejected by " + decided(d)
}

// roughDuration is a wait as long as hours are counted in hours: 71h,
// 1h30m, 12m30s, 45s. It is truncated, so that it never promises more time
// than is left.
func roughDuration(d time.Duration) string {
	switch {
	case d >= 10*time.Hour:
		d = d.Truncate(time.Hour)
	case d >= time.Hour:
		d = d.Truncate(time.Minute)
	default:
		d = d.Truncate(time.Second)
	}
	return shortDuration(d)
}

// writeStages lists the stages of a rollout in stages: each with its
// state, the batches done of its passes and, while it bakes, the time
// until the bake ends; below a stage, the freeze that holds it and the
// readings of its gates (gateLines).
func (v view) writeStages(w io.Writer) {
	fmt.Fprintf(w, "Stages %s\n", v.r.Progress)
	nameW, statusW := 0, 0
	for _, st := range v.r.Stages {
		nameW, statusW = max(nameW, utf8.RuneCountInString(st.Name)), max(statusW, len(st.Status))
	}
	frozen := ""
	for _, st := range v.r.Stages {
		fmt.Fprintf(w, "  %-*s  %-*s  %s\n", nameW, st.Name, statusW, st.Status, v.stageNote(st))
		for _, line := range v.stageLines(st) {
			fmt.Fprintf(w, "    %s\n", line)
		}
		if st.Status == rollout.StageFrozen && frozen == "" {
			frozen = st.Name
		}
	}
	if frozen != "" && v.r.FreezeOverride == nil {
		fmt.Fprintf(w, "  stage %s is frozen; to bypass every freeze: myrctl rollouts resume %s --freeze-override --reason \"…\"\n", frozen, v.r.ID)
	}
}

// stageNote is the stage's passes, its batches done of all and the
// countdown of its bake.
func (v view) stageNote(st client.Stage) string {
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
	return note
}

// stageLines are the lines under a stage: the freeze that holds a frozen
// one; the gate of a baking or failed one, and for a failed one how to
// list its targets; the pass and batch a running one works on (nowLine)
// and its batch gates that have not passed yet.
func (v view) stageLines(st client.Stage) []string {
	var lines []string
	if st.Status == rollout.StageFrozen && st.Held != "" {
		lines = append(lines, "held: "+st.Held)
	}
	if st.Status == rollout.StageRunning {
		if now := nowLine(st); now != "" {
			lines = append(lines, now)
		}
	}
	fts := 1
	if h := v.r.Policy.Health; h != nil {
		fts = max(h.FailuresToStop, 1)
	}
	switch st.Status {
	case rollout.StageBaking, rollout.StageFailed:
		if st.Gate != nil {
			lines = append(lines, v.gateLines("gate", *st.Gate, fts, st.Status == rollout.StageBaking)...)
		}
		if st.Gate == nil || st.Gate.LastRed == "" {
			if st.LastRed != "" {
				lines = append(lines, "last red: "+st.LastRed)
			}
		}
		if st.Status == rollout.StageFailed {
			lines = append(lines, fmt.Sprintf("its targets: myrctl rollouts targets %s --stage %s", v.r.ID, st.Name))
		}
	case rollout.StageRunning:
		for _, p := range st.Passes {
			if g := p.Gate; g != nil && p.Cleared <= g.Batch {
				lines = append(lines, v.gateLines(fmt.Sprintf("batch gate %s#%d", p.Name, g.Batch), g.GateState, fts, true)...)
			}
		}
	}
	return lines
}

// nowLine names the batch each pass of a running stage works on: the
// lowest batch not done of every pass with batches left, numbered from 0
// as the batch gates are (a pass with 3 of 4 batches done works on #3),
// or the batch whose batch gate the pass waits for:
//
//	now: rest/eu-2/eu-2a#1, rest/us-1/us-1a#0 (batch gate)
func nowLine(st client.Stage) string {
	var current []string
	for _, p := range st.Passes {
		done := 0
		if p.BatchesDone != nil {
			done = *p.BatchesDone
		}
		switch g := p.Gate; {
		case g != nil && p.Cleared <= g.Batch && g.Batch < done:
			current = append(current, fmt.Sprintf("%s#%d (batch gate)", p.Name, g.Batch))
		case done < p.Batches:
			current = append(current, fmt.Sprintf("%s#%d", p.Name, done))
		}
	}
	if len(current) == 0 {
		return ""
	}
	return "now: " + strings.Join(current, ", ")
}

// maxAlsoRed bounds the dry-run results shown of a reading.
const maxAlsoRed = 2

// gateLines describe a gate: its readings so far, how many were red in a
// row of the failuresToStop that stop the stage, when the next reading is
// due (live: the gate is still read), the last red result that blocks,
// and the red dry-run results of the last reading, which never stop it:
//
//	gate: 2 readings, 1 red in a row (stops at 2) · next reading in 12s
//	last red: metric export-failures (rest/eu-1/eu-1a): value 0.2 above 0.01
//	also red: metric refused (rest/eu-1/eu-1a): value 14 above 10 [dry run]
func (v view) gateLines(label string, g client.GateState, failuresToStop int, live bool) []string {
	head := label + ": no reading yet"
	switch {
	case g.Readings > 0 && g.ConsecutiveRed > 0:
		head = fmt.Sprintf("%s: %s, %d red in a row (stops at %d)", label, plural(g.Readings, "reading"), g.ConsecutiveRed, failuresToStop)
	case g.Readings > 0:
		head = fmt.Sprintf("%s: %s, last green", label, plural(g.Readings, "reading"))
	}
	if live && g.NextAt != nil {
		if left := g.NextAt.Sub(v.now); left > 0 {
			head += " · next reading in " + roughDuration(left)
		} else {
			head += " · next reading due"
		}
	}
	lines := []string{head}
	if g.LastRed != "" {
		lines = append(lines, "last red: "+g.LastRed)
	}
	if n := len(g.Recent); n > 0 {
		var dry []string
		for _, res := range g.Recent[n-1].Results {
			if res.Red && res.DryRun {
				dry = append(dry, res.String())
			}
		}
		for i, d := range dry {
			if i == maxAlsoRed {
				lines = append(lines, fmt.Sprintf("… and %d more dry-run results red", len(dry)-maxAlsoRed))
				break
			}
			lines = append(lines, "also red: "+d)
		}
	}
	return lines
}

// plural is "1 reading", "3 readings".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
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

// bar is [###xx---------------]: the share of done in total, the failed
// among them as x, so that a failed wave's bar does not read as done. A
// failed target takes at least one x: 1 failed of 40 done of 40 is
// [###################x].
func bar(done, failed, total int) string {
	filled, bad := 0, 0
	if total > 0 {
		filled = done * barWidth / total
		bad = min(failed*barWidth/total, filled)
		if failed > 0 && bad == 0 && filled > 0 {
			bad = 1
		}
	}
	return "[" + strings.Repeat("#", filled-bad) + strings.Repeat("x", bad) + strings.Repeat("-", barWidth-filled) + "]"
}

// failedOf counts the targets that failed (a rolled back one was taken
// back on purpose: it is done, not failed).
func failedOf(c client.TargetCounts) int {
	return c.Failed
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
			where := fmt.Sprintf("wave %d", t.Wave)
			if b := batchName(t); b != "" {
				where += " · " + b
			}
			row(tw, "    "+agentName(t), where, v.detail(t, waits))
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
