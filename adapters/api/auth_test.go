package api

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNewTokenTable_RefusesBadEntries(t *testing.T) {
	good := TokenEntry{TokenSHA256: HashToken("t"), Actor: operator.Actor, DisplayName: "Dana", Role: RoleOperator}
	cases := []struct {
		name   string
		change func(*TokenEntry)
		want   string
	}{
		{name: "hash not hex", change: func(e *TokenEntry) { e.TokenSHA256 = "zz" }, want: "64 hex digits"},
		{name: "hash too short", change: func(e *TokenEntry) { e.TokenSHA256 = e.TokenSHA256[:62] }, want: "64 hex digits"},
		{name: "actor without kind", change: func(e *TokenEntry) { e.Actor = "6f1c9a52-8d0b-4c7e-9a55-2b1f0f8e7d31" }, want: "user:<uuid>"},
		{name: "actor gitops", change: func(e *TokenEntry) { e.Actor = "gitops" }, want: "user:<uuid>"},
		{name: "no display name", change: func(e *TokenEntry) { e.DisplayName = " " }, want: "displayName"},
		{name: "unknown role", change: func(e *TokenEntry) { e.Role = "root" }, want: "role"},
	}
	for _, c := range cases {
		e := good
		c.change(&e)
		if _, err := NewTokenTable([]TokenEntry{e}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error about %s", c.name, err, c.want)
		}
	}
	if _, err := NewTokenTable([]TokenEntry{good, good}); err == nil {
		t.Errorf("the same token twice was accepted")
	}
	if _, err := NewTokenTable([]TokenEntry{good}); err != nil {
		t.Errorf("a good entry was refused: %v", err)
	}
}

func TestAuthenticate(t *testing.T) {
	tt := tokenTable(t)
	cases := []struct {
		token string
		want  Principal
		err   error
	}{
		{token: tokens[RoleOperator], want: operator, err: nil},                           // a configured token
		{token: tokens[RoleAdmin], want: admin, err: nil},                                 // another one
		{token: tokens[RoleOperator] + "x", want: Principal{}, err: ErrUnauthenticated},   // a near miss
		{token: "", want: Principal{}, err: ErrUnauthenticated},                           // none
		{token: HashToken(tokens[RoleAdmin]), want: Principal{}, err: ErrUnauthenticated}, // the stored hash is no token
	}
	for _, c := range cases {
		got, err := tt.Authenticate(c.token)
		if got != c.want || !errors.Is(err, c.err) && err != c.err {
			t.Errorf("Authenticate(%q) = %+v, %v; want %+v, %v", c.token, got, err, c.want, c.err)
		}
	}
	if tt.DisplayName(operator.Actor) != "Dana Operator" || tt.DisplayName("gitops") != "gitops" {
		t.Errorf("display names: %q %q", tt.DisplayName(operator.Actor), tt.DisplayName("gitops"))
	}
}

func TestMintToken_AuthenticatesAsItsPrincipalAndIsNotStored(t *testing.T) {
	token, entry, err := MintToken(admin)
	if err != nil {
		t.Fatal(err)
	}
	other, _, _ := MintToken(admin)
	if token == other || !strings.HasPrefix(token, "myr_") {
		t.Errorf("tokens %q and %q: want distinct myr_ tokens", token, other)
	}
	if entry.TokenSHA256 != HashToken(token) || strings.Contains(entry.TokenSHA256, token) {
		t.Errorf("entry %+v keeps more than the hash", entry)
	}
	tt, err := NewTokenTable([]TokenEntry{entry})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := tt.Authenticate(token); err != nil || p != admin {
		t.Errorf("minted token authenticates as %+v, %v; want %+v", p, err, admin)
	}
	if _, _, err := MintToken(Principal{Actor: "bob", DisplayName: "Bob", Role: RoleAdmin}); err == nil {
		t.Errorf("minted a token for an invalid actor")
	}
}

func TestLoadTokens_FromEnvironmentOrFile(t *testing.T) {
	doc := `[{"tokenSha256": "` + HashToken("s") + `", "actor": "` + viewer.Actor + `", "displayName": "Vera", "role": "viewer"}]`
	file := filepath.Join(t.TempDir(), "tokens.json")
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for name, getenv := range map[string]func(string) string{
		"inline": env(map[string]string{"MYRIARCH_TOKENS": doc}),
		"file":   env(map[string]string{"MYRIARCH_TOKENS_FILE": file}),
	} {
		tt, err := LoadTokens(getenv)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if p, err := tt.Authenticate("s"); err != nil || p.Role != RoleViewer {
			t.Errorf("%s: %+v %v", name, p, err)
		}
	}
	if _, err := LoadTokens(env(nil)); err == nil {
		t.Errorf("no configuration was accepted")
	}
	if _, err := ParseTokens([]byte(`[{"tokenSha256": "` + HashToken("s") + `", "actor": "` + viewer.Actor + `", "displayName": "V", "role": "viewer", "admin": true}]`)); err == nil {
		t.Errorf("an unknown field was accepted")
	}
}

func TestRoles_Permissions(t *testing.T) {
	cases := []struct {
		role Role
		perm Permission
		can  bool
	}{
		{role: RoleViewer, perm: PermRead, can: true},              // reads for viewer
		{role: RoleViewer, perm: PermOperate, can: false},          // no actions
		{role: RoleViewer, perm: PermSetVersion, can: false},       // no version choice
		{role: RoleOperator, perm: PermOperate, can: true},         // rollouts:operate for operator
		{role: RoleOperator, perm: PermSetVersion, can: true},      // fleets:set_version for operator
		{role: RoleOperator, perm: PermApplyRevisions, can: false}, // revisions are the admin's
		{role: RoleAdmin, perm: PermApplyRevisions, can: true},     // admin applies revisions
		{role: RoleAdmin, perm: PermSetVersion, can: true},         // and everything else
		{role: "", perm: PermRead, can: false},                     // no role, nothing
	}
	for _, c := range cases {
		if got := c.role.Can(c.perm); got != c.can {
			t.Errorf("%q can %s = %v, want %v", c.role, c.perm, got, c.can)
		}
	}
}

func TestPrincipalFromAuthorizer(t *testing.T) {
	if p, ok := PrincipalFromAuthorizer(AuthorizerContext(operator)); !ok || p != operator {
		t.Errorf("round trip = %+v, %v", p, ok)
	}
	cases := []map[string]any{
		{},                                  // nothing
		{"actor": operator.Actor},           // no role
		{"actor": "", "role": "admin"},      // no actor
		{"actor": "x", "role": "superuser"}, // unknown role
	}
	for _, m := range cases {
		if p, ok := PrincipalFromAuthorizer(m); ok {
			t.Errorf("%v accepted as %+v", m, p)
		}
	}
}
