package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/myriarch/myriarch/pkg/client"
)

// addAPICommands adds the commands that talk to the API.
func addAPICommands(root *cobra.Command, g *globals) {
	root.AddCommand(applyCmd(g), planCmd(g), rolloutsCmd(g), fleetsCmd(g), agentsCmd(g), auditCmd(g), eventsCmd(g), meCmd(g), watchCmd(g))
	root.AddCommand(releasesCmd(g)) // releases and install plans
}

// group is a command that only holds others: alone it shows its help; an
// unknown subcommand is a usage error (cobra would show the help and exit 0).
func group(use, short string) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("unknown command %q for %q", args[0], cmd.CommandPath())
			}
			return cmd.Help()
		},
	}
}

// client checks the output format and returns a client of the API; a bad
// format is a usage error.
func (g *globals) client() (*client.Client, error) {
	if g.output != "text" && g.output != "json" {
		return nil, fmt.Errorf("--output must be text or json, not %q", g.output)
	}
	c := client.New(g.apiURL(), g.bearer())
	c.UserAgent = "myrctl"
	return c, nil
}

func (g *globals) json() bool { return g.output == "json" }

// printJSON writes v as indented JSON, the API's shape for scripts.
func (g *globals) printJSON(v any) error {
	enc := json.NewEncoder(g.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// show prints v as JSON or with text; errors of writing are usage-free
// failures.
func (g *globals) show(v any, text func()) error {
	if g.json() {
		return g.printJSON(v)
	}
	text()
	return nil
}

// failed reports an error of the API and ends the command with status 1:
// "myrctl: <status> <code>: <detail>" and the problem's issues on stderr;
// with --output json the problem document is also printed on stdout.
func (g *globals) failed(err error) error {
	var p *client.Problem
	if !errors.As(err, &p) {
		fmt.Fprintln(g.stderr, "myrctl:", err)
		return exitError{code: 1}
	}
	fmt.Fprintln(g.stderr, "myrctl:", p.Error())
	if p.Permission != "" {
		fmt.Fprintln(g.stderr, "  missing permission:", p.Permission)
	}
	for _, is := range p.Issues {
		fmt.Fprintln(g.stderr, " ", is.String())
	}
	if g.json() {
		_ = g.printJSON(p)
	}
	return exitError{code: 1}
}
