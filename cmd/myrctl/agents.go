package main

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/myriarch/myriarch/adapters/api/schema"
	"github.com/myriarch/myriarch/adapters/client"
)

// configStatuses are the values of --config-status, as the API takes them.
var configStatuses = []string{"APPLIED", "APPLYING", "FAILED", "drifted"}

func agentsCmd(g *globals) *cobra.Command {
	cmd := group("agents", "The inventory of agents: list them, show one with its rollout targets, reset one's credential")
	cmd.AddCommand(agentsListCmd(g), agentsGetCmd(g), agentsResetCredentialCmd(g), agentsRotateCredentialCmd(g))
	return cmd
}

func agentsListCmd(g *globals) *cobra.Command {
	var f client.AgentFilter
	var online, offline, assignmentErrors, unassigned bool
	var configStatus string
	var limit int
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List agents with their state, version, configuration and health (every page unless --limit)",
		Long: `List reads every page of GET /api/v1/agents. Online, offline and gone follow the
liveness rule of rollouts; gone agents (offline longer than the retention) are
listed, their state "gone". The filters combine: an agent is listed when it
passes all of them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			switch {
			case online && offline:
				return fmt.Errorf("--online and --offline exclude each other")
			case online, offline:
				f.Online = &online
			}
			if assignmentErrors {
				f.AssignmentError = &assignmentErrors
			}
			if unassigned {
				f.Assigned = new(bool) // false: in no fleet
			}
			if f.ConfigStatuses, err = parseList("--config-status", configStatus, configStatuses); err != nil {
				return err
			}
			if limit < 0 {
				return fmt.Errorf("--limit must be 0 (every agent) or more, not %d", limit)
			}
			as, err := c.AllAgents(cmd.Context(), f, limit)
			if err != nil {
				return g.failed(err)
			}
			return g.show(client.Page[client.Agent]{Items: as}, func() { printAgents(g, as) })
		},
	}
	cmd.Flags().StringVar(&f.Fleet, "fleet", "", "only agents of this fleet")
	cmd.Flags().BoolVar(&online, "online", false, "only agents online")
	cmd.Flags().BoolVar(&offline, "offline", false, "only agents offline (gone ones included)")
	cmd.Flags().StringVar(&f.Version, "version", "", "only agents that report this collector version")
	cmd.Flags().StringVar(&configStatus, "config-status", "", "only agents whose configuration is APPLIED, APPLYING, FAILED or drifted (comma-separated: any of them)")
	cmd.Flags().StringVar(&f.Selector, "selector", "", "only agents whose attributes meet these conditions, comma-separated: key=value, key!=value, key in (a, b), key notin (a, b)")
	cmd.Flags().BoolVar(&assignmentErrors, "assignment-errors", false, "only agents that fleets select but that belong to none")
	cmd.Flags().BoolVar(&unassigned, "unassigned", false, "only agents that belong to no fleet (those with an assignment error included)")
	cmd.Flags().IntVar(&limit, "limit", 0, "at most this many agents (0: all)")
	return cmd
}

// printAgents lists the agents by name, then id: the API gives every
// agent's page in the store's order, and people look for names.
func printAgents(g *globals, as []client.Agent) {
	if len(as) == 0 {
		fmt.Fprintln(g.stdout, "no agents")
		return
	}
	as = slices.Clone(as)
	slices.SortStableFunc(as, func(a, b client.Agent) int {
		return cmp.Or(strings.Compare(a.DisplayName, b.DisplayName), strings.Compare(a.ID, b.ID))
	})
	w := table(g.stdout)
	fmt.Fprintln(w, "NAME\tID\tFLEET\tSTATE\tVERSION\tCONFIG\tHEALTH\tLAST SEEN")
	for _, a := range as {
		row(w, a.DisplayName, a.ID, orDash(a.Fleet), a.State(), orDash(a.Version), configText(a.Config), healthText(a.Health), stamp(a.LastSeen))
	}
	_ = w.Flush()
}

// configText is the reported status, and "drifted" when the agent runs
// another configuration than the one it should.
func configText(c client.AgentConfig) string {
	s := orDash(c.Status)
	if c.Drifted {
		s += ", drifted"
	}
	return s
}

// healthText is healthy or unhealthy, with the unhealthy components out of
// all when the agent reports a component tree: "unhealthy (1/6 components)";
// "no health reports" for an agent that sends none.
func healthText(h client.AgentHealth) string {
	if !h.Reported {
		return "no health reports"
	}
	s := "unhealthy"
	if h.Healthy {
		s = "healthy"
	}
	if c := h.Components; c != nil && c.UnhealthyCount > 0 {
		s += fmt.Sprintf(" (%d/%d components)", c.UnhealthyCount, c.Total)
	}
	return s
}

func agentsGetCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "get ID|NAME",
		Short: "Show an agent by its instance UID or display name, with its rollout targets",
		Long: `Get shows one agent: its instance UID, or else its display name (host.name,
else service.instance.id). A name that several agents share is refused
(409 agent_ambiguous) with their ids: ask again by one of them.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			a, err := c.GetAgent(cmd.Context(), args[0])
			if err != nil {
				return g.failed(err)
			}
			return g.show(a, func() { printAgent(g, a) })
		},
	}
}

