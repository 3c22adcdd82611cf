// Package dynamo serves the API from the DynamoDB store (pkg/store): the
// store's methods under the API's names and its page type. Everything else
// the API needs, the store has under the same name.
package dynamo

import (
	"context"
	"errors"
	"fmt"

	"github.com/myriarch/myriarch/pkg/agent"
	"github.com/myriarch/myriarch/pkg/api"
	"github.com/myriarch/myriarch/pkg/audit"
	"github.com/myriarch/myriarch/pkg/notify"
	"github.com/myriarch/myriarch/pkg/policy"
	"github.com/myriarch/myriarch/pkg/rollout"
	"github.com/myriarch/myriarch/pkg/store"
)

// Store is the DynamoDB store as the API's Store.
type Store struct{ *store.Store }

var _ api.Store = Store{}

// RolloutsPage lists rollouts newest first.
func (s Store) RolloutsPage(ctx context.Context, fleet string, k policy.Kind, token string, limit int) (api.Page[rollout.Rollout], error) {
	p, err := s.Store.RolloutsPage(ctx, fleet, k, token, limit)
	return page(p), pageErr(err)
}

// TargetsPage lists a rollout's targets in wave order.
func (s Store) TargetsPage(ctx context.Context, rolloutID string, wave int, token string, limit int) (api.Page[rollout.Target], error) {
	if wave == api.AllWaves {
		wave = store.AllWaves
	}
	p, err := s.Store.TargetsPage(ctx, rolloutID, wave, token, limit)
	return page(p), pageErr(err)
}

// AuditPage lists the entries of one object, newest first.
func (s Store) AuditPage(ctx context.Context, targetType, targetID, token string, limit int) (api.Page[audit.Entry], error) {
	p, err := s.Store.AuditOf(ctx, targetType, targetID, token, limit)
	return page(p), pageErr(err)
}

// EventsPage reads the feed of rollout notifications (the outbox).
func (s Store) EventsPage(ctx context.Context, q notify.Query) (notify.Page, error) {
	p, err := s.Store.EventsPage(ctx, q)
	return p, pageErr(err)
}

// CurrentRevision is the applied revision's pointer; nil before the first apply.
func (s Store) CurrentRevision(ctx context.Context) (*api.RevisionInfo, error) {
	info, err := s.Store.CurrentRevision(ctx)
	if err != nil || info == nil {
		return nil, err
	}
	return &api.RevisionInfo{Commit: info.Commit, AppliedAt: info.AppliedAt, Version: info.Version}, nil
}

// AgentsPage lists every agent, a page of the table's Scan.
func (s Store) AgentsPage(ctx context.Context, token string, limit int) (api.Page[agent.Agent], error) {
	p, err := s.Store.AgentsPage(ctx, token, limit)
	return agentPage(p), pageErr(err)
}

// AgentsOfFleet lists a fleet's agents by id (index byFleet).
func (s Store) AgentsOfFleet(ctx context.Context, fleet, token string, limit int) (api.Page[agent.Agent], error) {
	p, err := s.Store.AgentsOfFleet(ctx, fleet, token, limit)
	return agentPage(p), pageErr(err)
}

// AgentsWithAssignmentError lists the agents with an assignment error by
// id (index assignment).
func (s Store) AgentsWithAssignmentError(ctx context.Context, token string, limit int) (api.Page[agent.Agent], error) {
	p, err := s.Store.AgentsWithAssignmentError(ctx, token, limit)
	return agentPage(p), pageErr(err)
}

// agentPage drops what only the store needs (pushes, assignment state).
func agentPage(p store.Page[store.AgentRecord]) api.Page[agent.Agent] {
	out := api.Page[agent.Agent]{Items: make([]agent.Agent, len(p.Items)), Next: p.Next}
	for i, r := range p.Items {
		out.Items[i] = r.Agent
	}
	return out
}

func page[T any](p store.Page[T]) api.Page[T] { return api.Page[T]{Items: p.Items, Next: p.Next} }

// pageErr gives a token the store did not issue the API's meaning (a 400).
func pageErr(err error) error {
	if errors.Is(err, store.ErrBadPageToken) {
		return fmt.Errorf("%w: %w", api.ErrBadPageToken, err)
	}
	return err
}
