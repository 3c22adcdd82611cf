package gateway

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/open-telemetry/opamp-go/protobufs"
)

// An agent's identity belongs to the agent. The fleet's token (Config.Tokens)
// only enrolls: on the first connection of an instance UID that has no
// credential, the gateway binds a new credential to the UID (the store keeps
// its SHA-256 only, bound by a conditional write, so that two first
// connections bind once) and offers it to the agent in ConnectionSettings
// (opamp.headers: Authorization: Bearer <credential>, with the endpoint to
// reconnect to). From then on a connection claiming that UID must present
// that credential: the fleet's token or another agent's credential is
// refused before anything of the message is used, its connection closed
// and logged with its source and the UID. The rules, with the store's
// current credential C, an offered one N (a rotation) and what the
// connection presents:
//
//	presents          | no credential bound           | C bound
//	the fleet's token | bind a new C and offer it (*) | refused
//	C                 | refused (reset: enroll again) | accepted; offers N when C is older than RotateAfter or an operator asked (**)
//	N                 | refused                       | accepted, N becomes C (C is no longer accepted)
//	anything else     | refused                       | refused
//
// (*) Only to an agent that declares AcceptsOpAMPConnectionSettings: one
// that cannot take an offer stays unbound and speaks with the fleet's
// token, unless RequireCredential refuses it.
// (**) An operator's request (POST /api/v1/agents/{id}/actions/rotate-credential)
// is answered by the next offer, which clears it; C stays valid until the
// agent presents N, so that a rotation never cuts an agent off.
//
// An agent can bring its own key instead (AgentKeyHeader, beside the
// fleet's token): its digest is bound at the first connection and nothing
// is offered, and from then on the UID speaks only with that key (or is
// reset). This is for agents that cannot keep an offer across their own
// restarts: the OpenTelemetry supervisor applies offered settings but does
// not store them, so after a restart it came back with the fleet's token
// alone and was refused until an operator reset it. The key lives in the
// supervisor's configuration (a file or variable written at install), so
// it survives. With a key, the rows above read:
//
//	presents               | no credential bound      | C bound
//	token + key K          | bind K, offer nothing    | accepted when K is C, else refused
//
// and an operator's rotation request waits: a key is changed by the host,
// then the credential reset.

// Credentials is the store of the agents' own credentials, as hex SHA-256
// digests (adapters/store). An Agents store that implements it turns identity on.
type Credentials interface {
	// AgentCredential is the agent's credential and the offer of a pending
	// rotation, "" for none (and for an unknown agent), and whether an
	// operator asked for a rotation.
	AgentCredential(ctx context.Context, id string) (digest, next string, boundAt time.Time, rotate bool, err error)
	// BindCredential binds digest to an agent that has none, creating an
	// unknown agent; bound is false when it has one.
	BindCredential(ctx context.Context, id, digest string, at time.Time) (bound bool, err error)
	// OfferCredential records next while the agent's credential is digest.
	OfferCredential(ctx context.Context, id, digest, next string) (ok bool, err error)
	// PromoteCredential makes the offered next the agent's credential.
	PromoteCredential(ctx context.Context, id, next string, at time.Time) (ok bool, err error)
}

// CredentialPrefix starts every agent credential, so that a connection can
// be told from one with a fleet token before its first message names the
// agent.
const CredentialPrefix = "myr_agent_"

// errRefused is a connection that claims an agent it cannot prove it is.
var errRefused = errors.New("identity refused")

// AgentKeyHeader carries an agent's own key beside the fleet's token.
const AgentKeyHeader = "X-Myriarch-Agent-Key"

// Bounds of an agent key: at least 128 bits as hex or base64, and a
// header that only looks like one is not hashed whole.
const (
	minAgentKeyChars = 32
	maxAgentKeyChars = 256
)

// presented is what a connection authenticated with.
type presented struct {
	enrollment bool   // a fleet token
	digest     string // hex SHA-256 of an agent credential, or with a fleet token of the agent's own key; else ""
	keyed      bool   // digest is of an agent key (AgentKeyHeader)
	badKey     string // why the agent key header was not taken
	remote     string // the source, for the log
	endpoint   string // the OpAMP URL offered with a credential
}

// credentials is the store of credentials; nil turns identity off.
func (g *Gateway) credentials() Credentials {
	c, _ := g.agents.(Credentials)
	return c
}

// authenticate is the check of OnConnecting: a fleet token, or with
// identity on anything shaped like an agent credential, which is judged
// with the first message that names the agent.
func (g *Gateway) authenticate(r *http.Request) (p presented, ok bool) {
	token := bearer(r)
	p = presented{remote: r.RemoteAddr, endpoint: g.offerEndpoint(r)}
	switch {
	case g.tokens.Load().valid(token):
		p.enrollment = true
		if key, ok := r.Header[http.CanonicalHeaderKey(AgentKeyHeader)]; ok && g.credentials() != nil {
			p.takeKey(key)
		}
		return p, true
	case g.credentials() != nil && strings.HasPrefix(token, CredentialPrefix) && len(token) <= maxCredentialChars:
		p.digest = digest(token)
		return p, true
	}
	return p, false
}

