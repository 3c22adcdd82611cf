package store

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/rollout"
)

// RecordAgent writes an agent report after a read (tests, imports and load
// programs; the gateway writes through LoadAgent, SaveAgent and
// DisconnectAgent, which need no read per write): it stores
// what the agent reported (attributes, connection, health, configuration
// and package status) and keeps what others own: the desired hash and the
// target version (planner, engine), the package offer (executor) and the
// fleet (assigned when a revision is applied). The first report of an agent
// creates its item as reported, since nobody owns anything of it yet (the
// gateway reports an unknown agent without fleet or desired state; a test
// or an import may seed them). Usage counts what it wrote.
//
// An agent item changes only when something changed: a report that differs
// from the stored agent in nothing but lastSeen is written only when
// lastSeen moved by LastSeenEvery (30 s) or more, so that heartbeats do not
// cost a write each. The stored lastSeen can therefore be up to
// LastSeenEvery behind the last heartbeat: whoever judges liveness from it
// must allow heartbeat interval + LastSeenEvery before calling an agent
// offline (a connection that closes sets online false at once, and that is
// a change). A report older than the stored lastSeen (an agent that moved
// to another gateway task) never moves lastSeen back.
//
// Each report costs one strongly consistent read (an eventually consistent
// one could miss our own last write and skip a real change).
func (s *Store) RecordAgent(ctx context.Context, a agent.Agent) error {
	cur, err := s.GetAgentRecord(ctx, a.ID)
	if err != nil {
		return err
	}
	if cur == nil {
		// A new agent is to be assigned to its fleet (the assignment index).
		err := s.putAgent(ctx, AgentRecord{Agent: utcAgent(a), AssignPending: true})
		if !errors.Is(err, rollout.ErrConflict) {
			return err
		}
		// Created meanwhile (a reconnect raced the first report): merge below.
	}
	_, err = s.updateAgent(ctx, a.ID, cur, func(r *AgentRecord) bool {
		next := reported(a, r.Agent)
		if next.LastSeen.Before(r.LastSeen) {
			next.LastSeen = r.LastSeen
		}
		if sameBesidesLastSeen(next, r.Agent) && next.LastSeen.Sub(r.LastSeen) < s.lastSeenEvery() {
			return false
		}
		if !maps.Equal(next.Attributes, r.Attributes) {
			r.AssignPending = true // its fleet may change: assign it again
		}
		r.Agent = next
		return true
	})
	return err
}

func (s *Store) lastSeenEvery() time.Duration {
	if s.LastSeenEvery <= 0 {
		return DefaultLastSeenEvery
	}
	return s.LastSeenEvery
}

// reported is the agent as the gateway reports it, with the fields that
// others own taken from the stored agent.
func reported(a, stored agent.Agent) agent.Agent {
	a.DesiredHash, a.TargetVersion, a.PackageOffer, a.Fleet = stored.DesiredHash, stored.TargetVersion, stored.PackageOffer, stored.Fleet
	a.AssignmentError = stored.AssignmentError
	return utcAgent(a)
}

// sameBesidesLastSeen compares two agents as they would be stored.
func sameBesidesLastSeen(a, b agent.Agent) bool {
	a.LastSeen, b.LastSeen = time.Time{}, time.Time{}
	ja, errA := json.Marshal(utcAgent(a))
	jb, errB := json.Marshal(utcAgent(b))
	return errA == nil && errB == nil && string(ja) == string(jb)
}

// utcAgent stores every time in UTC, so that one instant has one encoding
// and a report in another zone is not a change.
func utcAgent(a agent.Agent) agent.Agent {
	a.LastSeen, a.ConnectedAt, a.VersionSince = utc(a.LastSeen), utc(a.ConnectedAt), utc(a.VersionSince)
	a.Health.StartTime, a.Health.ReportedAt = utc(a.Health.StartTime), utc(a.Health.ReportedAt)
	a.RemoteConfig.Since = utc(a.RemoteConfig.Since)
	if a.Update != nil {
		u := *a.Update
		u.StartedAt = utc(u.StartedAt)
		if u.Steps != nil {
			steps := make(map[string]agent.UpdateStep, len(u.Steps))
			for k, st := range u.Steps {
				st.StartedAt, st.StatusTime = utc(st.StartedAt), utc(st.StatusTime)
				steps[k] = st
			}
			u.Steps = steps
		}
		a.Update = &u
	}
	return a
}

func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}
