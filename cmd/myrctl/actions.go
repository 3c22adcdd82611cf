package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/myriarch/myriarch/adapters/client"
)

// actionCmds are the operator actions (docs/rollouts.md), one command each:
// POST /api/v1/rollouts/{id}/actions/<action>. They need the permission
// rollouts:operate (roles operator and admin).
func actionCmds(g *globals) []*cobra.Command {
	simple := []struct{ action, short string }{
		{client.ActionPause, "Stop starting new targets"},
		{client.ActionAbort, "Stop the rollout; targets that have not started are cancelled"},
		{client.ActionRollback, "Return started targets to their starting state"},
		{client.ActionRetryFailed, "Reset failed targets and run them again (refused with nothing_to_retry when nothing failed)"},
	}
	var cmds []*cobra.Command
	for _, a := range simple {
		cmds = append(cmds, &cobra.Command{
			Use:   a.action + " ID",
			Short: a.short,
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				c, err := g.client()
				if err != nil {
					return err
				}
				r, err := c.Act(cmd.Context(), args[0], a.action)
				return g.acted(r, a.action, err)
			},
		})
	}
	return append(cmds, resumeCmd(g), approveCmd(g), rejectCmd(g))
}

func resumeCmd(g *globals) *cobra.Command {
	var req client.ResumeRequest
	cmd := &cobra.Command{
		Use:   "resume ID [--freeze-override --reason R]",
		Short: "Continue a paused rollout and acknowledge the failures so far; or bypass the freezes",
		Long: `Resume continues a paused rollout: the failures so far no longer count toward
the threshold, and a wave whose approval was rejected or expired waits for
its approvals again.

With --freeze-override the rollout also ignores every freeze of its policy for
the rest of its run: a stage held by a freeze starts at once. This works on a
running rollout too, where it only records the override. Who overrode, when
and why (--reason) is kept on the rollout and in the audit log.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			what := client.ActionResume
			if req.FreezeOverride {
				what += " (freeze override)"
			}
			r, err := c.Resume(cmd.Context(), args[0], req)
			return g.acted(r, what, err)
		},
	}
	cmd.Flags().BoolVar(&req.FreezeOverride, "freeze-override", false, "bypass every freeze for the rest of the rollout")
	cmd.Flags().StringVar(&req.Reason, "reason", "", "why, for the audit log (at most 500 characters)")
	return cmd
}

func approveCmd(g *globals) *cobra.Command {
	var req client.ApproveRequest
	cmd := waveCmd(g, &cobra.Command{
		Use:   "approve ID --wave NAME|N [--reason R] [--freeze-override]",
		Short: "Approve a wave that waits for approval",
		Long: `Approve records your approval of a wave that waits for it. The wave starts
once the policy's approvals.required distinct operators approved it (1 unless
the policy says otherwise). The rollout's creator cannot approve it (for a
GitOps rollout, whoever applied its revision), nobody approves twice, and an
approval after the expiry (72h after the wave began to wait, unless the policy
says otherwise) is refused. --freeze-override also bypasses every freeze for
the rest of the rollout.`,
	}, &req.Wave, func(ctx context.Context, c *client.Client, id string) (client.Rollout, error) {
		return c.ApproveWith(ctx, id, req)
	})
	cmd.Flags().StringVar(&req.Reason, "reason", "", "why, kept with the approval (at most 500 characters)")
	cmd.Flags().BoolVar(&req.FreezeOverride, "freeze-override", false, "also bypass every freeze for the rest of the rollout")
	return cmd
}

func rejectCmd(g *globals) *cobra.Command {
	var req client.RejectRequest
	cmd := waveCmd(g, &cobra.Command{
		Use:   "reject ID --wave NAME|N [--reason R]",
		Short: "Refuse the approval a wave waits for; the wave stops and the policy's onFailure applies",
		Long: `Reject stops a wave that waits for approval: nothing of it starts, and the
policy's onFailure applies (pause, or a rollback of what ran before it).
Resuming the paused rollout asks for the wave's approval again.`,
	}, &req.Wave, func(ctx context.Context, c *client.Client, id string) (client.Rollout, error) {
		return c.Reject(ctx, id, req)
	})
	cmd.Flags().StringVar(&req.Reason, "reason", "", "why, shown in the rollout's status (at most 500 characters)")
	return cmd
}

// waveCmd completes a command that decides on one wave of a rollout (ID
// and the required --wave, the wave's index or name, stored in wave) and
// reports what act left.
func waveCmd(g *globals, cmd *cobra.Command, wave *client.WaveRef, act func(ctx context.Context, c *client.Client, id string) (client.Rollout, error)) *cobra.Command {
	var flag string
	cmd.Args = cobra.ExactArgs(1)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := g.client()
		if err != nil {
			return err
		}
		if *wave, err = waveFlag(flag); err != nil {
			return err
		}
		r, err := act(cmd.Context(), c, args[0])
		return g.acted(r, cmd.Name()+" "+waveTitle(r, *wave), err)
	}
	cmd.Flags().StringVar(&flag, "wave", "", "the wave to "+cmd.Name()+": its name (canary) or its index from 0")
	_ = cmd.MarkFlagRequired("wave")
	return cmd
}

// waveFlag reads --wave: a wave's index from 0 or its name, which the API
// resolves against the rollout's waves.
func waveFlag(s string) (client.WaveRef, error) {
	if s == "" {
		return "", fmt.Errorf("--wave must be a wave's name or its index from 0, not empty")
	}
	w := client.WaveRef(s)
	if n, ok := w.Index(); ok && n < 0 {
		return "", fmt.Errorf("--wave must be a wave's name or its index from 0, not %d", n)
	}
	return w, nil
}

// waveTitle names the wave as the rollout has it: `wave 1 "rest"`; the
// reference as given when the rollout does not have it.
func waveTitle(r client.Rollout, ref client.WaveRef) string {
	for _, w := range r.Waves {
		if n, ok := ref.Index(); (ok && w.Index == n) || (!ok && w.Name == string(ref)) {
			return fmt.Sprintf("wave %d %q", w.Index, w.Name)
		}
	}
	if _, ok := ref.Index(); ok {
		return "wave " + string(ref)
	}
	return fmt.Sprintf("wave %q", string(ref))
}

// acted reports the rollout as the action left it: its status and reason,
// the approvals of a wave that still waits, the freeze override, the
// targets.
func (g *globals) acted(r client.Rollout, what string, err error) error {
	if err != nil {
		return g.failed(err)
	}
	return g.show(r, func() {
		fmt.Fprintf(g.stdout, "%s: rollout %s is %s\n", what, r.ID, r.Status)
		if r.StatusReason != "" {
			fmt.Fprintf(g.stdout, "  %s\n", r.StatusReason)
		}
		now := g.now()
		for _, w := range r.Waves {
			if line := approvalsLine(w, now); line != "" {
				fmt.Fprintf(g.stdout, "  wave %d %s\n", w.Index, line)
			}
		}
		if o := r.FreezeOverride; o != nil {
			fmt.Fprintf(g.stdout, "  %s\n", overrideLine(*o))
		}
		if r.TargetCounts != nil {
			fmt.Fprintf(g.stdout, "  targets: %s\n", countsLine(*r.TargetCounts))
		}
	})
}
