package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/myriarch/myriarch/adapters/client"
)

func auditCmd(g *globals) *cobra.Command {
	var typ, id string
	var limit int
	cmd := &cobra.Command{
		Use:   "audit --target-type TYPE --target-id ID",
		Short: "List the audit entries of a fleet, rollout or revision, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			if limit < 0 {
				return fmt.Errorf("--limit must be 0 (every entry) or more, not %d", limit)
			}
			if strings.TrimSpace(typ) == "" || strings.TrimSpace(id) == "" {
				return fmt.Errorf("--target-type and --target-id must not be empty: give fleet, rollout, revision or release, and its name, id or commit")
			}
			es, err := c.AllAudit(cmd.Context(), typ, id, limit)
			if err != nil {
				return g.failed(err)
			}
			return g.show(client.Page[client.AuditEntry]{Items: es}, func() { printAudit(g, es) })
		},
	}
	cmd.Flags().StringVar(&typ, "target-type", "", "fleet, rollout, revision or release (id: <distribution>/<version>)")
	cmd.Flags().StringVar(&id, "target-id", "", "the fleet's name, the rollout's id or the commit")
	cmd.Flags().IntVar(&limit, "limit", 50, "at most this many entries (0: all)")
	_ = cmd.MarkFlagRequired("target-type")
	_ = cmd.MarkFlagRequired("target-id")
	return cmd
}

func printAudit(g *globals, es []client.AuditEntry) {
	if len(es) == 0 {
		fmt.Fprintln(g.stdout, "no audit entries")
		return
	}
	w := table(g.stdout)
	fmt.Fprintln(w, "AT\tACTOR\tACTION\tRESULT\tDETAILS")
	for _, e := range es {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", stamp(&e.At), e.ActorDisplayName, e.Action, e.Result, detailsText(e.Details))
	}
	_ = w.Flush()
}

// detailsText is key=value by key; values as JSON unless they are strings.
func detailsText(d map[string]any) string {
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		v, ok := d[k].(string)
		if !ok {
			b, _ := json.Marshal(d[k])
			v = string(b)
		}
		parts[i] = k + "=" + v
	}
	return strings.Join(parts, " ")
}

func meCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "me",
		Short: "Show who the token is: actor, role and permissions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			m, err := c.Me(cmd.Context())
			if err != nil {
				return g.failed(err)
			}
			return g.show(m, func() {
				fmt.Fprintf(g.stdout, "%s (%s), role %s: %s\n", m.DisplayName, m.Actor, m.Role, strings.Join(m.Permissions, ", "))
			})
		},
	}
}
