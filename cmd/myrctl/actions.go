package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/myriarch/myriarch/pkg/client"
)

// actionCmds are the operator actions of the spec, one command each:
// POST /api/v1/rollouts/{id}/actions/<action>. They need the permission
// rollouts:operate (roles operator and admin).
func actionCmds(g *globals) []*cobra.Command {
	simple := []struct{ action, short string }{
		{client.ActionPause, "Stop starting new targets"},
		{client.ActionResume, "Continue a paused rollout and acknowledge the failures so far"},
		{client.ActionAbort, "Stop the rollout; targets that have not started are cancelled"},
		{client.ActionRollback, "Return started targets to their starting state"},
		{client.ActionRetryFailed, "Reset failed targets and run them again"},
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
	return append(cmds, approveCmd(g))
}

func approveCmd(g *globals) *cobra.Command {
	var wave int
	cmd := &cobra.Command{
		Use:   "approve ID --wave N",
		Short: "Release a wave that waits for approval",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			if wave < 0 {
				return fmt.Errorf("--wave must be a wave index from 0, not %d", wave)
			}
			r, err := c.Approve(cmd.Context(), args[0], wave)
			return g.acted(r, fmt.Sprintf("approve wave %d", wave), err)
		},
	}
	cmd.Flags().IntVar(&wave, "wave", 0, "the index of the wave to approve (from 0)")
	_ = cmd.MarkFlagRequired("wave")
	return cmd
}

// acted reports the rollout as the action left it.
func (g *globals) acted(r client.Rollout, what string, err error) error {
	if err != nil {
		return g.failed(err)
	}
	return g.show(r, func() {
		fmt.Fprintf(g.stdout, "%s: rollout %s is %s\n", what, r.ID, r.Status)
		if r.StatusReason != "" {
			fmt.Fprintf(g.stdout, "  %s\n", r.StatusReason)
		}
		if r.TargetCounts != nil {
			fmt.Fprintf(g.stdout, "  targets: %s\n", countsLine(*r.TargetCounts))
		}
	})
}
