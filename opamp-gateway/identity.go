package main

import (
	"fmt"
	"os"

	"github.com/myriarch/myriarch/adapters/gateway"
)

// identity is the gateway's agent identity settings: behind a load
// balancer that ends TLS the gateway cannot tell the URL agents use, so
// -agent-endpoint names it; the CA file is read once, at start.
func (o options) identity() (gateway.IdentityConfig, error) {
	c := gateway.IdentityConfig{Endpoint: o.agentEndpoint, RequireCredential: o.requireCredential, RotateAfter: o.rotateAfter}
	if o.agentCAFile != "" {
		pem, err := os.ReadFile(o.agentCAFile)
		if err != nil {
			return c, fmt.Errorf("-agent-ca-file: %w", err)
		}
		c.CACertPEM = string(pem)
	}
	return c, nil
}
