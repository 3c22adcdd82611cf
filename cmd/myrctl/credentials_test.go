package main

import (
	"testing"

	"github.com/myriarch/myriarch/adapters/client"
	"github.com/myriarch/myriarch/local/client/clienttest"
)

func TestAgentsResetCredential(t *testing.T) {
	c, _ := inventory(t)
	c.srv.Store.SetCredential("e01")
	c.run(clienttest.ViewerToken, "agents", "reset-credential", "edge-gw-03").
		refused(t, "403 forbidden: the role viewer lacks the permission agents:reset_credential")
	c.run(clienttest.OperatorToken, "agents", "reset-credential", "e01", "--reason", "host reinstalled").ok(t).
		has(t, "credential of agent edge-gw-01 (e01) reset: it enrolls again with the enrollment token\n")
	if c.srv.Store.HasCredential("e01") {
		t.Fatal("the credential is still bound")
	}
	c.run(clienttest.OperatorToken, "agents", "reset-credential", "edge-gw-03").ok(t).
		has(t, "agent edge-gw-03 (e03) had no credential")
	out := decodeOut[client.CredentialReset](t, c.run(clienttest.AdminToken, "agents", "reset-credential", "e01", "-o", "json").ok(t))
	if out.ID != "e01" || out.HadCredential {
		t.Fatalf("json: %+v", out)
	}
	c.run(clienttest.OperatorToken, "agents", "reset-credential", "nobody").refused(t, "404 agent_not_found")
	c.run(clienttest.OperatorToken, "agents", "reset-credential", "edge-gw-01").refused(t, "409 agent_ambiguous")
	c.run(clienttest.OperatorToken, "agents", "reset-credential").usage(t, "accepts 1 arg(s)")
}

func TestAgentsRotateCredential(t *testing.T) {
	c, _ := inventory(t)
	c.srv.Store.SetCredential("e01")
	c.run(clienttest.ViewerToken, "agents", "rotate-credential", "e01").
		refused(t, "403 forbidden: the role viewer lacks the permission agents:reset_credential")
	c.run(clienttest.OperatorToken, "agents", "rotate-credential", "e01", "--reason", "yearly").ok(t).
		has(t, "rotation of the credential of agent edge-gw-01 (e01) requested: offered at its next connection\n")
	if !c.srv.Store.RotationRequested("e01") || !c.srv.Store.HasCredential("e01") {
		t.Fatal("the rotation was not requested, or the credential was dropped")
	}
	out := decodeOut[client.CredentialRotation](t, c.run(clienttest.AdminToken, "agents", "rotate-credential", "e01", "-o", "json").ok(t))
	if out.ID != "e01" || out.RequestedAt.IsZero() {
		t.Fatalf("json: %+v", out)
	}
	c.run(clienttest.OperatorToken, "agents", "rotate-credential", "edge-gw-03").refused(t, "409 agent_no_credential")
	c.run(clienttest.OperatorToken, "agents", "rotate-credential", "nobody").refused(t, "404 agent_not_found")
	c.run(clienttest.OperatorToken, "agents", "rotate-credential").usage(t, "accepts 1 arg(s)")
}
