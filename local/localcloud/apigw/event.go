package apigw

import (
	"encoding/base64"
	"mime"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// request is what the proxy event is made of: the HTTP request as read,
// the route it matched and what the front decided about it.
type request struct {
	r         *http.Request
	path      string // after the stage: "/ui/app.js"
	body      []byte
	route     match
	auth      map[string]any // requestContext.authorizer; nil without an authorizer
	requestID string
	now       time.Time
}

// proxyEvent is the Lambda proxy integration's event for a request, as
// API Gateway's REST API builds it.
func (a *restAPI) proxyEvent(q request, account string) events.APIGatewayProxyRequest {
	headers, multiHeaders := eventHeaders(q.r)
	query, multiQuery := eventQuery(q.r)
	ev := events.APIGatewayProxyRequest{
		Resource:                        q.route.res.path,
		Path:                            q.path,
		HTTPMethod:                      q.r.Method,
		Headers:                         headers,
		MultiValueHeaders:               multiHeaders,
		QueryStringParameters:           query,
		MultiValueQueryStringParameters: multiQuery,
		PathParameters:                  q.route.params,
		StageVariables:                  a.stageVariables,
		RequestContext:                  a.requestContext(q, account),
	}
	if len(q.body) > 0 {
		if a.isBinary(q.r.Header.Get("Content-Type")) {
			ev.Body, ev.IsBase64Encoded = base64.StdEncoding.EncodeToString(q.body), true
		} else {
			ev.Body = string(q.body)
		}
	}
	return ev
}

func (a *restAPI) requestContext(q request, account string) events.APIGatewayProxyRequestContext {
	host := q.r.Host
	return events.APIGatewayProxyRequestContext{
		AccountID:         account,
		ResourceID:        q.route.res.id,
		Stage:             a.stage,
		DomainName:        host,
		DomainPrefix:      strings.SplitN(host, ".", 2)[0],
		RequestID:         q.requestID,
		ExtendedRequestID: q.requestID,
		Protocol:          q.r.Proto,
		Identity:          events.APIGatewayRequestIdentity{SourceIP: clientIP(q.r), UserAgent: q.r.UserAgent()},
		ResourcePath:      q.route.res.path,
		Path:              "/" + a.stage + q.path,
		Authorizer:        q.auth,
		HTTPMethod:        q.r.Method,
		RequestTime:       q.now.UTC().Format("02/Jan/2006:15:04:05 -0700"),
		RequestTimeEpoch:  q.now.UnixMilli(),
		APIID:             a.id,
	}
}

// eventHeaders are the request's headers, the last value of each in
// headers and all of them in multiValueHeaders, with what API Gateway
// adds: Host and the X-Forwarded-* of the client's connection. Names are
// in Go's canonical form (API Gateway keeps the client's case).
func eventHeaders(r *http.Request) (map[string]string, map[string][]string) {
	multi := map[string][]string{}
	for k, vs := range r.Header {
		multi[k] = append([]string(nil), vs...)
	}
	multi["Host"] = []string{r.Host}
	multi["X-Forwarded-For"] = []string{strings.Join(append(r.Header.Values("X-Forwarded-For"), clientIP(r)), ", ")}
	proto, port := "http", "80"
	if r.TLS != nil {
		proto, port = "https", "443"
	}
	if addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if _, p, err := net.SplitHostPort(addr.String()); err == nil {
			port = p
		}
	}
	multi["X-Forwarded-Proto"], multi["X-Forwarded-Port"] = []string{proto}, []string{port}
	single := make(map[string]string, len(multi))
	for k, vs := range multi {
		single[k] = vs[len(vs)-1]
	}
	return single, multi
}

// eventQuery is the query string, decoded; both maps are null when there
// is none.
func eventQuery(r *http.Request) (map[string]string, map[string][]string) {
	q := r.URL.Query()
	if len(q) == 0 {
		return nil, nil
	}
	single := make(map[string]string, len(q))
	for k, vs := range q {
		single[k] = vs[len(vs)-1]
	}
	return single, map[string][]string(q)
}

func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// isBinary reports whether a content type is one of the API's binary
// media types ("image/png", "image/*" or "*/*").
func (a *restAPI) isBinary(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil || mt == "" {
		return false
	}
	typ, _, _ := strings.Cut(mt, "/")
	for _, b := range a.binaryTypes {
		b = strings.ToLower(b)
		if b == mt || b == "*/*" || b == typ+"/*" {
			return true
		}
	}
	return false
}
