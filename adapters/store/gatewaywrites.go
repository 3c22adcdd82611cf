package store

import (
	"context"
	"errors"
	"maps"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/rollout"
)

// AgentVersion is what a gateway session keeps of the stored agent it last
// read or wrote, so that its next write needs no read: the item's counter
// and the parts of the item that others own. The gateway hands it back
// opaquely (as any).
type AgentVersion struct {
	version       int64
	owned         owned
	attributes    map[string]string
	push          Push
	reportedHash  string // the configuration hash the agent reported, as stored
	assignPending bool
	assignedRev   int64
	credential    Credential // the gateway never changes it: a write keeps it as read
	// decisive is the fingerprint of the decisive facts as stored, so that a
	// write over this version stamps what it changed (written.go).
	decisive uint64
	// factsVersion is the item's AgentRecord.FactsVersion (ListedVersion.Over).
	factsVersion int64
}

// After reports whether v is a later version of the same agent than other:
// the item's counter grows with every write, so a higher counter is a later
// state (gateway.OrderedVersion).
func (v *AgentVersion) After(other any) bool {
	o, ok := counterOf(other)
	return ok && v != nil && v.version > o
}

// owned are the fields of an agent item that others write (the assignment,
// the engine, the planner) and a gateway's write keeps as it read them: the
// fleet, the assignment error and the desired state. A version holds them
// alone rather than a whole agent.Agent: every session of a gateway keeps
// one, and the whole struct was 0.4 KB of the 25 KB an idle agent may take.
type owned struct {
	fleet, assignmentError, desiredHash, targetVersion, packageOffer string
}

func (o owned) agent() agent.Agent {
	return agent.Agent{Fleet: o.fleet, AssignmentError: o.assignmentError, DesiredHash: o.desiredHash,
		TargetVersion: o.targetVersion, PackageOffer: o.packageOffer}
}

func versionOf(r AgentRecord) *AgentVersion {
	return &AgentVersion{version: r.Version, attributes: r.Attributes, push: r.Push, reportedHash: r.RemoteConfig.Hash,
		assignPending: r.AssignPending, assignedRev: r.AssignedRev, credential: r.Credential, decisive: fingerprint(r.Agent),
		factsVersion: r.FactsVersion,
		owned: owned{fleet: r.Fleet, assignmentError: r.AssignmentError, desiredHash: r.DesiredHash,
			targetVersion: r.TargetVersion, packageOffer: r.PackageOffer}}
}

// LoadAgent reads one agent for a gateway session (strongly consistent) and
// its version for SaveAgent; found is false for an unknown id, whose version
// is nil.
func (s *Store) LoadAgent(ctx context.Context, id string) (agent.Agent, bool, any, error) {
	r, err := s.GetAgentRecord(ctx, id)
	if err != nil || r == nil {
		return agent.Agent{}, false, nil, err
	}
	return r.Agent, true, versionOf(*r), nil
}

// SaveAgent is the gateway's write of a report that changed a fact, or of a
// (re)connection: what the agent reported, its connection and its task,
// with what others own kept as stored. Given the version the session last
// read or wrote (v, from LoadAgent or SaveAgent), it is one write
// conditional on that version; only when someone wrote the agent meanwhile
// (the planner, an executor, another task) or without a version is the
// agent read and the report merged over it. It returns the version it
// wrote. The gateway calls it only for changes: heartbeats cost nothing.
//
// A configuration hash the agent reports for the first time is recorded as
// delivered (Push.AckedHash), as AckPush would: the gateway leaves the
// acknowledgement of a push the agent reports within its grace to this
// write, which must then replace the earlier acknowledgement too, or a
// later return of the desired hash to that earlier hash (a rollback) would
// look delivered and never reach the agent (see deliveredByReport).
//
// A report of an older connection (one that reconnected meanwhile, on this
// task or another: a late report of the old connection, which the new one
// already superseded) writes nothing over the record of a newer connection:
// merged, it would bring back the old connection's time and task, after
// which the old connection's disconnect would pass its guard and write the
// agent offline while its new connection is open.
func (s *Store) SaveAgent(ctx context.Context, a agent.Agent, v any) (any, error) {
	connectedAt := a.ConnectedAt
	return s.saveAgent(ctx, a, v, true, func(r AgentRecord) bool {
		return !r.ConnectedAt.After(connectedAt)
	})
}

