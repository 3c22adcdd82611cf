package api

import "net/http"

// Behind API Gateway a Lambda authorizer runs the same check (Authenticate)
// before the request reaches the API, and returns the principal in the
// context of its policy. API Gateway hands that context to the API Lambda
// as requestContext.authorizer; functions/api reads it there (through the
// proxy adapter) and passes a TrustedPrincipal that calls
// PrincipalFromAuthorizer. Locally no authorizer runs and the API checks
// the bearer token itself.

// Keys of the authorizer context.
const (
	authorizerActor       = "actor"
	authorizerDisplayName = "displayName"
	authorizerRole        = "role"
)

// AuthorizerContext is the context an authorizer returns for a principal
// (string values only, as API Gateway requires).
func AuthorizerContext(p Principal) map[string]any {
	return map[string]any{authorizerActor: p.Actor, authorizerDisplayName: p.DisplayName, authorizerRole: string(p.Role)}
}

// PrincipalFromAuthorizer reads the principal back from the context API
// Gateway passes on; ok is false when it is incomplete or names no role.
func PrincipalFromAuthorizer(m map[string]any) (Principal, bool) {
	str := func(k string) string { s, _ := m[k].(string); return s }
	p := Principal{Actor: str(authorizerActor), DisplayName: str(authorizerDisplayName), Role: Role(str(authorizerRole))}
	if p.Actor == "" || !p.Role.Valid() {
		return Principal{}, false
	}
	if p.DisplayName == "" {
		p.DisplayName = p.Actor
	}
	return p, true
}

// TrustedPrincipal returns the principal an authorizer already established
// for a request, if any. Only set it where nothing but the authorizer can
// reach the API (API Gateway in front of the Lambda).
type TrustedPrincipal func(r *http.Request) (Principal, bool)
