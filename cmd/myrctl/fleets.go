package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/myriarch/myriarch/adapters/client"
	"github.com/myriarch/myriarch/core/selection"
)

func fleetsCmd(g *globals) *cobra.Command {
	cmd := group("fleets", "Fleets, their target version and the version selection")
	cmd.AddCommand(fleetsListCmd(g), fleetsGetCmd(g), versionOptionsCmd(g), selectVersionCmd(g), clearSelectionCmd(g))
	cmd.AddCommand(installPlanCmd(g)) // releases and install plans
	return cmd
}

func fleetsListCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the fleets of the applied revision",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			fs, err := c.AllFleets(cmd.Context())
			if err != nil {
				return g.failed(err)
			}
			return g.show(client.Page[client.Fleet]{Items: fs}, func() {
				if len(fs) == 0 {
					fmt.Fprintln(g.stdout, "no fleets")
					return
				}
				w := table(g.stdout)
				fmt.Fprintln(w, "NAME\tEXECUTOR\tTARGET VERSION\tAGENTS ONLINE\tON TARGET VERSION\tON CONFIG\tACTIVE ROLLOUTS")
				for _, f := range fs {
					a := f.Agents
					fmt.Fprintf(w, "%s\t%s\t%s\t%d/%d\t%d\t%d\t%s\n", f.Name, f.Executor, targetText(f.VersionTarget),
						a.Online, a.Total, a.OnTargetVersion, a.OnConfigHash, activeText(f.ActiveRollouts))
				}
				_ = w.Flush()
			})
		},
	}
}

// targetText is "0.162.0 (ui)", or "none (hold)" without a version.
func targetText(t selection.Target) string {
	v := t.Version
	if v == "" {
		v = "none"
	}
	return fmt.Sprintf("%s (%s)", v, t.Source)
}

func activeText(rs []client.RolloutSummary) string {
	if len(rs) == 0 {
		return "-"
	}
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%s %s %s", r.ID, r.Kind, r.Status)
	}
	return strings.Join(parts, ", ")
}

func fleetsGetCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "get NAME",
		Short: "Show a fleet with its effective target version",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			f, err := c.GetFleet(cmd.Context(), args[0])
			if err != nil {
				return g.failed(err)
			}
			return g.show(f, func() { printFleet(g, f) })
		},
	}
}

func printFleet(g *globals, f client.Fleet) {
	w := table(g.stdout)
	fmt.Fprintf(w, "Fleet\t%s (revision %s)\n", f.Name, shortRef(f.Commit))
	fmt.Fprintf(w, "Collector\t%s, version in Git %s\n", orDash(f.Distribution), orDash(f.GitVersion))
	fmt.Fprintf(w, "Target version\t%s\n", targetText(f.VersionTarget))
	if s := f.UISelection; s != nil {
		line := fmt.Sprintf("%s (%s) by %s at %s", s.Version, s.State, s.SelectedBy, stamp(&s.SelectedAt))
		if s.Reason != "" {
			line += ": " + s.Reason
		}
		if s.StateReason != "" {
			line += " · " + s.StateReason
		}
		fmt.Fprintf(w, "Selection\t%s\n", line)
	}
	frame := "disabled"
	if f.Selection.Enabled {
		frame = "enabled " + orDash(f.Selection.VersionRange+strings.Join(f.Selection.Versions, ", "))
	}
	fmt.Fprintf(w, "Version choice\t%s\n", frame)
	fmt.Fprintf(w, "Executor\t%s\n", f.Executor)
	fmt.Fprintf(w, "Policies\tconfig %s, version %s\n", f.ConfigPolicy, f.VersionPolicy)
	fmt.Fprintf(w, "Config hash\t%s\n", orDash(shortRef(f.ConfigHash)))
	a := f.Agents
	fmt.Fprintf(w, "Agents\t%d, %d online, %d on the target version, %d on the config hash, %d drifted\n", a.Total, a.Online, a.OnTargetVersion, a.OnConfigHash, a.Drifted)
	if a.Gone > 0 || a.AssignmentErrors > 0 {
		fmt.Fprintf(w, "Not counted\t%d gone (offline beyond the retention), %d with an assignment error\n", a.Gone, a.AssignmentErrors)
	}
	fmt.Fprintf(w, "Active rollouts\t%s\n", activeText(f.ActiveRollouts))
	_ = w.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func versionOptionsCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version-options NAME",
		Short: "List the versions an operator may choose for a fleet",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			o, err := c.VersionOptions(cmd.Context(), args[0])
			if err != nil {
				return g.failed(err)
			}
			return g.show(o, func() { printOptions(g, o) })
		},
	}
}

