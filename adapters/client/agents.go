package client

import (
	"context"
	"net/url"
	"strconv"
	"strings"

	"github.com/myriarch/myriarch/adapters/api/schema"
)

// The agent shapes are those the API serves (package schema).
type (
	Agent           = schema.Agent
	AgentDetail     = schema.AgentDetail
	AgentConfig     = schema.AgentConfig
	AgentHealth     = schema.AgentHealth
	AgentComponents = schema.AgentComponents
	AgentTarget     = schema.AgentTarget
)

// AgentFilter narrows listAgents; zero values do not filter. Every filter
// given must hold.
type AgentFilter struct {
	Fleet           string
	Online          *bool // true: online by the liveness rule; false: offline
	Version         string
	ConfigStatuses  []string // APPLIED, APPLYING, FAILED, drifted: any of them
	AssignmentError *bool
	Assigned        *bool  // true: members of a fleet; false: agents of none
	Selector        string // conditions, comma-separated: key=value, key!=value, key in (a, b), key notin (a, b)
	Gone            *bool  // nil: gone agents are listed, flagged
}

func (f AgentFilter) query() url.Values {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	flag := func(k string, b *bool) {
		if b != nil {
			q.Set(k, strconv.FormatBool(*b))
		}
	}
	set("fleet", f.Fleet)
	flag("online", f.Online)
	set("version", f.Version)
	set("configStatus", strings.Join(f.ConfigStatuses, ","))
	flag("assignmentError", f.AssignmentError)
	flag("assigned", f.Assigned)
	set("selector", f.Selector)
	flag("gone", f.Gone)
	return q
}

// ListAgents reads one page of the inventory. With filters a page may hold
// fewer agents than limit, even none, while Next is set.
func (c *Client) ListAgents(ctx context.Context, f AgentFilter, limit int, pageToken string) (Page[Agent], error) {
	var p Page[Agent]
	return p, c.get(ctx, "/api/v1/agents", pageQuery(f.query(), limit, pageToken), &p)
}

// AllAgents reads every page (limit 0) or the first limit agents.
func (c *Client) AllAgents(ctx context.Context, f AgentFilter, limit int) ([]Agent, error) {
	return All(ctx, limit, func(token string, size int) (Page[Agent], error) {
		return c.ListAgents(ctx, f, size, token)
	})
}

// GetAgent reads an agent by its instance UID or its display name, with
// its current rollout targets. A name of several agents is the problem
// agent_ambiguous, whose detail lists their ids.
func (c *Client) GetAgent(ctx context.Context, idOrName string) (AgentDetail, error) {
	var a AgentDetail
	return a, c.get(ctx, "/api/v1/agents/"+escape(idOrName), nil, &a)
}
