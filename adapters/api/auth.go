package api

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
)

// Role of a principal.
type Role string

const (
	RoleViewer   Role = "viewer"
	RoleOperator Role = "operator"
	RoleAdmin    Role = "admin"
)

// Permission names what a request needs.
type Permission string

const (
	PermRead           Permission = "read"
	PermOperate        Permission = "rollouts:operate"
	PermSetVersion     Permission = "fleets:set_version"
	PermApplyRevisions Permission = "revisions:apply"
	PermManageReleases Permission = "releases:manage"
	// PermResetCredential resets an agent's own credential (credentials.go).
	PermResetCredential Permission = "agents:reset_credential"
)

// permissions of each role. fleets:set_version is separate from
// rollouts:operate so that it can be granted on its own later.
// releases:manage (writing the release catalogue) is the admin's: which
// versions exist decides what every fleet's frame can offer.
// agents:reset_credential is the operators' too: it is how an agent that
// lost its credential (a reinstalled host) gets back in, a routine
// operation, and is separate so that it can be taken from them.
var permissions = map[Role][]Permission{
	RoleViewer:   {PermRead},
	RoleOperator: {PermRead, PermOperate, PermSetVersion, PermResetCredential},
	RoleAdmin:    {PermRead, PermOperate, PermSetVersion, PermResetCredential, PermApplyRevisions, PermManageReleases},
}

// Valid reports whether r is one of the three roles.
func (r Role) Valid() bool { _, ok := permissions[r]; return ok }

// Permissions lists what the role may do.
func (r Role) Permissions() []Permission { return slices.Clone(permissions[r]) }

// Can reports whether the role has the permission.
func (r Role) Can(p Permission) bool { return slices.Contains(permissions[r], p) }

// Principal is the authenticated caller.
type Principal struct {
	Actor       string `json:"actor"` // user:<uuid> or token:<uuid>
	DisplayName string `json:"displayName"`
	Role        Role   `json:"role"`
}

// ErrUnauthenticated is returned for a missing or unknown token.
var ErrUnauthenticated = errors.New("unauthenticated")

// Authenticator maps a bearer token to its principal. Both the API and the
// API Gateway authorizer call it, so the check is the same in both places.
type Authenticator interface {
	Authenticate(token string) (Principal, error)
}

// Directory names actors for people: the API shows display names where the
// store keeps actor references (createdBy, selectedBy, audit actors).
type Directory interface {
	DisplayName(actor string) string
}

// TokenEntry is one configured token: only the sha256 of the token is kept.
type TokenEntry struct {
	TokenSHA256 string `json:"tokenSha256"` // hex
	Actor       string `json:"actor"`
	DisplayName string `json:"displayName"`
	Role        Role   `json:"role"`
}

// TokenTable is the configured tokens. It implements Authenticator and
// Directory.
type TokenTable struct {
	entries []TokenEntry
	sums    [][]byte
}

var actorPattern = regexp.MustCompile(`^(user|token):[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// NewTokenTable checks the entries: a 64-digit hex hash, an actor
// user:<uuid> or token:<uuid>, a display name, a known role, no hash twice.
func NewTokenTable(entries []TokenEntry) (*TokenTable, error) {
	t := &TokenTable{}
	seen := map[string]bool{}
	for i, e := range entries {
		sum, err := hex.DecodeString(e.TokenSHA256)
		switch {
		case err != nil || len(sum) != sha256.Size:
			return nil, fmt.Errorf("token %d: tokenSha256 must be 64 hex digits", i)
		case !actorPattern.MatchString(e.Actor):
			return nil, fmt.Errorf("token %d: actor %q must be user:<uuid> or token:<uuid> (lower-case uuid)", i, e.Actor)
		case strings.TrimSpace(e.DisplayName) == "":
			return nil, fmt.Errorf("token %d: displayName is required", i)
		case !e.Role.Valid():
			return nil, fmt.Errorf("token %d: role %q must be viewer, operator or admin", i, e.Role)
		case seen[strings.ToLower(e.TokenSHA256)]:
			return nil, fmt.Errorf("token %d: the same token is configured twice", i)
		}
		seen[strings.ToLower(e.TokenSHA256)] = true
		t.entries = append(t.entries, e)
		t.sums = append(t.sums, sum)
	}
	return t, nil
}

// ParseTokens reads the token configuration: a JSON list of entries
// [{"tokenSha256": ..., "actor": ..., "displayName": ..., "role": ...}].
func ParseTokens(b []byte) (*TokenTable, error) {
	var entries []TokenEntry
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&entries); err != nil {
		return nil, fmt.Errorf("token configuration: not a JSON list of tokenSha256, actor, displayName and role: %w", err)
	}
	return NewTokenTable(entries)
}

// LoadTokens reads the token configuration from the environment: the JSON
// itself in MYRIARCH_TOKENS, or a file named by MYRIARCH_TOKENS_FILE.
func LoadTokens(getenv func(string) string) (*TokenTable, error) {
	if v := getenv("MYRIARCH_TOKENS"); v != "" {
		return ParseTokens([]byte(v))
	}
	if p := getenv("MYRIARCH_TOKENS_FILE"); p != "" {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("token configuration: %w", err)
		}
		return ParseTokens(b)
	}
	return nil, ErrNoTokens
}

// ErrNoTokens is LoadTokens's error when no token configuration is set.
var ErrNoTokens = errors.New("token configuration: set MYRIARCH_TOKENS or MYRIARCH_TOKENS_FILE")

// Entries are the table's entries, in the order it was given them.
func (t *TokenTable) Entries() []TokenEntry { return slices.Clone(t.entries) }

// Authenticate finds the principal of a token. Every entry is compared in
// constant time, and all of them, so that the time taken says nothing about
// which entry (if any) matched.
func (t *TokenTable) Authenticate(token string) (Principal, error) {
	if token == "" {
		return Principal{}, ErrUnauthenticated
	}
	sum := sha256.Sum256([]byte(token))
	found := -1
	for i, s := range t.sums {
		if subtle.ConstantTimeCompare(sum[:], s) == 1 {
			found = i
		}
	}
	if found < 0 {
		return Principal{}, ErrUnauthenticated
	}
	e := t.entries[found]
	return Principal{Actor: e.Actor, DisplayName: e.DisplayName, Role: e.Role}, nil
}

// DisplayName is the configured name of an actor; gitops and unknown actors
// (a token removed since) are shown as they are.
func (t *TokenTable) DisplayName(actor string) string {
	for _, e := range t.entries {
		if e.Actor == actor {
			return e.DisplayName
		}
	}
	return actor
}

// MintToken creates a random token for a principal and the entry that
// configures it. The token is shown once; only its hash is stored.
func MintToken(p Principal) (token string, entry TokenEntry, err error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", TokenEntry{}, fmt.Errorf("mint token: %w", err)
	}
	token = "myr_" + base64.RawURLEncoding.EncodeToString(b[:])
	entry = TokenEntry{TokenSHA256: HashToken(token), Actor: p.Actor, DisplayName: p.DisplayName, Role: p.Role}
	if _, err := NewTokenTable([]TokenEntry{entry}); err != nil {
		return "", TokenEntry{}, fmt.Errorf("mint token: %w", err)
	}
	return token, entry, nil
}

// HashToken is the stored form of a token: hex sha256.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// bearer extracts the token of an Authorization header.
func bearer(header string) string {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// BearerToken extracts the token of an Authorization header value
// ("Bearer <token>"); "" when the header has another scheme. The
// authorizer Lambda reads the header with it.
func BearerToken(header string) string { return bearer(header) }
