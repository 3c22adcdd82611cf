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
// rendered configurations.
const (
	MaxBodyBytes         = 1 << 20  // 1 MiB
	MaxRevisionBodyBytes = 10 << 20 // 10 MiB
)

// decodeBody reads a JSON object into v, a pointer to a struct: every body
// of the API is an object. Refusals, before anything is decided: a content
// type other than application/json (415), more than limit bytes (413),
// malformed JSON, a value that is not an object, unknown fields, a wrong
// type or trailing data (400). optional lets an empty body through, leaving
// v as is; only an absent body means "no options", never null.
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
	if len(bytes.TrimSpace(body)) == 0 && r.Header.Get("Content-Type") == "" {
		if optional {
			return nil
		}
		return problem(http.StatusBadRequest, CodeRequestInvalid, "a JSON body is required")
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return problem(http.StatusUnsupportedMediaType, CodeUnsupportedMediaType,
			fmt.Sprintf("the body must be application/json, not %q", r.Header.Get("Content-Type")))
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if optional {
			return nil
		}
		return problem(http.StatusBadRequest, CodeRequestInvalid, "a JSON body is required")
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
