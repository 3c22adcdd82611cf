package apigw

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// proxyResponse is a Lambda proxy integration's answer, checked.
type proxyResponse struct {
	status int
	header http.Header
	body   []byte
	base64 bool
}

// proxyResponseKeys are all that API Gateway's REST API accepts; any
// other key makes the response malformed (a 502).
var proxyResponseKeys = map[string]bool{"statusCode": true, "headers": true, "multiValueHeaders": true, "body": true, "isBase64Encoded": true}

// parseProxyResponse checks a function's output as API Gateway does: a
// JSON object with an integer statusCode, string-valued headers, lists of
// strings in multiValueHeaders, a string (or null) body and a boolean
// isBase64Encoded, and nothing else.
func parseProxyResponse(payload []byte) (proxyResponse, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(payload, &raw); err != nil || raw == nil {
		return proxyResponse{}, fmt.Errorf("malformed Lambda proxy response: not a JSON object")
	}
	for k := range raw {
		if !proxyResponseKeys[k] {
			return proxyResponse{}, fmt.Errorf("malformed Lambda proxy response: unexpected key %q", k)
		}
	}
	status, err := statusCode(raw["statusCode"])
	if err != nil {
		return proxyResponse{}, err
	}
	var out struct {
		Headers           map[string]string   `json:"headers"`
		MultiValueHeaders map[string][]string `json:"multiValueHeaders"`
		Body              *string             `json:"body"`
		IsBase64Encoded   bool                `json:"isBase64Encoded"`
	}
	if err := json.Unmarshal(payload, &out); err != nil {
		return proxyResponse{}, fmt.Errorf("malformed Lambda proxy response: %w", err)
	}
	p := proxyResponse{status: status, header: mergeHeaders(out.Headers, out.MultiValueHeaders), base64: out.IsBase64Encoded}
	if out.Body != nil {
		p.body = []byte(*out.Body)
	}
	return p, nil
}

// statusCode is an integer from 100 to 599, as a number or a numeric
// string.
func statusCode(raw json.RawMessage) (int, error) {
	var v any
	if raw == nil || json.Unmarshal(raw, &v) != nil {
		return 0, errors.New("malformed Lambda proxy response: no statusCode")
	}
	var n float64
	switch s := v.(type) {
	case float64:
		n = s
	case string:
		i, err := strconv.Atoi(s)
		if err != nil {
			return 0, fmt.Errorf("malformed Lambda proxy response: statusCode %q", s)
		}
		n = float64(i)
	default:
		return 0, fmt.Errorf("malformed Lambda proxy response: statusCode %s", raw)
	}
	if n != math.Trunc(n) || n < 100 || n > 599 {
		return 0, fmt.Errorf("malformed Lambda proxy response: statusCode %v", n)
	}
	return int(n), nil
}

// mergeHeaders joins headers and multiValueHeaders as API Gateway does:
// all the values of both, a pair given in both once.
func mergeHeaders(single map[string]string, multi map[string][]string) http.Header {
	h := http.Header{}
	for k, vs := range multi {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	for k, v := range single {
		if !contains(h.Values(k), v) {
			h.Add(k, v)
		}
	}
	return h
}

func contains(vs []string, v string) bool {
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}

// decodeBody is the body the client gets: a base64 body is decoded only
// when the request's first Accept type is a binary media type of the API;
// otherwise API Gateway passes the base64 text through.
func (a *restAPI) decodeBody(p proxyResponse, accept string) ([]byte, error) {
	if !p.base64 {
		return p.body, nil
	}
	first, _, _ := strings.Cut(accept, ",")
	if mt, _, err := mime.ParseMediaType(strings.TrimSpace(first)); err != nil || !a.isBinary(mt) {
		return p.body, nil
	}
	b, err := base64.StdEncoding.DecodeString(string(p.body))
	if err != nil {
		return nil, fmt.Errorf("malformed Lambda proxy response: body is not base64: %w", err)
	}
	return b, nil
}

// compress gzips a body when the API sets MinimumCompressionSize, the
// client accepts gzip and the body is at least that large.
func (a *restAPI) compress(body []byte, acceptEncoding string, h http.Header) []byte {
	if a.minCompressionBytes < 0 || len(body) < a.minCompressionBytes || h.Get("Content-Encoding") != "" || !acceptsGzip(acceptEncoding) {
		return body
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(body) // a bytes.Buffer does not fail
	_ = zw.Close()
	h.Set("Content-Encoding", "gzip")
	return buf.Bytes()
}

func acceptsGzip(acceptEncoding string) bool {
	for _, part := range strings.Split(acceptEncoding, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") && strings.ReplaceAll(params, " ", "") != "q=0" {
			return true
		}
	}
	return false
}
