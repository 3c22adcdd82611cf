package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/myriarch/myriarch/adapters/client"
)

// exitNotReady is the status of install-plan while the plan is not ready:
// a provisioning script tells "ask again" from a refusal (1).
const exitNotReady = 3

func releasesCmd(g *globals) *cobra.Command {
	cmd := group("releases", "The release catalogue per distribution, and the fleets behind a release")
	cmd.AddCommand(releasesListCmd(g), releasesGetCmd(g), releasesPutCmd(g), releasesDeleteCmd(g), releasesLatestCmd(g), releasesSummaryCmd(g))
	return cmd
}

func releasesListCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "list DISTRIBUTION",
		Short: "List the releases of a distribution, newest first",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			rs, err := c.AllReleases(cmd.Context(), args[0])
			if err != nil {
				return g.failed(err)
			}
			return g.show(client.Page[client.Release]{Items: rs}, func() {
				if len(rs) == 0 {
					fmt.Fprintf(g.stdout, "no releases of %s\n", args[0])
					return
				}
				w := table(g.stdout)
				row(w, "VERSION", "SOURCE", "NOTE", "PUBLISHED", "PLATFORMS")
				for _, r := range rs {
					row(w, r.Version, string(r.Source), releaseNote(r), stamp(r.PublishedAt), orDash(strings.Join(r.Platforms, ", ")))
				}
				_ = w.Flush()
			})
		},
	}
}

// releaseNote is "latest", "prerelease" or "-".
func releaseNote(r client.Release) string {
	switch {
	case r.Latest:
		return "latest"
	case r.Prerelease:
		return "prerelease"
	}
	return "-"
}

func releasesGetCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "get DISTRIBUTION VERSION",
		Short: "Show a release and whether each fleet of its distribution may choose it",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			r, err := c.GetRelease(cmd.Context(), args[0], args[1])
			if err != nil {
				return g.failed(err)
			}
			return g.show(r, func() {
				printRelease(g, r.Release)
				printFleetOptions(g, r.UpdatableFleets, "no fleet of "+r.Distribution)
			})
		},
	}
}

func printRelease(g *globals, r client.Release) {
	line := fmt.Sprintf("%s %s · source %s", r.Distribution, r.Version, r.Source)
	if n := releaseNote(r); n != "-" {
		line += " · " + n
	}
	if r.PublishedAt != nil {
		line += " · published " + stamp(r.PublishedAt)
	}
	if r.UpdatedBy != "" {
		line += " · by " + r.UpdatedBy
	}
	fmt.Fprintln(g.stdout, line)
	if len(r.Platforms) > 0 {
		fmt.Fprintf(g.stdout, "platforms: %s\n", strings.Join(r.Platforms, ", "))
	}
}

func printFleetOptions(g *globals, os []client.ReleaseFleetOption, none string) {
	if len(os) == 0 {
		fmt.Fprintln(g.stdout, none)
		return
	}
	w := table(g.stdout)
	row(w, "FLEET", "TARGET VERSION", "BEHIND", "SELECTABLE", "NOTE")
	for _, o := range os {
		var notes []string
		for _, n := range []string{o.NotAllowedCode, o.ReasonCode} {
			if n != "" {
				notes = append(notes, n)
			}
		}
		row(w, o.Fleet, targetText(o.Target), yesNo(o.Behind), yesNo(o.Selectable), orDash(strings.Join(notes, ", ")))
	}
	_ = w.Flush()
}

func releasesPutCmd(g *globals) *cobra.Command {
	var published string
	var platforms []string
	cmd := &cobra.Command{
		Use:   "put DISTRIBUTION VERSION",
		Short: "Create or update an administrator's entry of the catalogue",
		Long: `Put stores the release with source admin; the scheduled refresh never changes
such an entry. Putting the same again changes nothing. VERSION is a semantic
version without "v"; whether it is a prerelease follows from it.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			in := client.ReleaseInput{Platforms: platforms}
			if published != "" {
				t, err := time.Parse(time.RFC3339, published)
				if err != nil {
					return fmt.Errorf("--published-at %q is not an RFC 3339 time such as 2026-11-17T12:44:09Z", published)
				}
				in.PublishedAt = &t
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			r, err := c.PutRelease(cmd.Context(), args[0], args[1], in)
			if err != nil {
				return g.failed(err)
			}
			return g.show(r, func() { printRelease(g, r) })
		},
	}
	cmd.Flags().StringVar(&published, "published-at", "", "when the release was published (RFC 3339)")
	cmd.Flags().StringSliceVar(&platforms, "platform", nil, "a platform os/arch, e.g. linux/amd64 (repeat, or comma-separated)")
	return cmd
}

func releasesDeleteCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "delete DISTRIBUTION VERSION",
		Short: "Delete an administrator's or an imported entry of the catalogue",
		Long: `Delete removes the stored entry. A configured release (MYRIARCH_RELEASES) cannot
be deleted here, and an imported one returns with the next refresh while its
publisher lists it.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			if err := c.DeleteRelease(cmd.Context(), args[0], args[1]); err != nil {
				return g.failed(err)
			}
			return g.show(map[string]string{"distribution": args[0], "version": args[1], "deleted": "true"}, func() {
				fmt.Fprintf(g.stdout, "release %s of %s deleted\n", args[1], args[0])
			})
		},
	}
}

func releasesLatestCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "latest DISTRIBUTION",
		Short: "Show the latest release of a distribution and the fleets behind it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			l, err := c.LatestReleaseFleets(cmd.Context(), args[0])
			if err != nil {
				return g.failed(err)
			}
			return g.show(l, func() {
				printRelease(g, l.Latest)
				printFleetOptions(g, l.Fleets, "no fleet is behind")
			})
		},
	}
}

func releasesSummaryCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "summary",
		Short: "Outdated collectors per distribution",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			s, err := c.ReleaseSummary(cmd.Context())
			if err != nil {
				return g.failed(err)
			}
			return g.show(s, func() {
				if len(s.Distributions) == 0 {
					fmt.Fprintln(g.stdout, "no fleet declares a distribution")
					return
				}
				w := table(g.stdout)
				row(w, "DISTRIBUTION", "LATEST", "FLEETS BEHIND", "COLLECTORS", "ON LATEST", "BEHIND", "AHEAD", "UNKNOWN", "VERSIONS")
				for _, d := range s.Distributions {
					var vs []string
					for _, v := range d.Versions {
						vs = append(vs, fmt.Sprintf("%s×%d", v.Version, v.Collectors))
					}
					k := d.Collectors
					row(w, d.Distribution, orDash(d.Latest), fmt.Sprintf("%d/%d", d.FleetsBehind, d.Fleets), fmt.Sprint(k.Total),
						fmt.Sprint(k.OnLatest), fmt.Sprint(k.Behind), fmt.Sprint(k.Ahead), fmt.Sprint(k.Unknown), orDash(strings.Join(vs, " ")))
				}
				_ = w.Flush()
			})
		},
	}
}

func installPlanCmd(g *globals) *cobra.Command {
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "install-plan NAME",
		Short: "The collector version a new host installs to join the fleet",
		Long: `Install-plan answers which collector version to install on a host that will
join the fleet: its effective target, or the version its version rollout
updates from while that rollout is pending, running or waiting for approval.
While the planner has not handled the target the plan is not ready: the exit
status is 3 (--wait keeps asking, as often as the API suggests, up to the
duration). With -o json the plan is the API's JSON.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if wait < 0 {
				return errors.New("--wait must not be negative")
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			deadline := g.now().Add(wait)
			for {
				p, err := c.InstallPlan(cmd.Context(), args[0])
				if err != nil {
					return g.failed(err)
				}
				pause := time.Duration(p.RetryAfterSeconds) * time.Second
				if p.Ready || !g.now().Add(pause).Before(deadline.Add(time.Nanosecond)) {
					return g.showPlan(p)
				}
				if err := g.sleep(cmd.Context(), pause); err != nil {
					return g.showPlan(p)
				}
			}
		},
	}
	cmd.Flags().DurationVar(&wait, "wait", 0, "keep asking while the plan is not ready, up to this long (e.g. 5m)")
	return cmd
}

// showPlan prints the plan; one that is not ready ends with exitNotReady.
func (g *globals) showPlan(p client.InstallPlan) error {
	err := g.show(p, func() {
		if !p.Ready {
			fmt.Fprintf(g.stdout, "not ready (%s): %s; ask again in %ds\n", p.Reason, p.Detail, p.RetryAfterSeconds)
			return
		}
		fmt.Fprintln(g.stdout, p.Version)
		line := "source " + string(p.Source)
		if p.Distribution != "" {
			line = p.Distribution + " · " + line
		}
		if p.RolloutID != "" {
			line += " · rollout " + p.RolloutID
		}
		fmt.Fprintf(g.stdout, "%s · %s\n", line, p.Detail)
	})
	if err == nil && !p.Ready {
		return exitError{code: exitNotReady}
	}
	return err
}
