package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
)

// Body limits: an action or a selection is a few bytes; a revision carries
// rendered configurations. In AWS every request reaches the api Lambda as
// API Gateway's proxy event, in a synchronous invocation of at most
// LambdaRequestBytes: the body travels there as a JSON string, escaped once
// more, beside the headers and the request context. A larger body is refused
// by AWS before the API sees it, so the API refuses it too, locally as
// well, with its own 413 (fitsLambdaEvent).
const (
	MaxBodyBytes         = 1 << 20 // 1 MiB
	MaxRevisionBodyBytes = 6 << 20 // 6 MiB: nothing larger fits the event
	// LambdaRequestBytes is the largest synchronous Lambda request:
	// 6,291,456 bytes ("Request must be smaller than 6291456 bytes").
	LambdaRequestBytes = 6 << 20
	// eventContextBytes is what the proxy event holds besides the body and
	// the headers: the path, the request context with the authorizer's
	// principal, the stage variables (about 2 KiB), with room to spare.
	eventContextBytes = 16 << 10
)

// fitsLambdaEvent reports whether a request with body and header would fit
// the api Lambda's request in AWS, and its estimated size: the body as an
// escaped JSON string, the headers twice (headers and multiValueHeaders),
// and the rest of the event. Example: 5 MiB of YAML with a newline every
// 40 bytes is about 5.4 MiB in the revision's JSON and 5.5 MiB in the
// event: it fits; 6 MiB of JSON does not.
func fitsLambdaEvent(body []byte, header http.Header) (bool, int) {
	n := escapedJSONLen(body) + eventContextBytes
	for k, vs := range header {
		for _, v := range vs {
			n += 2 * (len(k) + len(v) + 8) // quotes, colon, comma
		}
	}
	return n <= LambdaRequestBytes, n
}

// escapedJSONLen is the length of s as a JSON string: quotes, backslashes
// and the short control escapes take two bytes, other control bytes six.
func escapedJSONLen(s []byte) int {
	n := 2
	for _, c := range s {
		switch {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
			n += 2
		case c < 0x20:
			n += 6
		default:
			n++
		}
	}
	return n
}

// decodeBody reads a JSON object into v, a pointer to a struct: every body
// of the API is an object. Refusals, before anything is decided: a content
// type other than application/json (415), more than limit bytes (413),
// malformed JSON, a value that is not an object, unknown fields, a wrong
// type or trailing data (400). optional lets an absent body (zero bytes)
// through, leaving v as is; only that means "no options": never null, never
// a body of only whitespace.
func decodeBody(r *http.Request, v any, limit int64, optional bool) *Problem {
	// No ResponseWriter for MaxBytesReader: with one, net/http closes the
	// connection after the 413 and lingers half a second; without, it drains
	// at most 256 KiB of the rest and closes only beyond that.
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, limit))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return problem(http.StatusRequestEntityTooLarge, CodeBodyTooLarge, fmt.Sprintf("the body exceeds %d bytes", limit))
	case err != nil:
		return problem(http.StatusBadRequest, CodeRequestInvalid, "the body could not be read")
	}
	if ok, n := fitsLambdaEvent(body, r.Header); !ok {
		return problem(http.StatusRequestEntityTooLarge, CodeBodyTooLarge, fmt.Sprintf(
			"the body of %d bytes would be about %d bytes in the API's Lambda request, over AWS's limit of %d: send less (split a revision's fleets over several revisions)", len(body), n, LambdaRequestBytes))
	}
	if pr := blankBody(body, optional); pr != nil {
		return pr
	}
	if len(body) == 0 && r.Header.Get("Content-Type") == "" {
		return nil // no body: no options
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return problem(http.StatusUnsupportedMediaType, CodeUnsupportedMediaType,
			fmt.Sprintf("the body must be application/json, not %q", r.Header.Get("Content-Type")))
	}
	if len(body) == 0 {
		return nil // optional: blankBody refused a required one
	}
	if kind := topLevelKind(body); kind != "object" && kind != "" {
		return problem(http.StatusBadRequest, CodeRequestInvalid, "the body is not valid: expected a JSON object, got "+kind)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return problem(http.StatusBadRequest, CodeRequestInvalid, "the body is not valid: "+describeJSONError(err))
	}
	if dec.More() {
		return problem(http.StatusBadRequest, CodeRequestInvalid, "the body is not valid: data after the JSON value")
	}
	return nil
}

// blankBody refuses a body that is absent where one is required, and a body
// of only whitespace everywhere: "no options" is no body at all or {}
// (docs/engine.md, the operator actions), and whitespace is neither, so a
// client that meant to send something is told rather than ignored.
func blankBody(body []byte, optional bool) *Problem {
	switch {
	case len(body) == 0 && optional:
		return nil
	case len(bytes.TrimSpace(body)) > 0:
		return nil
	case len(body) > 0 && optional:
		return problem(http.StatusBadRequest, CodeRequestInvalid, "the body holds only whitespace: send no body or {}")
	}
	return problem(http.StatusBadRequest, CodeRequestInvalid, "a JSON body is required")
}

// topLevelKind names the kind of a well-formed JSON value by its first
// byte; "" for malformed JSON, which the decoder describes better. The check
// exists for null: encoding/json decodes it into a struct without an error
// and without touching it, which would make `null` pass as "no options".
func topLevelKind(body []byte) string {
	if !json.Valid(body) {
		return ""
	}
	switch bytes.TrimLeft(body, " \t\r\n")[0] { // the JSON whitespace; Valid saw a value after it
	case '{':
		return "object"
	case 'n':
		return "null"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	}
	return "number"
}

// describeJSONError says what is wrong in words a client can act on,
// without Go type names.
func describeJSONError(err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Sprintf("malformed JSON at byte %d: %s", syntax.Offset, syntax.Error())
	case errors.As(err, &typ):
		if typ.Field == "" {
			return fmt.Sprintf("expected a JSON %s, got %s", jsonKind(typ.Type.Kind().String()), typ.Value)
		}
		return fmt.Sprintf("field %s must be a %s, not %s", typ.Field, jsonKind(typ.Type.Kind().String()), typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "malformed JSON: unexpected end of the body"
	}
	return err.Error() // e.g. json: unknown field "x"
}

func jsonKind(goKind string) string {
	switch goKind {
	case "int", "int64", "int32", "uint", "float64":
		return "number"
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "slice", "array":
		return "array"
	}
	return "object"
}
