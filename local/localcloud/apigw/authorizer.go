package apigw

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"
)

// authorizer is an AWS::ApiGateway::Authorizer of type TOKEN.
type authorizer struct {
	id          string // Ref of the authorizer, in its SourceArn .../authorizers/<id>
	functionArn string
	header      string         // the identity source's header
	validation  *regexp.Regexp // IdentityValidationExpression, matched whole; nil when unset
	ttl         time.Duration  // AuthorizerResultTtlInSeconds; 0: no cache
	cache       *authCache
}

// defaultAuthorizerTTL is API Gateway's when AuthorizerResultTtlInSeconds
// is unset.
const defaultAuthorizerTTL = 300 * time.Second

func readAuthorizer(id string, props map[string]any) (*authorizer, error) {
	if typ, _ := props["Type"].(string); typ != "TOKEN" {
		return nil, fmt.Errorf("authorizer type %q is not emulated (TOKEN only)", typ)
	}
	if _, ok := props["AuthorizerCredentials"]; ok {
		return nil, fmt.Errorf("AuthorizerCredentials is not emulated (the function's resource policy is)")
	}
	src, _ := props["IdentitySource"].(string)
	header, ok := strings.CutPrefix(src, "method.request.header.")
	if !ok || header == "" {
		return nil, fmt.Errorf("IdentitySource %q is not method.request.header.<name>", src)
	}
	uri, _ := props["AuthorizerUri"].(string)
	fn, err := functionOf(uri)
	if err != nil {
		return nil, err
	}
	a := &authorizer{id: id, functionArn: fn, header: header, ttl: defaultAuthorizerTTL, cache: &authCache{entries: map[string]cachedPolicy{}}}
	if expr, _ := props["IdentityValidationExpression"].(string); expr != "" {
		// API Gateway matches the whole token (Java's Pattern.matches).
		if a.validation, err = regexp.Compile(`^(?:` + expr + `)$`); err != nil {
			return nil, fmt.Errorf("IdentityValidationExpression: %w", err)
		}
	}
	if s, ok := props["AuthorizerResultTtlInSeconds"].(float64); ok {
		a.ttl = time.Duration(s) * time.Second
	}
	return a, nil
}

// token is the request's identity, or why the authorizer is not called: a
// missing header or one the validation expression refuses is a 401
// without invoking the function.
func (a *authorizer) token(h http.Header) (string, bool) {
	tok := h.Get(a.header)
	if tok == "" || (a.validation != nil && !a.validation.MatchString(tok)) {
		return "", false
	}
	return tok, true
}

// authorizerOutput is what a TOKEN authorizer returns.
type authorizerOutput struct {
	principalID string
	policy      json.RawMessage
	context     map[string]string // stringified, as the proxy event carries them
}

// parseAuthorizerOutput checks an authorizer's answer as API Gateway
// does: an object with a principalId and a policyDocument object, and a
// context whose values are strings, numbers or booleans, which the
// proxy event carries as strings (1 → "1", true → "true").
func parseAuthorizerOutput(payload []byte) (authorizerOutput, error) {
	var raw struct {
		PrincipalID    *string                    `json:"principalId"`
		PolicyDocument json.RawMessage            `json:"policyDocument"`
		Context        map[string]json.RawMessage `json:"context"`
	}
	if err := json.Unmarshal(payload, &raw); err != nil {
		return authorizerOutput{}, fmt.Errorf("authorizer output: %w", err)
	}
	if raw.PrincipalID == nil {
		return authorizerOutput{}, errors.New("authorizer output: no principalId")
	}
	if !bytes.HasPrefix(bytes.TrimSpace(raw.PolicyDocument), []byte("{")) {
		return authorizerOutput{}, errors.New("authorizer output: no policyDocument object")
	}
	out := authorizerOutput{principalID: *raw.PrincipalID, policy: raw.PolicyDocument, context: map[string]string{}}
	for k, v := range raw.Context {
		s, err := contextValue(v)
		if err != nil {
			return authorizerOutput{}, fmt.Errorf("authorizer output: context %s: %w", k, err)
		}
		out.context[k] = s
	}
	return out, nil
}

// contextValue is a context value as a string: a JSON string's text, a
// number's or a boolean's literal. Objects, arrays and null are refused.
func contextValue(v json.RawMessage) (string, error) {
	t := bytes.TrimSpace(v)
	switch {
	case len(t) == 0 || bytes.Equal(t, []byte("null")):
		return "", errors.New("null is not a string, number or boolean")
	case t[0] == '"':
		var s string
		err := json.Unmarshal(t, &s)
		return s, err
	case t[0] == '{' || t[0] == '[':
		return "", errors.New("objects and arrays are not allowed")
	}
	return string(t), nil // a number or true/false, as written
}

// authCache keeps an authorizer's answers by token until their TTL ends.
// Safe for concurrent use.
type authCache struct {
	mu      sync.Mutex
	entries map[string]cachedPolicy
}

type cachedPolicy struct {
	out     authorizerOutput
	expires time.Time
}

func (c *authCache) get(token string, now time.Time) (authorizerOutput, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[token]
	if !ok || !now.Before(e.expires) {
		delete(c.entries, token)
		return authorizerOutput{}, false
	}
	return e.out, true
}

func (c *authCache) put(token string, out authorizerOutput, expires time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[token] = cachedPolicy{out: out, expires: expires}
}
