package apigw

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// failure is a request that API Gateway answers itself, with the gateway
// response of a type: its default status and message unless the template
// overrides them (AWS::ApiGateway::GatewayResponse).
type failure struct {
	typ     string // "UNAUTHORIZED", "ACCESS_DENIED", ...
	status  int    // the default status of this occurrence
	message *string
	// messageKey is the body's key: "message", except for an authorizer's
	// Deny, which API Gateway answers with {"Message": ...}.
	messageKey string
	errorType  string // x-amzn-ErrorType, as the service sets it
	cause      error  // for the log only; never sent
}

func msg(s string) *string { return &s }

// The failures API Gateway answers, with the defaults the service gives
// them (bodies as observed: {"message": null} for an authorizer's failure).
func missingAuthToken() failure {
	return failure{typ: "MISSING_AUTHENTICATION_TOKEN", status: 403, message: msg("Missing Authentication Token"), errorType: "MissingAuthenticationTokenException"}
}
func unauthorized() failure {
	return failure{typ: "UNAUTHORIZED", status: 401, message: msg("Unauthorized"), errorType: "UnauthorizedException"}
}
func accessDenied() failure {
	return failure{typ: "ACCESS_DENIED", status: 403, message: msg("User is not authorized to access this resource"), messageKey: "Message", errorType: "AccessDeniedException"}
}

// authorizerError is the 500 of an authorizer that failed otherwise than
// with "Unauthorized": an error, a malformed answer, a timeout, no
// permission to invoke it (x-amzn-ErrorType AuthorizerConfigurationException).
func authorizerError(cause error) failure {
	return failure{typ: "AUTHORIZER_CONFIGURATION_ERROR", status: 500, errorType: "AuthorizerConfigurationException", cause: cause}
}
func integrationTimeout() failure {
	return failure{typ: "INTEGRATION_TIMEOUT", status: 504, message: msg("Endpoint request timed out")}
}

// integrationFailure is the 502 of a function that failed, answered
// something other than a proxy response, or could not be invoked.
func integrationFailure(cause error) failure {
	return failure{typ: "INTEGRATION_FAILURE", status: 502, message: msg("Internal server error"), errorType: "InternalServerErrorException", cause: cause}
}

// requestTooLarge is API Gateway's answer when Lambda refuses the event
// (over its 6 MB synchronous request): 413 {"message": "Request Too Long"}
// with x-amzn-ErrorType BadRequestException, as observed.
func requestTooLarge() failure {
	return failure{typ: "REQUEST_TOO_LARGE", status: 413, message: msg("Request Too Long"), errorType: "BadRequestException"}
}

// permissionMissing is a method whose function does not let API Gateway
// invoke it ("Invalid permissions on Lambda function").
func permissionMissing(cause error) failure {
	return failure{typ: "API_CONFIGURATION_ERROR", status: 500, message: msg("Internal server error"), errorType: "InternalServerErrorException", cause: cause}
}

// gatewayResponse is an AWS::ApiGateway::GatewayResponse.
type gatewayResponse struct {
	status   int               // 0: the type's default
	headers  map[string]string // gatewayresponse.header.<name> = 'literal'
	template string            // application/json; "" keeps the default body
}

// defaultTemplate is the body API Gateway gives every gateway response
// that the API does not override.
const defaultTemplate = `{"message":$context.error.messageString}`

// templateVariable is what a response template may reference here; API
// Gateway's templates are Velocity, of which only these variables are
// emulated.
var templateVariable = regexp.MustCompile(`\$context\.(error\.messageString|error\.message|error\.responseType|requestId)\b`)

// checkTemplate refuses Velocity that the front would not render.
func checkTemplate(tpl string) error {
	rest := templateVariable.ReplaceAllString(tpl, "")
	for _, v := range []string{"$context", "$input", "$util", "$stageVariables", "$method", "#set", "#if", "#foreach"} {
		if strings.Contains(rest, v) {
			return fmt.Errorf("response template uses %s, which is not emulated", v)
		}
	}
	return nil
}