func printOptions(g *globals, o client.VersionOptions) {
	allowed := "yes"
	if !o.Allowed {
		allowed = "no (" + o.NotAllowedCode + ")"
	}
	fmt.Fprintf(g.stdout, "target %s · executor %s · policy %s · choice allowed: %s\n", targetText(o.Target), o.Executor, o.VersionPolicy, allowed)
	if r := o.ActiveRollout; r != nil {
		fmt.Fprintf(g.stdout, "active version rollout %s %s to %s\n", r.ID, r.Status, r.ToRef)
	}
	w := table(g.stdout)
	fmt.Fprintln(w, "VERSION\tSELECTABLE\tNOTE")
	for _, v := range o.Options {
		var notes []string
		for _, n := range []struct {
			on   bool
			text string
		}{{v.IsGitTarget, "Git target"}, {v.IsSelected, "selected"}, {v.Prerelease, "prerelease"}, {v.ReasonCode != "", v.ReasonCode}} {
			if n.on {
				notes = append(notes, n.text)
			}
		}
		row(w, v.Version, yesNo(v.Selectable), strings.Join(notes, ", "))
	}
	_ = w.Flush()
	if len(o.Platforms) > 0 {
		fmt.Fprintf(g.stdout, "platforms: %s\n", strings.Join(o.Platforms, ", "))
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func selectVersionCmd(g *globals) *cobra.Command {
	var reason, expected string
	cmd := &cobra.Command{
		Use:   "select-version NAME VERSION",
		Short: "Choose a fleet's target version within the frame Git declares",
		Long: `Select-version stores an operator's choice and waits up to 10 seconds for the
planner, which starts a version rollout when members need the update.
--expected-target guards against a concurrent change: the choice is refused
(target_changed) unless the effective target is still that version ("" for none).`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			req := client.SelectRequest{Version: args[1], Reason: reason}
			if cmd.Flags().Changed("expected-target") {
				req.ExpectedTargetVersion = &expected
			}
			res, err := c.SelectVersion(cmd.Context(), args[0], req)
			if err != nil {
				return g.failed(err)
			}
			return g.show(res, func() {
				fmt.Fprintln(g.stdout, res.Message)
				fmt.Fprintf(g.stdout, "target %s\n", targetText(res.Target))
				switch {
				case res.RolloutID != "":
					fmt.Fprintf(g.stdout, "rollout %s with %d targets; watch it with: myrctl watch %s\n", res.RolloutID, res.Targets, res.RolloutID)
				case !res.Planned:
					fmt.Fprintln(g.stdout, "not planned yet: the scheduled planner run plans the fleet")
				}
			})
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why (the fleet's frame may require one; at most 500 characters)")
	cmd.Flags().StringVar(&expected, "expected-target", "", `the effective target version you saw ("" for none)`)
	return cmd
}

func clearSelectionCmd(g *globals) *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "clear-version-selection NAME",
		Short: "Take an operator's version choice back: the Git target applies again",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			res, err := c.ClearVersionSelection(cmd.Context(), args[0], reason)
			if err != nil {
				return g.failed(err)
			}
			return g.show(res, func() {
				fmt.Fprintf(g.stdout, "target %s\n", targetText(res.Target))
				if res.PossibleDowngrade {
					fmt.Fprintln(g.stdout, "note: members on the chosen version may be taken back to an older one")
				}
			})
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why (at most 500 characters)")
	return cmd
}