// takeKey takes the agent key of the header's values; one that is not a
// key is remembered as such, and the connection is refused when it names
// its agent (a typo must not enroll the agent without its key).
func (p *presented) takeKey(values []string) {
	switch k := strings.TrimSpace(strings.Join(values, ",")); {
	case len(values) != 1:
		p.badKey = "more than one " + AgentKeyHeader + " header"
	case len(k) < minAgentKeyChars || len(k) > maxAgentKeyChars:
		p.badKey = fmt.Sprintf("%s of %d characters: want %d to %d", AgentKeyHeader, len(k), minAgentKeyChars, maxAgentKeyChars)
	default:
		p.digest, p.keyed = digest("myriarch/agent-key\x00"+k), true
	}
}

// maxCredentialChars bounds what is hashed of a header that only looks
// like a credential.
const maxCredentialChars = 128

// offerEndpoint is the URL an agent is to reconnect to: the configured one,
// else the URL of the request.
func (g *Gateway) offerEndpoint(r *http.Request) string {
	if g.cfg.Identity.Endpoint != "" {
		return g.cfg.Identity.Endpoint
	}
	secure := r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
	scheme := map[[2]bool]string{{true, true}: "wss", {true, false}: "ws", {false, true}: "https", {false, false}: "http"}[[2]bool{isWebSocket(r), secure}]
	return scheme + "://" + r.Host + r.URL.Path
}

// admit decides whether the connection may speak for the agent id; offer is
// the connection settings to send when a credential was bound or a rotation
// offered. caps are the capabilities of the message.
func (g *Gateway) admit(ctx context.Context, p presented, id string, caps uint64) (offer *protobufs.ConnectionSettingsOffers, err error) {
	creds := g.credentials()
	if creds == nil {
		return nil, nil
	}
	var cur, next string
	var boundAt time.Time
	var asked bool
	if err := g.credentialCall(ctx, func(ctx context.Context) (err error) {
		cur, next, boundAt, asked, err = creds.AgentCredential(ctx, id)
		return err
	}); err != nil {
		return nil, err
	}
	accepts := caps&uint64(protobufs.AgentCapabilities_AgentCapabilities_AcceptsOpAMPConnectionSettings) != 0
	switch {
	case p.badKey != "":
		return nil, fmt.Errorf("%w: %s", errRefused, p.badKey)
	case p.keyed && cur == "":
		return nil, g.bindKey(ctx, creds, p, id)
	case p.keyed && same(p.digest, cur):
		return nil, nil
	case p.keyed:
		return nil, fmt.Errorf("%w: the agent key is not the one bound to the agent", errRefused)
	case p.enrollment && cur == "" && accepts:
		return g.enroll(ctx, creds, p, id)
	case p.enrollment && cur == "" && g.cfg.Identity.RequireCredential:
		return nil, fmt.Errorf("%w: the agent cannot take a credential (no AcceptsOpAMPConnectionSettings) and one is required", errRefused)
	case p.enrollment && cur == "":
		return nil, nil
	case p.enrollment:
		return nil, fmt.Errorf("%w: the agent has its own credential; the enrollment token cannot speak for it", errRefused)
	case cur != "" && same(p.digest, cur):
		return g.rotate(ctx, creds, p, id, cur, g.rotationDue(boundAt, asked), accepts)
	case next != "" && same(p.digest, next):
		return nil, g.promote(ctx, creds, id, next)
	case cur == "":
		return nil, fmt.Errorf("%w: the agent has no credential (reset?); it enrolls with the fleet's token", errRefused)
	}
	return nil, fmt.Errorf("%w: the credential is not the agent's", errRefused)
}

// enroll binds a new credential to the agent and offers it; a connection
// that lost the race to bind is refused like any other without it.
func (g *Gateway) enroll(ctx context.Context, creds Credentials, p presented, id string) (*protobufs.ConnectionSettingsOffers, error) {
	token, d, err := newCredential()
	if err != nil {
		return nil, err
	}
	var bound bool
	if err := g.credentialCall(ctx, func(ctx context.Context) (err error) {
		bound, err = creds.BindCredential(ctx, id, d, g.now())
		return err
	}); err != nil {
		return nil, err
	}
	if !bound {
		return nil, fmt.Errorf("%w: another connection bound the agent's credential first", errRefused)
	}
	g.log.Info("agent enrolled: credential bound and offered", "agent", id, "remote", p.remote)
	return g.credentialOffer(token, p.endpoint), nil
}

