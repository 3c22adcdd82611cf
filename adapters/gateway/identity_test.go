package gateway

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/open-telemetry/opamp-go/protobufs"
	"google.golang.org/protobuf/proto"

	"github.com/myriarch/myriarch/core/agent"
)

const acceptsSettings = uint64(protobufs.AgentCapabilities_AgentCapabilities_ReportsStatus |
	protobufs.AgentCapabilities_AgentCapabilities_ReportsHealth |
	protobufs.AgentCapabilities_AgentCapabilities_AcceptsOpAMPConnectionSettings)

var uid2 = []byte{0x01, 0x92, 0xf1, 0xc4, 0, 0, 0x70, 0, 0x80, 0, 0, 0, 0, 0, 0, 0x02}

const id2 = "0192f1c4-0000-7000-8000-000000000002"

// hello is an agent's first message: its description, healthy.
func hello(uid []byte, host string, caps uint64) *protobufs.AgentToServer {
	m := msg(withCapabilities(caps), withDesc(desc([]*protobufs.KeyValue{str("service.name", "otelcol"), str("service.version", "0.110.0")},
		str("host.name", host))), withHealth(hl(true, agent.StatusOK, "", 1, nil)))
	m.InstanceUid = uid
	return m
}

// credentialOf is the bearer credential an offer carries.
func credentialOf(t *testing.T, resp *protobufs.ServerToAgent) string {
	t.Helper()
	o := resp.GetConnectionSettings().GetOpamp()
	for _, hd := range o.GetHeaders().GetHeaders() {
		if hd.GetKey() == "Authorization" {
			if c, ok := strings.CutPrefix(hd.GetValue(), "Bearer "); ok {
				return c
			}
		}
	}
	t.Fatalf("no credential offered in %v", resp)
	return ""
}

// enroll connects agent uid with the fleet's token, takes the credential
// offered, and reconnects with it, as an agent applying the offer does.
func enroll(t *testing.T, h *harness, uid []byte, host string) (*rawWS, string) {
	t.Helper()
	w, _, err := h.dialWS(token)
	must(t, err)
	cred := credentialOf(t, w.send(hello(uid, host, acceptsSettings)))
	_ = w.conn.Close()
	// the second connection is a later one, as on a real clock: a late
	// disconnect of the first must not take the agent offline
	h.clock.advance(time.Millisecond)
	w, _, err = h.dialWS(cred)
	must(t, err)
	if resp := w.send(hello(uid, host, acceptsSettings)); resp.GetErrorResponse() != nil || resp.GetConnectionSettings() != nil {
		t.Fatalf("the agent with its credential: %v", resp)
	}
	return w, cred
}

