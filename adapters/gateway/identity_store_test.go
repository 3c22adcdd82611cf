package gateway

import (
	"context"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/myriarch/myriarch/adapters/store"
	"github.com/myriarch/myriarch/local/storetest"
)

var _ Credentials = (*store.Store)(nil)

// On adapters/store (DynamoDB Local): an agent enrolls and reconnects with its
// credential; the fleet's token claiming its UID is refused, and the
// stored agent keeps its name and health.
func TestIdentity_WithStore(t *testing.T) {
	st := storetest.New(t)
	h := startHarness(t, st)
	real, cred := enroll(t, h, uid1, "host-1")
	rec, err := st.GetAgentRecord(context.Background(), id1)
	must(t, err)
	if rec == nil || rec.Credential.Digest != digest(cred) {
		t.Fatalf("stored credential: %+v", rec)
	}
	imp, _, err := h.dialWS(token)
	must(t, err)
	fake := hello(uid1, "impostor", acceptsSettings)
	fake.Health = hl(false, "StatusFatalError", "taken over", 2, nil)
	b, err := proto.Marshal(fake)
	must(t, err)
	imp.sendBytes(append([]byte{0}, b...))
	if !imp.closedBy() {
		t.Fatal("the impostor was answered")
	}
	a, _, err := st.GetAgent(context.Background(), id1)
	must(t, err)
	if a.DisplayName() != "host-1" || !a.Health.Healthy || !a.Online {
		t.Fatalf("the impostor changed the stored agent: %+v", a)
	}
	if r := real.send(hello(uid1, "host-1", acceptsSettings)); r.GetErrorResponse() != nil {
		t.Fatalf("the real agent: %v", r)
	}
}

// On adapters/store: a rotation requested through the store is offered at the
// agent's next connection, and the new credential replaces the old.
func TestIdentity_RequestedRotationWithStore(t *testing.T) {
	st := storetest.New(t)
	h := startHarness(t, st)
	w, old := enroll(t, h, uid1, "host-1")
	_ = w.conn.Close()
	if found, had, err := st.RequestCredentialRotation(context.Background(), id1); err != nil || !found || !had {
		t.Fatalf("request: found %v had %v err %v", found, had, err)
	}
	again, _, err := h.dialWS(old)
	must(t, err)
	next := credentialOf(t, again.send(hello(uid1, "host-1", acceptsSettings)))
	_ = again.conn.Close()
	n, _, err := h.dialWS(next)
	must(t, err)
	if r := n.send(hello(uid1, "host-1", acceptsSettings)); r.GetErrorResponse() != nil || r.GetConnectionSettings() != nil {
		t.Fatalf("the new credential: %v", r)
	}
	rec, err := st.GetAgentRecord(context.Background(), id1)
	must(t, err)
	if rec.Credential.Digest != digest(next) || rec.Credential.Rotate {
		t.Fatalf("stored credential after the rotation: %+v", rec.Credential)
	}
}
