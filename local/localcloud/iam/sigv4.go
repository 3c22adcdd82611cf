package iam

import (
	"errors"
	"net/http"
	"strings"
)

// credential is what the proxy learns from a SigV4 Authorization header:
// the access key id (the role's logical id, by the local cloud's
// convention) and the signing scope's service name. The signature itself
// is not checked: every caller is a process the local cloud started.
type credential struct {
	AccessKeyID, Region, Service string
}

// parseCredential reads
// "AWS4-HMAC-SHA256 Credential=<AKID>/<date>/<region>/<service>/aws4_request, SignedHeaders=..., Signature=...".
func parseCredential(r *http.Request) (credential, error) {
	h := r.Header.Get("Authorization")
	if !strings.HasPrefix(h, "AWS4-HMAC-SHA256 ") {
		return credential{}, errors.New("the request is not signed with SigV4 (no AWS4-HMAC-SHA256 Authorization header)")
	}
	for _, field := range strings.Split(strings.TrimPrefix(h, "AWS4-HMAC-SHA256 "), ",") {
		v, ok := strings.CutPrefix(strings.TrimSpace(field), "Credential=")
		if !ok {
			continue
		}
		scope := strings.Split(v, "/")
		if len(scope) != 5 || scope[0] == "" || scope[4] != "aws4_request" {
			break
		}
		return credential{AccessKeyID: scope[0], Region: scope[2], Service: scope[3]}, nil
	}
	return credential{}, errors.New("the Authorization header has no Credential=<key>/<date>/<region>/<service>/aws4_request")
}