// closedBy reports whether the gateway closed the connection without
// answering.
func (w *rawWS) closedBy() bool {
	must(w.t, w.conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, _, err := w.conn.ReadMessage()
	return err != nil && !strings.Contains(err.Error(), "timeout")
}

// The first connection of an instance UID binds a credential, which the
// store keeps as a digest, and offers it with the endpoint to reconnect to.
func TestIdentity_FirstConnectionBindsAndOffers(t *testing.T) {
	st := newMemCreds()
	h := startHarness(t, st, func(c *Config) { c.Heartbeat = 15 * time.Second })
	w, _, err := h.dialWS(token)
	must(t, err)
	resp := w.send(hello(uid1, "host-1", acceptsSettings))
	cred := credentialOf(t, resp)
	o := resp.GetConnectionSettings().GetOpamp()
	if o.GetDestinationEndpoint() != "ws://"+h.addr+"/v1/opamp" || o.GetHeartbeatIntervalSeconds() != 15 {
		t.Fatalf("offer: endpoint %q heartbeat %d", o.GetDestinationEndpoint(), o.GetHeartbeatIntervalSeconds())
	}
	if !strings.HasPrefix(cred, CredentialPrefix) || len(cred) < len(CredentialPrefix)+43 {
		t.Fatalf("credential %q: want %s and 256 bits", cred, CredentialPrefix)
	}
	stored, _, _, _, _ := st.AgentCredential(context.Background(), id1)
	if stored != digest(cred) || strings.Contains(stored, cred) {
		t.Fatalf("the store holds %q, want the digest of the credential only", stored)
	}
	if got := st.get(id1); !got.Online || got.Attributes["host.name"] != "host-1" {
		t.Fatalf("the enrolling message was not recorded: %+v", got)
	}
	// The same connection keeps speaking with the fleet's token.
	if r := w.send(msg(func(m *protobufs.AgentToServer) { m.InstanceUid = uid1 })); r.GetErrorResponse() != nil || r.GetConnectionSettings() != nil {
		t.Fatalf("a heartbeat after the offer: %v", r)
	}
}

// The attack of issue 36: with the fleet's token, or with another agent's
// credential, a connection claims an enrolled agent's UID with a new
// description and an unhealthy status. It is refused (dropped, closed,
// logged with its source and the UID) and the real agent is untouched: its
// name, fleet, health, connection and liveness.
func TestIdentity_ImpostorIsRefusedAndTheAgentUntouched(t *testing.T) {
	for _, tc := range []struct {
		name  string
		token func(otherCred string) string
	}{
		{name: "fleet token", token: func(string) string { return token }},
		{name: "another agent's credential", token: func(other string) string { return other }},
		{name: "a made-up credential", token: func(string) string { return CredentialPrefix + "guessed" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newMemCreds()
			h := startHarness(t, st)
			real, _ := enroll(t, h, uid1, "host-1")
			_, otherCred := enroll(t, h, uid2, "host-2")
			// the enrollments' first connections close on their own time:
			// their writes settle before the attack is measured
			for last := -1; last != st.writeCount(); time.Sleep(50 * time.Millisecond) {
				last = st.writeCount()
			}
			st.store.Lock()
			a := st.store.Agents[id1]
			a.Fleet = "edge"
			st.store.Agents[id1] = a
			st.store.Unlock()
			before := st.get(id1)
			writes := st.writeCount()

			imp, _, err := h.dialWS(tc.token(otherCred))
			must(t, err)
			fake := hello(uid1, "impostor", acceptsSettings)
			fake.Health = hl(false, "StatusFatalError", "taken over", 2, nil)
			b, err := proto.Marshal(fake)
			must(t, err)
			imp.sendBytes(append([]byte{0}, b...))
			if !imp.closedBy() {
				t.Fatal("the impostor's connection was answered or left open")
			}
			h.eventually("the refusal logged", func() bool {
				return strings.Contains(h.logs.String(), `"msg":"refused a connection that claims another agent's identity","agent":"`+id1+`","remote":"127.0.0.1:`)
			})
			after := st.get(id1)
			if st.writeCount() != writes || after.DisplayName() != "host-1" || after.Fleet != "edge" || !after.Health.Healthy ||
				!after.Online || !after.ConnectedAt.Equal(before.ConnectedAt) || after.Task != before.Task {
				t.Fatalf("the impostor changed the agent:\nbefore %+v\nafter  %+v", before, after)
			}
			if h.g.Len() != 2 {
				t.Fatalf("the task holds %d agents, want the two real ones", h.g.Len())
			}
			// The real agent's connection carries on.
			if r := real.send(msg(func(m *protobufs.AgentToServer) { m.InstanceUid = uid1 })); r.GetErrorResponse() != nil {
				t.Fatalf("the real agent after the attack: %v", r)
			}
			if got := st.get(id1); !got.Online {
				t.Fatal("the real agent went offline")
			}
		})
	}
}

// Plain HTTP: every request proves the agent, so an impostor's poll is
// refused with an error response and changes nothing.
func TestIdentity_PlainHTTPImpostorRefused(t *testing.T) {
	st := newMemCreds()
	h := startHarness(t, st)
	enroll(t, h, uid1, "host-1")
	before := st.get(id1)
	fake := hello(uid1, "impostor", acceptsSettings)
	fake.Health = hl(false, "StatusFatalError", "taken over", 2, nil)
	b, err := proto.Marshal(fake)
	must(t, err)
	resp, out := h.postHTTP(token, b)
	if resp.StatusCode != 200 || out.GetErrorResponse() == nil {
		t.Fatalf("the impostor's poll: %d %v", resp.StatusCode, out)
	}
	if after := st.get(id1); after.DisplayName() != "host-1" || !after.Health.Healthy || !after.ConnectedAt.Equal(before.ConnectedAt) {
		t.Fatalf("the impostor changed the agent: %+v", after)
	}
}

// Rotation: a credential older than RotateAfter is replaced by an offer on
// the agent's next connection; the old one stays valid until the agent
// presents the new one, and is refused after. An agent that comes back with
// the old one did not take the offer (lost with its connection): it gets
// another, which replaces the first.
func TestIdentity_RotationKeepsTheOldCredentialUntilTheNewIsUsed(t *testing.T) {
	st := newMemCreds()
	h := startHarness(t, st, func(c *Config) { c.Identity.RotateAfter = time.Hour })
	w, old := enroll(t, h, uid1, "host-1")
	_ = w.conn.Close()
	h.clock.advance(2 * time.Hour)
	w, _, err := h.dialWS(old)
	must(t, err)
	lost := credentialOf(t, w.send(hello(uid1, "host-1", acceptsSettings)))
	_ = w.conn.Close()
	again, _, err := h.dialWS(old)
	must(t, err)
	next := credentialOf(t, again.send(hello(uid1, "host-1", acceptsSettings)))
	_ = again.conn.Close()
	w, _, err = h.dialWS(next)
	must(t, err)
	if r := w.send(hello(uid1, "host-1", acceptsSettings)); r.GetErrorResponse() != nil || r.GetConnectionSettings() != nil {
		t.Fatalf("the new credential: %v", r)
	}
	if cur, pending, _, _, _ := st.AgentCredential(context.Background(), id1); cur != digest(next) || pending != "" {
		t.Fatalf("after the rotation the store holds %q %q", cur, pending)
	}
	for _, stale := range []string{old, lost} {
		c, _, err := h.dialWS(stale)
		must(t, err)
		b, _ := proto.Marshal(hello(uid1, "host-1", acceptsSettings))
		c.sendBytes(append([]byte{0}, b...))
		if !c.closedBy() {
			t.Fatal("a replaced credential is still accepted")
		}
	}
}

// An agent that cannot take a credential stays unbound and speaks with the
// fleet's token, unless a credential is required. After a reset, an
// enrolled agent enrolls again with the fleet's token, and its old
// credential is refused.
func TestIdentity_UnboundAgentsAndReset(t *testing.T) {
	noSettings := acceptsSettings &^ uint64(protobufs.AgentCapabilities_AgentCapabilities_AcceptsOpAMPConnectionSettings)
	st := newMemCreds()
	h := startHarness(t, st)
	w, _, err := h.dialWS(token)
	must(t, err)
	if r := w.send(hello(uid2, "legacy", noSettings)); r.GetErrorResponse() != nil || r.GetConnectionSettings().GetOpamp().GetHeaders() != nil {
		t.Fatalf("an agent that cannot take a credential: %v", r)
	}
	if cur, _, _, _, _ := st.AgentCredential(context.Background(), id2); cur != "" {
		t.Fatal("a credential was bound that the agent could not receive")
	}

	strict := startHarness(t, newMemCreds(), func(c *Config) { c.Identity.RequireCredential = true })
	w, _, err = strict.dialWS(token)
	must(t, err)
	b, _ := proto.Marshal(hello(uid2, "legacy", noSettings))
	w.sendBytes(append([]byte{0}, b...))
	if !w.closedBy() {
		t.Fatal("RequireCredential let an agent in without one")
	}

	w, old := enroll(t, h, uid1, "host-1")
	_ = w.conn.Close()
	st.reset(id1)
	stale, _, err := h.dialWS(old)
	must(t, err)
	b, _ = proto.Marshal(hello(uid1, "host-1", acceptsSettings))
	stale.sendBytes(append([]byte{0}, b...))
	if !stale.closedBy() {
		t.Fatal("a credential reset is still accepted")
	}
	enroll(t, h, uid1, "host-1")
}

// An operator's rotation request, with no age rule: the connected agent
// keeps speaking with its credential; its next connection is offered a new
// one, once (the offer answers the request); the old one stays valid until
// the agent presents the new one, and is refused after.
func TestIdentity_RequestedRotation(t *testing.T) {
	st := newMemCreds()
	h := startHarness(t, st)
	w, old := enroll(t, h, uid1, "host-1")
	st.requestRotation(id1)
	if r := w.send(hello(uid1, "host-1", acceptsSettings)); r.GetErrorResponse() != nil || r.GetConnectionSettings() != nil {
		t.Fatalf("the open connection after the request: %v", r)
	}
	again, _, err := h.dialWS(old)
	must(t, err)
	next := credentialOf(t, again.send(hello(uid1, "host-1", acceptsSettings)))
	if r := w.send(hello(uid1, "host-1", acceptsSettings)); r.GetErrorResponse() != nil || r.GetConnectionSettings() != nil {
		t.Fatalf("the old credential before the new one is used: %v", r)
	}
	_ = again.conn.Close()
	_ = w.conn.Close()
	n, _, err := h.dialWS(next)
	must(t, err)
	if r := n.send(hello(uid1, "host-1", acceptsSettings)); r.GetErrorResponse() != nil || r.GetConnectionSettings() != nil {
		t.Fatalf("the new credential: %v (no second offer wanted)", r)
	}
	if cur, pending, _, asked, _ := st.AgentCredential(context.Background(), id1); cur != digest(next) || pending != "" || asked {
		t.Fatalf("after the rotation the store holds %q %q asked %v", cur, pending, asked)
	}
	c, _, err := h.dialWS(old)
	must(t, err)
	b, _ := proto.Marshal(hello(uid1, "host-1", acceptsSettings))
	c.sendBytes(append([]byte{0}, b...))
	if !c.closedBy() {
		t.Fatal("the replaced credential is still accepted")
	}
}

// dialWithKey connects with the fleet's token and an agent key header.
func (h *harness) dialWithKey(keys ...string) *rawWS {
	hdr := http.Header{"Authorization": {"Bearer " + token}}
	for _, k := range keys {
		hdr.Add(AgentKeyHeader, k)
	}
	conn, _, err := websocket.DefaultDialer.Dial("ws://"+h.addr+"/v1/opamp", hdr)
	must(h.t, err)
	h.t.Cleanup(func() { _ = conn.Close() })
	return &rawWS{t: h.t, conn: conn}
}

// An agent that brings its own key (the supervisor, which cannot keep an
// offered credential across its restarts) is bound to it at its first
// connection and offered nothing, whatever it accepts; after a restart it
// comes back with the same token and key and is let in. The fleet's token
// alone, another key, or a malformed key header cannot speak for it, and a
// malformed key does not enroll a new agent either.
func TestIdentity_AgentKey(t *testing.T) {
	key := strings.Repeat("k", 40)
	st := newMemCreds()
	h := startHarness(t, st)
	w := h.dialWithKey(key)
	if r := w.send(hello(uid1, "host-1", acceptsSettings)); r.GetErrorResponse() != nil || r.GetConnectionSettings() != nil {
		t.Fatalf("first connection with a key: %v", r)
	}
	if cur, _, _, _, _ := st.AgentCredential(context.Background(), id1); cur == "" || strings.Contains(cur, key) {
		t.Fatalf("bound %q: want the digest of the key", cur)
	}
	_ = w.conn.Close()
	for deadline := time.Now().Add(5 * time.Second); st.get(id1).Online; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the closed connection was not recorded")
		}
	}
	again := h.dialWithKey(key) // the supervisor restarted
	if r := again.send(hello(uid1, "host-1", acceptsSettings)); r.GetErrorResponse() != nil || r.GetConnectionSettings() != nil {
		t.Fatalf("the same key after a restart: %v", r)
	}
	writes := st.writeCount()
	for name, dial := range map[string]func() *rawWS{
		"the fleet's token alone": func() *rawWS { w, _, err := h.dialWS(token); must(t, err); return w },
		"another key":             func() *rawWS { return h.dialWithKey(strings.Repeat("x", 40)) },
		"a short key":             func() *rawWS { return h.dialWithKey("short") },
		"two keys":                func() *rawWS { return h.dialWithKey(key, key) },
	} {
		imp := dial()
		b, _ := proto.Marshal(hello(uid1, "impostor", 0))
		imp.sendBytes(append([]byte{0}, b...))
		if !imp.closedBy() {
			t.Errorf("%s spoke for a keyed agent", name)
		}
	}
	if st.writeCount() != writes || st.get(id1).Attributes["host.name"] != "host-1" {
		t.Fatalf("the refused connections changed the agent: %+v", st.get(id1))
	}
	short := h.dialWithKey("short")
	b, _ := proto.Marshal(hello(uid2, "typo", acceptsSettings))
	short.sendBytes(append([]byte{0}, b...))
	if !short.closedBy() {
		t.Fatal("a malformed key enrolled a new agent")
	}
	if cur, _, _, _, _ := st.AgentCredential(context.Background(), id2); cur != "" {
		t.Fatal("a malformed key bound a credential")
	}
	strict := startHarness(t, newMemCreds(), func(c *Config) { c.Identity.RequireCredential = true })
	if r := strict.dialWithKey(key).send(hello(uid1, "host-1", 0)); r.GetErrorResponse() != nil {
		t.Fatalf("RequireCredential refused an agent with its own key: %v", r)
	}
	st.reset(id1) // the host's key was replaced: an operator resets
	w = h.dialWithKey(strings.Repeat("n", 40))
	if r := w.send(hello(uid1, "host-1", 0)); r.GetErrorResponse() != nil {
		t.Fatalf("the new key after a reset: %v", r)
	}
}
