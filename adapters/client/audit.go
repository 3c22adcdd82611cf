package client

import (
	"context"
	"net/url"

	"github.com/myriarch/myriarch/adapters/api/schema"
)

// AuditEntry is the schema AuditEntry, as the API serves it.
type AuditEntry = schema.AuditEntry

// ListAudit reads one page of the audit entries of one object, newest
// first (targetType fleet, rollout or revision).
func (c *Client) ListAudit(ctx context.Context, targetType, targetID string, limit int, pageToken string) (Page[AuditEntry], error) {
	q := url.Values{"targetType": {targetType}, "targetId": {targetID}}
	var p Page[AuditEntry]
	return p, c.get(ctx, "/api/v1/audit", pageQuery(q, limit, pageToken), &p)
}

// AllAudit reads every page (limit 0) or the first limit entries.
func (c *Client) AllAudit(ctx context.Context, targetType, targetID string, limit int) ([]AuditEntry, error) {
	return All(ctx, limit, func(token string, size int) (Page[AuditEntry], error) {
		return c.ListAudit(ctx, targetType, targetID, size, token)
	})
}

// Me is the schema Me: who the token is.
type Me struct {
	Actor       string   `json:"actor"`
	DisplayName string   `json:"displayName"`
	Role        string   `json:"role"`
	Permissions []string `json:"permissions"`
}

// Me reads the caller.
func (c *Client) Me(ctx context.Context) (Me, error) {
	var m Me
	return m, c.get(ctx, "/api/v1/me", nil, &m)
}
