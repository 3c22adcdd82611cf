package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/myriarch/myriarch/adapters/client"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

// The statuses the filters accept, in the order of docs/rollouts.md.
var (
	rolloutStatuses = rollout.Statuses
	targetStatuses  = []rollout.TargetStatus{rollout.TargetPending, rollout.TargetWaitingWindow, rollout.TargetInProgress,
		rollout.TargetVerifying, rollout.TargetSucceeded, rollout.TargetFailed, rollout.TargetSkipped,
		rollout.TargetCancelled, rollout.TargetRolledBack}
)

func rolloutsCmd(g *globals) *cobra.Command {
	cmd := group("rollouts", "List, inspect and steer rollouts")
	cmd.AddCommand(rolloutsListCmd(g), rolloutsGetCmd(g), rolloutsTargetsCmd(g))
	cmd.AddCommand(actionCmds(g)...)
	return cmd
}

func rolloutsListCmd(g *globals) *cobra.Command {
	var fleet, kind, status string
	var limit int
	var quiet bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List rollouts, newest first (every page unless --limit)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			if kind != "" && kind != string(policy.KindConfig) && kind != string(policy.KindVersion) {
				return fmt.Errorf("--kind must be config or version, not %q", kind)
			}
			statuses, err := parseStatuses(status, rolloutStatuses)
			if err != nil {
				return err
			}
			if limit < 0 {
				return fmt.Errorf("--limit must be 0 (every rollout) or more, not %d", limit)
			}
			rs, err := c.AllRollouts(cmd.Context(), client.RolloutFilter{Fleet: fleet, Kind: policy.Kind(kind), Statuses: statuses}, limit)
			if err != nil {
				return g.failed(err)
			}
			if quiet {
				// Ids only, one per line, for the shell: ROLLOUT=$(myrctl rollouts list -q --limit 1 ...)
				for _, r := range rs {
					fmt.Fprintln(g.stdout, r.ID)
				}
				return nil
			}
			return g.show(client.Page[client.Rollout]{Items: rs}, func() { printRollouts(g, rs) })
		},
	}
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only the rollout ids, newest first")
	cmd.Flags().StringVar(&fleet, "fleet", "", "only rollouts of this fleet")
	cmd.Flags().StringVar(&kind, "kind", "", "only config or version rollouts")
	cmd.Flags().StringVar(&status, "status", "", "only rollouts in these statuses (comma-separated)")
	cmd.Flags().IntVar(&limit, "limit", 0, "at most this many rollouts (0: all)")
	return cmd
}

// parseStatuses reads a comma-separated status filter; an unknown status is
// a usage error.
func parseStatuses[S ~string](s string, valid []S) ([]S, error) {
	return parseList("--status", s, valid)
}

// parseList reads the comma-separated values of flag; one that is not
// valid is a usage error naming the valid ones.
func parseList[S ~string](flag, s string, valid []S) ([]S, error) {
	if s == "" {
		return nil, nil
	}
	var out []S
	for _, v := range strings.Split(s, ",") {
		if !slices.Contains(valid, S(v)) {
			names := make([]string, len(valid))
			for i, x := range valid {
				names[i] = string(x)
			}
			return nil, fmt.Errorf("%s %q is not one of %s", flag, v, strings.Join(names, ", "))
		}
		out = append(out, S(v))
	}
	return out, nil
}

func printRollouts(g *globals, rs []client.Rollout) {
	if len(rs) == 0 {
		fmt.Fprintln(g.stdout, "no rollouts")
		return
	}
	w := table(g.stdout)
	fmt.Fprintln(w, "ID\tFLEET\tKIND\tSTATUS\tSTAGES\tORIGIN\tTO\tCREATED\tCREATED BY")
	for _, r := range rs {
		row(w, r.ID, r.Fleet, string(r.Kind), string(r.Status), stagesCell(r.Progress), string(r.Origin), shortRef(r.ToRef), stamp(&r.CreatedAt), r.CreatedBy)
	}
	_ = w.Flush()
}

// stagesCell is a rollout's stages passed of all ("2/4"), "-" for a
// rollout whose policy splits no wave.
func stagesCell(progress string) string {
	if progress == "" {
		return "-"
	}
	return progress
}

func rolloutsGetCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "get ID",
		Short: "Show a rollout: status, origin, policy, its waves with counts and approvals, its stages with their gates",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			r, err := c.GetRollout(cmd.Context(), args[0])
			if err != nil {
				return g.failed(err)
			}
			return g.show(r, func() { printRollout(g, r) })
		},
	}
}

