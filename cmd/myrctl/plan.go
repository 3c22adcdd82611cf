package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/myriarch/myriarch/adapters/client"
	"github.com/myriarch/myriarch/core/policy"
)

// planCmd asks the API what the planner would do for a fleet now and when
// the rollout would finish (POST /api/v1/plans).
func planCmd(g *globals) *cobra.Command {
	var fleet, kind, dir, version, commit string
	cmd := &cobra.Command{
		Use:   "plan --fleet NAME",
		Short: "Show the rollout the planner would create for a fleet, and when it would finish",
		Long: `Plan asks the API what the planner would do for the fleet and kind now, from
the applied revision or, with --dir, from a revision directory that is not
applied, and runs the rollout it would create through the engine on a virtual
clock. It prints the waves (and stages) with their predicted start and end in
local time and relative to now, the approvals the rollout will wait for, the
finish and the pessimistic finish, the assumptions and the agents the planner
keeps out. An approval is a wait of unknown length: what follows it is told
as an offset from it ("5m20s after the approval of wave 1").

--version proposes a target version (kind version, implied) as the version
selection would choose it. Nothing is stored.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			if fleet == "" {
				return fmt.Errorf("--fleet is required")
			}
			if version != "" && kind == "" {
				kind = string(policy.KindVersion)
			}
			if kind == "" {
				kind = string(policy.KindConfig)
			}
			if kind != string(policy.KindConfig) && kind != string(policy.KindVersion) {
				return fmt.Errorf("--kind must be config or version, not %q", kind)
			}
			req := client.PlanRequest{Fleet: fleet, Kind: policy.Kind(kind), Version: version}
			if dir != "" {
				rev, _, err := readRevision(cmd.Context(), dir, commit)
				if err != nil {
					return err
				}
				req.Revision = &rev
			}
			p, err := c.CreatePlan(cmd.Context(), req)
			if err != nil {
				return g.failed(err)
			}
			return g.show(p, func() { writePlan(g.stdout, p, g.now()) })
		},
	}
	cmd.Flags().StringVar(&fleet, "fleet", "", "the fleet to plan (required)")
	cmd.Flags().StringVar(&kind, "kind", "", "config (default) or version")
	cmd.Flags().StringVar(&dir, "dir", "", "plan from this revision directory instead of the applied revision")
	cmd.Flags().StringVar(&commit, "commit", "", "the commit of --dir (default: git HEAD of it, else a content hash)")
	cmd.Flags().StringVar(&version, "version", "", "propose this target version (kind version)")
	return cmd
}

// writePlan prints a plan as an operator reads it, times in now's zone.
func writePlan(w io.Writer, p client.Plan, now time.Time) {
	fmt.Fprintf(w, "Plan · fleet %s · %s → %s · revision %s\n", p.Fleet, p.Kind, orDash(shortRef(p.ToRef)), orDash(shortRef(p.Commit)))
	if p.Policy.Source != "" {
		fmt.Fprintf(w, "  %s\n", p.Policy.Source)
	} else if p.Policy.Name != "" {
		fmt.Fprintf(w, "  policy %s\n", p.Policy.Name)
	}
	if p.Note != "" {
		fmt.Fprintf(w, "  %s\n", p.Note)
	}
	fmt.Fprintf(w, "  %d relevant agent(s), %d target(s), %d excluded\n", p.Relevant, p.Targets, p.ExcludedCount)
	if !p.Planned || p.Prediction == nil {
		writeExcluded(w, p)
		return
	}
	pr := *p.Prediction
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Waves")
	tw := table(w)
	for _, wave := range p.Waves {
		approval := ""
		if wave.RequiresApproval {
			approval = "after approval"
		}
		row(tw, fmt.Sprintf("  %d %s", wave.Index, wave.Name), fmt.Sprintf("%d target(s)", wave.Size), approval,
			"starts "+whenText(wave.Start, now), "ends "+whenText(wave.End, now))
	}
	_ = tw.Flush()
	if len(p.Stages) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Stages")
		tw := table(w)
		for _, st := range p.Stages {
			row(tw, "  "+st.Name, fmt.Sprintf("%d target(s)", st.Size), "starts "+whenText(st.Start, now), "ends "+whenText(st.End, now))
		}
		_ = tw.Flush()
	}
	fmt.Fprintln(w)
	writePrediction(w, pr, now)
	writeExcluded(w, p)
}

// writePrediction is the approvals, the finish and the assumptions.
func writePrediction(w io.Writer, pr client.Prediction, now time.Time) {
	for _, a := range pr.Approvals {
		fmt.Fprintf(w, "Approval of wave %d %s: asked %s\n", a.Wave, a.Name, whenText(&a.RequestedAt, now))
	}
	if pr.Complete {
		fmt.Fprintf(w, "Finish %s · pessimistic %s\n", whenText(pr.Finish, now), whenText(pr.FinishPessimistic, now))
		if line := toleranceLine(pr.Tolerance); line != "" {
			fmt.Fprintln(w, line)
		}
	} else {
		fmt.Fprintf(w, "No finish: %s\n", pr.Reason)
	}
	a := pr.ApplySeconds
	fmt.Fprintf(w, "Apply time %s, pessimistic %s (%s, %d sample(s))\n", secondsText(a.Median), secondsText(a.P90), a.Source, a.Samples)
	fmt.Fprintln(w, "Assumptions")
	for _, s := range pr.Assumptions {
		fmt.Fprintf(w, "  - %s\n", s)
	}
}

// toleranceLine says how far off the finish may be: "Tolerance: up to
// 21s later than the finish (the pessimistic finish: apply times at their
// 90th percentile, 250ms for each of 28 evaluations); sooner when agents
// apply faster". "" without a tolerance.
func toleranceLine(t *client.Tolerance) string {
	if t == nil {
		return ""
	}
	return fmt.Sprintf("Tolerance: up to %s later than the finish (the pessimistic finish: apply times at their 90th percentile, %s for each of %d evaluations); sooner when agents apply faster",
		secondsText(t.LaterSeconds), shortDuration(time.Duration(t.EvaluationSeconds*float64(time.Second)).Round(time.Millisecond)), t.Evaluations)
}

func writeExcluded(w io.Writer, p client.Plan) {
	if p.ExcludedCount == 0 {
		return
	}
	byCode := map[string]int{}
	var codes []string
	for _, e := range p.Excluded {
		if byCode[e.Code] == 0 {
			codes = append(codes, e.Code)
		}
		byCode[e.Code]++
	}
	var parts []string
	for _, c := range codes {
		parts = append(parts, fmt.Sprintf("%s %d", c, byCode[c]))
	}
	fmt.Fprintf(w, "Excluded %d agent(s): %s\n", p.ExcludedCount, strings.Join(parts, " · "))
	for i, e := range p.Excluded {
		if i == 10 {
			fmt.Fprintf(w, "  … and %d more\n", p.ExcludedCount-10)
			break
		}
		fmt.Fprintf(w, "  %s: %s\n", orDash(e.DisplayName), e.Reason)
	}
}

// whenText is a predicted moment: "14:32 (in 12m)" in now's zone, with the
// date when it is not today's, or "12m after the approval of wave 1".
func whenText(w *client.When, now time.Time) string {
	switch {
	case w == nil:
		return "-"
	case w.At != nil:
		return clockText(*w.At, now)
	case w.AfterApprovalOf != nil && w.OffsetSeconds != nil:
		if *w.OffsetSeconds == 0 {
			return fmt.Sprintf("at the approval of wave %d", *w.AfterApprovalOf)
		}
		return fmt.Sprintf("%s after the approval of wave %d", roughDuration(time.Duration(*w.OffsetSeconds)*time.Second), *w.AfterApprovalOf)
	}
	return "-"
}

// clockText is t in now's zone, "14:32" on now's day, else with the date,
// and how far from now: "(in 12m)", "(3m ago)".
func clockText(t, now time.Time) string {
	local := t.In(now.Location())
	layout := "15:04"
	if y, m, d := local.Date(); y != now.Year() || m != now.Month() || d != now.Day() {
		layout = "Mon 2 Jan 15:04"
	}
	rel := "now"
	switch d := t.Sub(now).Round(time.Second); {
	case d > 0:
		rel = "in " + roughDuration(d)
	case d < 0:
		rel = roughDuration(-d) + " ago"
	}
	return fmt.Sprintf("%s (%s)", local.Format(layout), rel)
}

func secondsText(s float64) string {
	return shortDuration(time.Duration(s * float64(time.Second)).Round(100 * time.Millisecond))
}
