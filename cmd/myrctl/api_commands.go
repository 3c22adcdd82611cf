package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"

	"github.com/spf13/cobra"

	"github.com/myriarch/myriarch/adapters/client"
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

// client checks the output format and the API's URL and returns a client
// of the API; a bad format or URL is a usage error.
func (g *globals) client() (*client.Client, error) {
	if g.output != "text" && g.output != "json" {
		return nil, fmt.Errorf("--output must be text or json, not %q", g.output)
	}
	api := g.apiURL()
	if err := checkAPIURL(api); err != nil {
		return nil, err
	}
	c := client.New(api, g.bearer())
	c.UserAgent = "myrctl"
	return c, nil
}

// checkAPIURL refuses an API URL that no request could use, such as
// 127.0.0.1:8080 without its scheme, before anything is sent.
func checkAPIURL(raw string) error {
	u, err := url.Parse(raw)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.RawQuery == "" && u.Fragment == "" {
		return nil
	}
	shown := raw
	if err == nil {
		shown = u.Redacted()
	}
	return fmt.Errorf("--api / MYRIARCH_API must be the API's http or https URL, such as %s or %s/api/v1, not %q", defaultAPI, defaultAPI, shown)
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
//
// An API that cannot be reached is "myrctl: cannot reach the API at <url>
// (<reason>): ..." with how to start it or point myrctl elsewhere.
func (g *globals) failed(err error) error {
	var p *client.Problem
	var unreachable *client.UnreachableError
	if errors.As(err, &unreachable) {
		fmt.Fprintf(g.stderr, "myrctl: %s: %s\n", unreachable.Error(), reachHint(unreachable.BaseURL))
		return exitError{code: 1}
	}
	if !errors.As(err, &p) {
		fmt.Fprintln(g.stderr, "myrctl:", err)
		return exitError{code: 1}
	}
	if p.Status == http.StatusUnauthorized {
		g.unauthenticated(p)
		return exitError{code: 1}
	}
	if len(p.Candidates) > 0 {
		g.ambiguous(p)
		return exitError{code: 1}
	}
	fmt.Fprintln(g.stderr, "myrctl:", p.Error())
	if p.Permission != "" {
		fmt.Fprintln(g.stderr, "  missing permission:", p.Permission)
	}
	for _, is := range p.Issues {
		fmt.Fprintln(g.stderr, " ", is.String())
	}
	if noSuchPath(p) {
		fmt.Fprintf(g.stderr, "  is %s the API's base URL? set --api / MYRIARCH_API\n", client.Base(g.apiURL()))
	}
	if g.json() {
		_ = g.printJSON(p)
	}
	return exitError{code: 1}
}

// unauthenticated reports a 401 in myrctl's terms: the API's detail speaks
// of the Authorization header, which a user of myrctl sets with --token or
// MYRIARCH_TOKEN. Without a token the line says so; with one, that this API
// does not know it.
func (g *globals) unauthenticated(p *client.Problem) {
	local := ""
	if isLocal(g.apiURL()) {
		local = " (make run prints the local stack's tokens)"
	}
	if g.bearer() == "" {
		q := *p
		q.Detail = "myrctl sent no token: set MYRIARCH_TOKEN or pass --token" + local
		fmt.Fprintln(g.stderr, "myrctl:", q.Error())
	} else {
		fmt.Fprintln(g.stderr, "myrctl:", p.Error())
		fmt.Fprintf(g.stderr, "  %s does not know the token of --token / MYRIARCH_TOKEN: check it%s\n", client.Base(g.apiURL()), local)
	}
	if g.json() {
		_ = g.printJSON(p)
	}
}

// reachHint says what to do about an API that cannot be reached: start the
// local stack when the URL is this machine's, and in any case how to point
// myrctl at another API.
func reachHint(base string) string {
	if isLocal(base) {
		return "start it with make run, or set --api / MYRIARCH_API"
	}
	return "check the URL and the network, or set --api / MYRIARCH_API"
}

// isLocal reports whether the URL is this machine's (localhost or a
// loopback address): the local stack's, most likely.
func isLocal(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	host := u.Hostname()
	ip := net.ParseIP(host)
	return host == "localhost" || (ip != nil && ip.IsLoopback())
}

// noSuchPath reports whether the answer says the path does not exist: the
// API's 404 not_found, anything's 404 that is no problem document, or API
// Gateway's 403 for a path without a route. Most often the --api URL has a
// path the API does not have.
func noSuchPath(p *client.Problem) bool {
	switch {
	case p.Status == http.StatusNotFound:
		return p.Code == "" || p.Code == "not_found"
	case p.Status == http.StatusForbidden && p.Code == "":
		return p.Detail == "Missing Authentication Token"
	}
	return false
}
