package client

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/myriarch/myriarch/adapters/api/schema"
	"github.com/myriarch/myriarch/core/issue"
)

// Problem is a refusal of the API (application/problem+json, RFC 9457) with
// its stable code. An answer that is no problem document (a proxy's error
// page, API Gateway's own answers) becomes a Problem with the status, the
// code the API documents for that status where there is one, and the text
// of the answer as the detail.
type Problem struct {
	Type       string     `json:"type"`
	Title      string     `json:"title"`
	Status     int        `json:"status"`
	Detail     string     `json:"detail,omitempty"`
	Instance   string     `json:"instance,omitempty"`
	Code       string     `json:"code"`
	Permission string     `json:"permission,omitempty"`
	Issues     issue.List `json:"issues,omitempty"`
	// Waves are the rollout's wave names, in index order, of a
	// wave_name_unknown.
	Waves []string `json:"waves,omitempty"`
	// Stages are the rollout's stage names, in order, of a request_invalid
	// for a stage it does not have.
	Stages []string `json:"stages,omitempty"`
	// Candidates are the agents that share the display name of an
	// agent_ambiguous (the first schema.MaxCandidates), with what tells them apart.
	Candidates []schema.AgentCandidate `json:"candidates,omitempty"`
}

// Error is "<status> <code>: <detail>".
func (p *Problem) Error() string {
	code := p.Code
	if code == "" {
		code = strings.ToLower(strings.ReplaceAll(http.StatusText(p.Status), " ", "_"))
	}
	detail := p.Detail
	if detail == "" {
		detail = p.Title
	}
	return fmt.Sprintf("%d %s: %s", p.Status, code, detail)
}

// maxDetail bounds the detail taken from an answer that is no problem.
const maxDetail = 200

func newProblem(status int, body []byte) *Problem {
	var p Problem
	if err := json.Unmarshal(body, &p); err == nil && p.Code != "" {
		if p.Status == 0 {
			p.Status = status
		}
		return &p
	}
	p = Problem{Status: status, Title: http.StatusText(status)}
	if status == http.StatusTooManyRequests {
		p.Code = "throttled" // answered by API Gateway, documented in api/openapi.yaml
	}
	// API Gateway answers {"message": "..."}; anything else is shown as text.
	var gw struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &gw) == nil && gw.Message != "" {
		p.Detail = gw.Message
	} else if text := strings.TrimSpace(string(body)); text != "" {
		if len(text) > maxDetail {
			text = text[:maxDetail] + "…"
		}
		p.Detail = text
	}
	return &p
}
