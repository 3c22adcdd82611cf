package simfleet

import (
	"context"
	"strings"
	"time"

	"github.com/open-telemetry/opamp-go/protobufs"
)

// A simulated agent takes the credential the gateway binds to it at its
// first connection (offered in OpAMP connection settings: opamp.headers with
// Authorization: Bearer <credential>), reconnects with it as the collector's
// supervisor does, and keeps it in its state (StateDir) across restarts. The
// configured endpoint is kept: the offer's is the URL the agent dialed.

// bearer is the token the agent connects with: its own credential, else
// the fleet's token.
func (a *agent) bearer() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.credential != "" {
		return a.credential
	}
	return a.cfg.Token
}

// onConnectionSettings takes an offered credential for the worker, which
// reconnects with it; the callback itself must return (the client waits).
func (a *agent) onConnectionSettings(_ context.Context, s *protobufs.OpAMPConnectionSettings) error {
	cred := offeredBearer(s)
	if cred == "" {
		return nil // a heartbeat or endpoint change only: nothing to reconnect for
	}
	a.mu.Lock()
	changed := cred != a.credential
	if changed {
		a.pendingCredential = cred
	}
	a.mu.Unlock()
	if changed {
		select {
		case a.wake <- struct{}{}:
		default:
		}
	}
	return nil
}

// offeredBearer is the bearer token of an offer's Authorization header.
func offeredBearer(s *protobufs.OpAMPConnectionSettings) string {
	for _, h := range s.GetHeaders().GetHeaders() {
		if strings.EqualFold(h.GetKey(), "Authorization") {
			if t, ok := strings.CutPrefix(h.GetValue(), "Bearer "); ok {
				return strings.TrimSpace(t)
			}
		}
	}
	return ""
}

func (a *agent) takeCredential() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	cred := a.pendingCredential
	a.pendingCredential = ""
	return cred
}

// reconnect replaces the client by one that presents cred, with the
// agent's whole state; reports wait for it (cmu).
func (a *agent) reconnect(ctx context.Context, cred string) {
	a.mu.Lock()
	a.credential = cred
	a.mu.Unlock()
	a.persist()
	a.cmu.Lock()
	defer a.cmu.Unlock()
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	a.warn("stop to reconnect", a.client.Stop(stopCtx))
	cancel()
	if err := a.connect(ctx); err != nil {
		a.log.Error("reconnect with the agent's credential", "err", err)
		return
	}
	a.log.Debug("reconnected with the agent's own credential")
}