// printRollout is the header, the waves and the stages of the rollout
// page.
func printRollout(g *globals, r client.Rollout) {
	v := view{r: r, now: g.now(), operatorToken: g.otherOperatorToken()}
	v.writeHeader(g.stdout)
	v.writeWaves(g.stdout)
	if len(r.Stages) > 0 {
		v.writeStages(g.stdout)
	}
}

func rolloutsTargetsCmd(g *globals) *cobra.Command {
	var limit int
	var wave, stage, status string
	cmd := &cobra.Command{
		Use:   "targets ID",
		Short: "List a rollout's targets with their status and progress (every page unless --limit)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			f := client.TargetFilter{}
			if cmd.Flags().Changed("wave") {
				if f.Wave, err = waveFlag(wave); err != nil {
					return err
				}
			}
			if cmd.Flags().Changed("stage") {
				if stage == "" {
					return fmt.Errorf("--stage must be a stage's name (myrctl rollouts get lists them), not empty")
				}
				f.Stage = stage
			}
			if f.Statuses, err = parseStatuses(status, targetStatuses); err != nil {
				return err
			}
			if limit < 0 {
				return fmt.Errorf("--limit must be 0 (every target) or more, not %d", limit)
			}
			// The rollout gives the health wait and whether it counts down.
			r, err := c.GetRollout(cmd.Context(), args[0])
			if err != nil {
				return g.failed(err)
			}
			ts, err := c.AllTargets(cmd.Context(), args[0], f, limit)
			if err != nil {
				return g.failed(err)
			}
			return g.show(client.Page[client.Target]{Items: ts}, func() { printTargets(g, r, ts) })
		},
	}
	cmd.Flags().StringVar(&wave, "wave", "", "only targets of this wave: its name (canary) or its index from 0")
	cmd.Flags().StringVar(&stage, "stage", "", "only targets of this stage, by its name (rest/eu-west-1a)")
	cmd.Flags().StringVar(&status, "status", "", "only targets in these statuses (comma-separated)")
	cmd.Flags().IntVar(&limit, "limit", 0, "at most this many targets (0: all)")
	return cmd
}

// agentName is the name a target's agent is known by; its id from a server
// that sends no name. -o json keeps both.
func agentName(t client.Target) string {
	if t.DisplayName != "" {
		return t.DisplayName
	}
	return t.AgentID
}

// distinctNames are the names of the targets' agents, with the agent's id
// added to a name that several agents of the list share: "vm (0192…0d)".
// The whole id: a prefix of a UUIDv7 is its time, the same for agents
// created together, so a short one would not tell them apart.
func distinctNames(ts []client.Target) []string {
	ids := map[string]map[string]bool{}
	for _, t := range ts {
		n := agentName(t)
		if ids[n] == nil {
			ids[n] = map[string]bool{}
		}
		ids[n][t.AgentID] = true
	}
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = agentName(t)
		if len(ids[out[i]]) > 1 {
			out[i] += " (" + t.AgentID + ")"
		}
	}
	return out
}

func printTargets(g *globals, r client.Rollout, ts []client.Target) {
	if len(ts) == 0 {
		fmt.Fprintln(g.stdout, "no targets")
		return
	}
	v := view{r: r, targets: ts, now: g.now()}
	waits := healthWaits(r, ts, v.now)
	w := table(g.stdout)
	staged := len(r.Stages) > 0
	if staged {
		fmt.Fprintln(w, "AGENT\tWAVE\tSTAGE\tBATCH\tSTATUS\tFROM\tTO\tDETAIL")
	} else {
		fmt.Fprintln(w, "AGENT\tWAVE\tSTATUS\tFROM\tTO\tDETAIL")
	}
	names := distinctNames(ts)
	for i, t := range ts {
		cells := []string{names[i], strconv.Itoa(t.Wave)}
		if staged {
			cells = append(cells, orDash(t.Stage), orDash(batchName(t)))
		}
		cells = append(cells, string(t.Status), orDash(shortRef(t.FromRef)), shortRef(t.ToRef), v.detail(t, waits))
		row(w, cells...)
	}
	_ = w.Flush()
}

// batchName names a target's batch as logs do, <pass>#<batch>
// (rest/eu-2/eu-2a#1); empty for a target without a placement.
func batchName(t client.Target) string {
	if t.Batch == nil {
		return ""
	}
	return t.Pass + "#" + strconv.Itoa(*t.Batch)
}
