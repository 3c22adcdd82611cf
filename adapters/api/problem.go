package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/myriarch/myriarch/adapters/api/schema"

	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/issue"
	"github.com/myriarch/myriarch/core/selection"
)

// Problem codes: stable, documented in api/openapi.yaml (ProblemCode). The
// select and clear codes are those of core/selection, the action codes those
// of core/engine.
const (
	CodeRequestInvalid       = selection.CodeRequestInvalid // 400
	CodeWaveNameUnknown      = "wave_name_unknown"          // 400: a wave by a name the rollout does not have
	CodeUnauthenticated      = "unauthenticated"            // 401
	CodeForbidden            = "forbidden"                  // 403
	CodeRolloutNotFound      = "rollout_not_found"          // 404
	CodeFleetNotFound        = selection.CodeFleetNotFound  // 404
	CodeRevisionNotFound     = "revision_not_found"         // 404
	CodeAgentNotFound        = "agent_not_found"            // 404
	CodeNotFound             = "not_found"                  // 404: no such path
	CodeActionUnknown        = engine.CodeUnknownAction     // 404: no such action
	CodeMethodNotAllowed     = "method_not_allowed"         // 405
	CodeActionNotAllowed     = engine.CodeNotAllowed        // 409
	CodeNothingToRetry       = engine.CodeNothingToRetry    // 409: retry-failed with nothing failed
	CodeWaveNotApprovable    = engine.CodeWaveNotApprovable // 409
	CodeWaveApproved         = engine.CodeWaveApproved      // 409: released already, or approved by the same actor
	CodeSelfApproval         = engine.CodeSelfApproval      // 409: approve by the rollout's creator
	CodeApprovalExpired      = engine.CodeApprovalExpired   // 409: approve or reject after the expiry
	CodeTargetChanged        = selection.CodeTargetChanged  // 409
	CodeAgentAmbiguous       = "agent_ambiguous"            // 409: a display name of several agents
	CodeConflict             = "conflict"                   // 409: a lost race that persisted after retries
	CodeAgentNoCredential    = "agent_no_credential"        // 409: rotate-credential of an agent without one
	CodeReleaseNotFound      = "release_not_found"          // 404
	CodeReleaseConfigured    = "release_configured"         // 409: delete of a configured release
	CodeNoVersionTarget      = "no_version_target"          // 409: install plan of a fleet without a target
	CodeBodyTooLarge         = "body_too_large"             // 413
	CodeUnsupportedMediaType = "unsupported_media_type"     // 415
	CodeHeaderTooLarge       = "header_too_large"           // 431
	CodeWaveNotFound         = engine.CodeWaveNotFound      // 422
	CodeSelectionRejected    = selection.CodeSelectionRejected
	CodeRevisionInvalid      = "revision_invalid" // 422
	CodeInternal             = "internal"         // 500
)

// titles are the short summaries of the problem types.
var titles = map[string]string{
	CodeRequestInvalid:                    "The request is malformed",
	CodeWaveNameUnknown:                   "The rollout has no wave of that name",
	CodeUnauthenticated:                   "Authentication is required",
	CodeForbidden:                         "A permission is missing",
	CodeRolloutNotFound:                   "The rollout does not exist",
	CodeFleetNotFound:                     "The fleet does not exist",
	CodeRevisionNotFound:                  "No revision is applied",
	CodeAgentNotFound:                     "The agent does not exist",
	CodeAgentAmbiguous:                    "Several agents have that name",
	CodeNotFound:                          "Not found",
	CodeActionUnknown:                     "The action does not exist",
	CodeMethodNotAllowed:                  "The method is not allowed",
	CodeActionNotAllowed:                  "The action is not allowed now",
	CodeNothingToRetry:                    "Nothing failed to retry",
	CodeWaveNotApprovable:                 "The wave does not wait for approval",
	CodeWaveApproved:                      "The wave is already approved",
	CodeSelfApproval:                      "The rollout's creator cannot approve it",
	CodeApprovalExpired:                   "The approval expired",
	CodeTargetChanged:                     "The effective target changed",
	CodeConflict:                          "A concurrent change won",
	CodeAgentNoCredential:                 "The agent has no credential to rotate",
	CodeReleaseNotFound:                   "The release does not exist",
	CodeReleaseConfigured:                 "The release comes from the configuration",
	CodeNoVersionTarget:                   "The fleet has no target version",
	CodeBodyTooLarge:                      "The body is too large",
	CodeUnsupportedMediaType:              "The body must be JSON",
	CodeHeaderTooLarge:                    "The request header is too large",
	CodeWaveNotFound:                      "The wave does not exist",
	CodeSelectionRejected:                 "The version choice is refused",
	CodeRevisionInvalid:                   "The revision is invalid",
	CodeInternal:                          "Internal error",
	selection.NotAllowedSelectionDisabled: "The fleet does not admit a version choice",
	selection.NotAllowedNoExecutor:        "The fleet has no update executor",
	selection.NotAllowedBlockingRollout:   "A version rollout blocks the choice",
}

// Problem is an RFC 9457 problem with a stable code.
type Problem struct {
	Type       string     `json:"type"`
	Title      string     `json:"title"`
	Status     int        `json:"status"`
	Detail     string     `json:"detail,omitempty"`
	Instance   string     `json:"instance,omitempty"`
	Code       string     `json:"code"`
	Permission Permission `json:"permission,omitempty"`
	Issues     issue.List `json:"issues,omitempty"`
	// Waves are the names of the rollout's waves, in index order, when a
	// request named a wave the rollout does not have (wave_name_unknown).
	Waves []string `json:"waves,omitempty"`
	// Stages are the names of the rollout's stages, in order, when a request
	// named a stage the rollout does not have (request_invalid); none when
	// the rollout has no stages.
	Stages []string `json:"stages,omitempty"`
	// Candidates are the agents that share the display name of an
	// agent_ambiguous (the first schema.MaxCandidates), with what tells them apart.
	Candidates []schema.AgentCandidate `json:"candidates,omitempty"`
}

// Error makes a Problem an error that handlers return.
func (p *Problem) Error() string { return p.Code + ": " + p.Detail }

func problem(status int, code, detail string) *Problem {
	return &Problem{Status: status, Code: code, Detail: detail}
}

func unprocessable(code, detail string, issues issue.List) *Problem {
	return &Problem{Status: http.StatusUnprocessableEntity, Code: code, Detail: detail, Issues: issues}
}

// writeProblem answers with the problem; type and title follow the code.
func writeProblem(w http.ResponseWriter, r *http.Request, p *Problem) {
	q := *p
	q.Type = "https://myriarch.dev/problems/" + q.Code
	if q.Title = titles[q.Code]; q.Title == "" {
		q.Title = http.StatusText(q.Status)
	}
	q.Instance = r.URL.Path
	if q.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="myriarch"`)
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(q.Status)
	_ = json.NewEncoder(w).Encode(q)
}

// clip cuts a value from the request to n characters, marking a cut with
// the original length, for messages and audit details that must stay
// readable whatever the client sent.
func clip(v string, n int) string {
	if utf8.RuneCountInString(v) <= n {
		return v
	}
	return fmt.Sprintf("%s… (%d characters)", string([]rune(v)[:n]), utf8.RuneCountInString(v))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
