// Package apidoc holds the OpenAPI document of the REST API (openapi.yaml),
// the single source of truth that adapters/api serves and is tested against.
package apidoc

import _ "embed"

// OpenAPI is api/openapi.yaml as bytes.
//
//go:embed openapi.yaml
var OpenAPI []byte