// ambiguous reports an agent_ambiguous as a table of the agents that share
// the name, with what tells them apart, instead of the detail's one line:
//
//	myrctl: 409 agent_ambiguous: 2 agents are named "vm"; ask again by one of these ids:
//	  ID   FLEET  STATE    LAST SEEN             host.id
//	  a07  edge   online   2026-11-30T09:00:00Z  i-1
//	  a08  -      offline  2026-11-29T17:42:10Z  i-2
func (g *globals) ambiguous(p *client.Problem) {
	cs := p.Candidates
	count := fmt.Sprintf("%d agents are", len(cs))
	if len(cs) >= schema.MaxCandidates {
		count = fmt.Sprintf("%d agents (or more) are", len(cs))
	}
	fmt.Fprintf(g.stderr, "myrctl: %d %s: %s named %q; ask again by one of these ids:\n", p.Status, p.Code, count, cs[0].DisplayName)
	keys := map[string]bool{}
	for _, c := range cs {
		for k := range c.DifferingAttributes {
			keys[k] = true
		}
	}
	attrs := slices.Sorted(maps.Keys(keys))
	w := table(g.stderr)
	row(w, append([]string{"  ID", "FLEET", "STATE", "LAST SEEN"}, attrs...)...)
	for _, c := range cs {
		cells := []string{"  " + c.ID, orDash(c.Fleet), c.State(), stamp(c.LastSeen)}
		for _, k := range attrs {
			cells = append(cells, orDash(c.DifferingAttributes[k]))
		}
		row(w, cells...)
	}
	_ = w.Flush()
	if g.json() {
		_ = g.printJSON(p)
	}
}

func printAgent(g *globals, a client.AgentDetail) {
	w := table(g.stdout)
	fmt.Fprintf(w, "Agent\t%s\n", a.DisplayName)
	fmt.Fprintf(w, "ID\t%s\n", a.ID)
	fleet := orDash(a.Fleet)
	switch {
	case a.AssignmentError != "":
		fleet += " (" + a.AssignmentError + ")"
	case a.Fleet == "":
		fleet += " (no fleet selects it)"
	}
	fmt.Fprintf(w, "Fleet\t%s\n", fleet)
	fmt.Fprintf(w, "State\t%s · last seen %s · connected %s\n", a.Agent.State(), stamp(a.LastSeen), stamp(a.ConnectedAt))
	version := orDash(a.Version)
	switch a.TargetVersion {
	case "":
	case a.Version:
		version += " (the target)"
	default:
		version += " (target " + a.TargetVersion + ")"
	}
	fmt.Fprintf(w, "Version\t%s\n", version)
	if u := a.Updater; u != nil {
		fmt.Fprintf(w, "Updater\t%s\n", linkText(u))
	}
	if c := a.Serves; c != nil {
		fmt.Fprintf(w, "Serves\t%s\n", linkText(c))
	}
	cfg := configText(a.Config) + " · desired " + orDash(shortRef(a.Config.DesiredHash)) + " · reported " + orDash(shortRef(a.Config.ReportedHash)) +
		" · effective " + orDash(shortRef(a.Config.EffectiveHash))
	if a.Config.Error != "" {
		cfg += " · " + a.Config.Error
	}
	fmt.Fprintf(w, "Config\t%s\n", cfg)
	health := healthText(a.Health)
	for _, s := range []string{a.Health.Status, a.Health.LastError} {
		if s != "" {
			health += " · " + s
		}
	}
	fmt.Fprintf(w, "Health\t%s\n", health)
	components := "none reported"
	if c := a.Health.Components; c != nil {
		components = fmt.Sprintf("%d, %d unhealthy", c.Total, c.UnhealthyCount)
		if len(c.Unhealthy) > 0 {
			components += ": " + strings.Join(c.Unhealthy, ", ")
		}
	}
	fmt.Fprintf(w, "Components\t%s\n", components)
	_ = w.Flush()

	fmt.Fprintln(g.stdout, "Attributes")
	w = table(g.stdout)
	for _, k := range slices.Sorted(maps.Keys(a.Attributes)) {
		row(w, "  "+k, a.Attributes[k])
	}
	_ = w.Flush()

	if len(a.Targets) == 0 {
		fmt.Fprintln(g.stdout, "Targets: none")
		return
	}
	fmt.Fprintln(g.stdout, "Targets")
	w = table(g.stdout)
	row(w, "  ROLLOUT", "KIND", "WAVE", "STATUS", "TO", "ROLLOUT STATUS")
	for _, t := range a.Targets {
		status := string(t.Status)
		if t.Reason != "" {
			status += " (" + t.Reason + ")"
		}
		row(w, "  "+t.RolloutID, string(t.Kind), strconv.Itoa(t.Wave), status, shortRef(t.ToRef), string(t.RolloutStatus))
	}
	_ = w.Flush()
}

// linkText names the other end of an updater's link: the updater that
// installs a collector's versions, or the collector an updater serves.
func linkText(l *schema.AgentLink) string {
	switch {
	case !l.Known:
		return l.ID + " (not in the inventory)"
	case l.Online:
		return l.DisplayName + " (" + l.ID + ") · online"
	}
	return l.DisplayName + " (" + l.ID + ") · offline"
}
