package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// agentsResetCredentialCmd is myrctl agents reset-credential: the way back
// in for an agent that lost its own credential, and the way to cut off one
// that leaked.
func agentsResetCredentialCmd(g *globals) *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "reset-credential ID|NAME",
		Short: "Forget an agent's own credential: its next connection with the enrollment token binds a new one",
		Long: `Reset-credential forgets the credential the gateway bound to the agent at its
first connection. From the agent's next connection on, the old credential is
refused, and a connection with the fleet's enrollment token binds and offers a
new one. Use it for an agent that lost its credential (a reinstalled host) or
whose credential leaked; a connection open now keeps its session until it
closes. The agent by instance UID or display name, as agents get. Audited as
agent.credential.reset; needs the permission agents:reset_credential.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			res, err := c.ResetAgentCredential(cmd.Context(), args[0], reason)
			if err != nil {
				return g.failed(err)
			}
			return g.show(res, func() {
				if !res.HadCredential {
					fmt.Fprintf(g.stdout, "agent %s (%s) had no credential: it enrolls with the enrollment token\n", res.DisplayName, res.ID)
					return
				}
				fmt.Fprintf(g.stdout, "credential of agent %s (%s) reset: it enrolls again with the enrollment token\n", res.DisplayName, res.ID)
			})
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why, for the audit log (at most 500 characters)")
	return cmd
}

// agentsRotateCredentialCmd is myrctl agents rotate-credential: a new
// credential for an agent without cutting it off.
func agentsRotateCredentialCmd(g *globals) *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "rotate-credential ID|NAME",
		Short: "Have the gateway offer an agent a new credential at its next connection",
		Long: `Rotate-credential asks the gateway to offer the agent a new credential at its
next connection, whatever the age of its current one. The current credential
stays valid until the agent presents the new one, and is refused from then on.
For a credential that leaked, use reset-credential. An agent without a
credential is refused (agent_no_credential). Audited as agent.credential.rotate;
needs the permission agents:reset_credential.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			res, err := c.RotateAgentCredential(cmd.Context(), args[0], reason)
			if err != nil {
				return g.failed(err)
			}
			return g.show(res, func() {
				fmt.Fprintf(g.stdout, "rotation of the credential of agent %s (%s) requested: offered at its next connection\n", res.DisplayName, res.ID)
			})
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why, for the audit log (at most 500 characters)")
	return cmd
}