// DisconnectAgent writes the agent offline as of a.LastSeen (a as the
// session knows it, Online false), unless a newer connection owns it: the
// stored record was written since v and names another task or a later
// connection. It returns the version it wrote, or v when it wrote nothing.
func (s *Store) DisconnectAgent(ctx context.Context, a agent.Agent, v any) (any, error) {
	task, connectedAt := a.Task, a.ConnectedAt
	return s.saveAgent(ctx, a, v, false, func(r AgentRecord) bool {
		return r.Online && r.Task == task && !r.ConnectedAt.After(connectedAt)
	})
}

// saveAgent writes a over version v, else reads and merges it over the
// stored record when guard allows; create says whether a missing record
// is created (a report) or left missing (a disconnect).
func (s *Store) saveAgent(ctx context.Context, a agent.Agent, v any, create bool, guard func(AgentRecord) bool) (any, error) {
	if prev, ok := v.(*AgentVersion); ok && prev != nil {
		r := overVersion(a, prev)
		err := s.putAgent(ctx, r)
		if err == nil {
			return versionWritten(r), nil
		}
		if !errors.Is(err, rollout.ErrConflict) {
			return v, err
		}
		// Written meanwhile: read and merge below.
	}
	var wrote *AgentRecord
	cur, err := s.GetAgentRecord(ctx, a.ID)
	if err != nil {
		return v, err
	}
	if cur == nil {
		if !create {
			return v, nil // deleted: nothing to disconnect
		}
		r := AgentRecord{Agent: utcAgent(a), AssignPending: true}
		deliveredByReport(&r, "")
		err := s.putAgent(ctx, r)
		if err == nil {
			return versionWritten(r), nil
		}
		if !errors.Is(err, rollout.ErrConflict) {
			return v, err
		}
	}
	_, err = s.updateAgent(ctx, a.ID, cur, func(r *AgentRecord) bool {
		wrote = nil
		if guard != nil && !guard(*r) {
			return false
		}
		next := reported(a, r.Agent)
		if next.LastSeen.Before(r.LastSeen) {
			next.LastSeen = r.LastSeen
		}
		if !maps.Equal(next.Attributes, r.Attributes) {
			r.AssignPending = true
		}
		stored := r.RemoteConfig.Hash
		r.Agent = next
		deliveredByReport(r, stored)
		w := *r
		wrote = &w
		return true
	})
	if err != nil || wrote == nil {
		return v, err
	}
	return versionWritten(*wrote), nil
}

// versionWritten is the version a gateway's write of r made: the next
// counter, which is also the item's FactsVersion (the write is not of the
// desired state alone).
func versionWritten(r AgentRecord) *AgentVersion {
	r.Version++
	r.FactsVersion = r.Version
	return versionOf(r)
}

// deliveredByReport records the configuration hash r reports as delivered
// when it differs from the one stored before (was): the agent got it, so
// the acknowledgement that the gateway left to this report names it. An
// unchanged hash leaves the acknowledgement alone: a report of the old hash
// after the gateway acknowledged a newer push says nothing new.
// overVersion is the record a report writes over the version a session
// holds: what the agent reported, with what others own as that version
// read it.
func overVersion(a agent.Agent, prev *AgentVersion) AgentRecord {
	r := AgentRecord{Agent: reported(a, prev.owned.agent()), Push: prev.push, AssignPending: prev.assignPending,
		AssignedRev: prev.assignedRev, Credential: prev.credential, Version: prev.version,
		was: &was{decisive: prev.decisive, attributes: prev.attributes, fleet: prev.owned.fleet}}
	deliveredByReport(&r, prev.reportedHash)
	if !maps.Equal(r.Attributes, prev.attributes) {
		r.AssignPending = true
	}
	return r
}

func deliveredByReport(r *AgentRecord, was string) {
	if h := r.RemoteConfig.Hash; h != "" && h != was {
		r.Push.AckedHash = h
	}
}
