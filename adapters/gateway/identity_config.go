package gateway

import "time"

// IdentityConfig is how a gateway task holds agents to their own
// credentials (identity.go). It takes effect when the agent store is also
// a Credentials store, as adapters/store is.
type IdentityConfig struct {
	// Endpoint is the OpAMP URL an agent is to reconnect to with its
	// credential, sent in the offer (the collector's supervisor replaces
	// its whole server settings with an offer, so an empty endpoint would
	// leave it nowhere to connect). Behind a load balancer that ends TLS,
	// set the URL agents use (wss://…/v1/opamp) ["": the URL of the request,
	// from its Host, path and TLS or X-Forwarded-Proto].
	Endpoint string
	// CACertPEM, when set, is offered with the credential as the CA that
	// signs the gateway's certificate: the supervisor stops verifying the
	// server's certificate after an offer without one.
	CACertPEM string
	// RequireCredential refuses an agent that cannot take a credential (it
	// does not declare AcceptsOpAMPConnectionSettings) instead of letting it
	// speak with the enrollment token alone.
	RequireCredential bool
	// RotateAfter offers a new credential to an agent connecting with one
	// bound longer ago; the old one stays valid until the agent uses the new
	// one [0: never].
	RotateAfter time.Duration
}