// responseSet is the API's gateway responses by type, DEFAULT_4XX and
// DEFAULT_5XX included.
type responseSet map[string]gatewayResponse

// override is the API's response for a failure: its own type's, else the
// DEFAULT_4XX or DEFAULT_5XX of the failure's status class.
func (s responseSet) override(f failure) (gatewayResponse, bool) {
	if r, ok := s[f.typ]; ok {
		return r, true
	}
	class := "DEFAULT_4XX"
	if f.status >= 500 {
		class = "DEFAULT_5XX"
	}
	r, ok := s[class]
	return r, ok
}

// render is the status, headers and body of a failure.
func (s responseSet) render(f failure, requestID string) (int, http.Header, []byte) {
	status, tpl := f.status, defaultTemplate
	if f.messageKey != "" {
		tpl = `{"` + f.messageKey + `":$context.error.messageString}`
	}
	h := http.Header{"Content-Type": {"application/json"}}
	if f.errorType != "" {
		h.Set("X-Amzn-Errortype", f.errorType)
	}
	if r, ok := s.override(f); ok {
		if r.status != 0 {
			status = r.status
		}
		if r.template != "" {
			tpl = r.template
		}
		for k, v := range r.headers {
			h.Set(k, v)
		}
	}
	return status, h, []byte(expand(tpl, f, requestID))
}

// expand substitutes the template's variables: messageString is the
// message as a JSON string (null when there is none), message the bare
// text.
func expand(tpl string, f failure, requestID string) string {
	return templateVariable.ReplaceAllStringFunc(tpl, func(v string) string {
		switch strings.TrimPrefix(v, "$context.") {
		case "error.messageString":
			b, _ := json.Marshal(f.message)
			return string(b)
		case "error.message":
			if f.message == nil {
				return ""
			}
			return *f.message
		case "error.responseType":
			return f.typ
		}
		return requestID
	})
}

// parseGatewayResponse reads one AWS::ApiGateway::GatewayResponse.
func parseGatewayResponse(props map[string]any) (string, gatewayResponse, error) {
	typ, _ := props["ResponseType"].(string)
	if typ == "" {
		return "", gatewayResponse{}, fmt.Errorf("no ResponseType")
	}
	var r gatewayResponse
	if s, ok := props["StatusCode"].(string); ok && s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return "", r, fmt.Errorf("%s: StatusCode %q", typ, s)
		}
		r.status = n
	}
	headers, err := responseHeaders(props["ResponseParameters"])
	if err != nil {
		return "", r, fmt.Errorf("%s: %w", typ, err)
	}
	r.headers = headers
	for ct, v := range asMap(props["ResponseTemplates"]) {
		tpl, _ := v.(string)
		if ct != "application/json" {
			return "", r, fmt.Errorf("%s: a response template for %s (only application/json is emulated)", typ, ct)
		}
		if err := checkTemplate(tpl); err != nil {
			return "", r, fmt.Errorf("%s: %w", typ, err)
		}
		r.template = tpl
	}
	return typ, r, nil
}

// responseHeaders reads gatewayresponse.header.<name> = 'literal'; a
// header mapped from the request (method.request.header.X) is not
// emulated.
func responseHeaders(v any) (map[string]string, error) {
	out := map[string]string{}
	for k, raw := range asMap(v) {
		name, ok := strings.CutPrefix(k, "gatewayresponse.header.")
		s, _ := raw.(string)
		if !ok || len(s) < 2 || s[0] != '\'' || s[len(s)-1] != '\'' {
			return nil, fmt.Errorf("response parameter %s = %v: only gatewayresponse.header.<name> = 'literal' is emulated", k, raw)
		}
		out[name] = s[1 : len(s)-1]
	}
	return out, nil
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