// bindKey binds the agent's own key at its first connection; nothing is
// offered.
func (g *Gateway) bindKey(ctx context.Context, creds Credentials, p presented, id string) error {
	var bound bool
	if err := g.credentialCall(ctx, func(ctx context.Context) (err error) {
		bound, err = creds.BindCredential(ctx, id, p.digest, g.now())
		return err
	}); err != nil {
		return err
	}
	if !bound {
		return fmt.Errorf("%w: another connection bound the agent's credential first", errRefused)
	}
	g.log.Info("agent enrolled: its own key bound", "agent", id, "remote", p.remote)
	return nil
}

// rotationDue is why a rotation is offered: an operator asked for one, or
// the current credential is older than RotateAfter; "" for none.
func (g *Gateway) rotationDue(boundAt time.Time, asked bool) string {
	if asked {
		return "requested"
	}
	if after := g.cfg.Identity.RotateAfter; after > 0 && g.now().Sub(boundAt) >= after {
		return "age"
	}
	return ""
}

// rotate offers a new credential when one is due; the current one stays
// valid until the agent uses the new. An agent that cannot take the offer
// keeps its request for a connection that can.
func (g *Gateway) rotate(ctx context.Context, creds Credentials, p presented, id, cur, due string, accepts bool) (*protobufs.ConnectionSettingsOffers, error) {
	if due == "" || !accepts {
		return nil, nil
	}
	token, d, err := newCredential()
	if err != nil {
		return nil, err
	}
	var ok bool
	if err := g.credentialCall(ctx, func(ctx context.Context) (err error) {
		ok, err = creds.OfferCredential(ctx, id, cur, d)
		return err
	}); err != nil || !ok {
		return nil, err // the agent is who it is: a rotation that did not happen waits for its next connection
	}
	g.log.Info("agent credential rotation offered", "agent", id, "remote", p.remote, "why", due)
	return g.credentialOffer(token, p.endpoint), nil
}

// promote makes the offered credential the agent's, the first time the
// agent presents it.
func (g *Gateway) promote(ctx context.Context, creds Credentials, id, next string) error {
	var ok bool
	if err := g.credentialCall(ctx, func(ctx context.Context) (err error) {
		ok, err = creds.PromoteCredential(ctx, id, next, g.now())
		return err
	}); err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: the offered credential was withdrawn", errRefused)
	}
	g.log.Info("agent credential rotated", "agent", id)
	return nil
}

// credentialOffer is the OpAMP connection settings that hand the agent its
// credential: the endpoint (a supervisor takes the offer as its whole server
// settings), the header, the heartbeat, and the CA when one is configured.
func (g *Gateway) credentialOffer(token, endpoint string) *protobufs.ConnectionSettingsOffers {
	o := &protobufs.OpAMPConnectionSettings{
		DestinationEndpoint:      endpoint,
		Headers:                  &protobufs.Headers{Headers: []*protobufs.Header{{Key: "Authorization", Value: "Bearer " + token}}},
		HeartbeatIntervalSeconds: uint64(g.cfg.Heartbeat / time.Second),
	}
	if pem := g.cfg.Identity.CACertPEM; pem != "" {
		o.Certificate = &protobufs.TLSCertificate{CaCert: []byte(pem)}
	}
	hash := sha256.Sum256([]byte("myriarch/credential\x00" + token + "\x00" + endpoint))
	return &protobufs.ConnectionSettingsOffers{Hash: hash[:], Opamp: o}
}

// credentialCall runs one store call of identity within a store slot and
// StoreTimeout, like the agent reads; a failure is answered as unavailable
// and the agent's next message tries again.
func (g *Gateway) credentialCall(ctx context.Context, f func(context.Context) error) error {
	select {
	case g.slots <- struct{}{}:
	case <-g.cfg.After(g.cfg.StoreTimeout):
		return fmt.Errorf("%w: no slot within %v", errBusy, g.cfg.StoreTimeout)
	}
	defer func() { <-g.slots }()
	sctx, cancel := g.storeCtx(ctx)
	defer cancel()
	return f(sctx)
}

// refuse answers a message whose connection claims an agent it is not: the
// message is dropped and a WebSocket closed (nothing is sent on it); a plain
// HTTP request, which has no connection to close, gets an error response.
func (l *link) refuse(msg *protobufs.AgentToServer, err error) *protobufs.ServerToAgent {
	id, _ := InstanceID(msg.GetInstanceUid()) // admit ran: the uid is an agent id
	l.g.log.Warn("refused a connection that claims another agent's identity", "agent", id, "remote", l.who.remote, "reason", err.Error())
	if l.plainHTTP {
		return errorResponse(msg, errRefused)
	}
	_ = l.conn.Disconnect() // an error means it is closed already
	return nil
}

// newCredential is a new agent credential and its digest: 256 random bits.
func newCredential() (token, d string, err error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", fmt.Errorf("agent credential: %w", err)
	}
	token = CredentialPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	return token, digest(token), nil
}

// same compares digests in constant time.
func same(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// digest is the hex SHA-256 the store keeps of a credential.
func digest(token string) string {
	d := sha256.Sum256([]byte(token))
	return hex.EncodeToString(d[:])
}
