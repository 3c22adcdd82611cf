package store

import (
	"context"

	"github.com/myriarch/myriarch/core/agent"
)

// An evaluation reads the agents of its rollout that the engine asks for,
// and a configuration evaluation then sets the desired hash of the agents
// whose targets it started. It used to read those agents again for that write (one
// consistent read each): SetDesiredHashOver writes them on the versions the
// evaluation read instead. Those reads are eventually consistent, so a
// version may be stale; the write of that agent then loses its condition
// and the agent is read again and written alone, as after any lost race.
// In a wave of 1,000 that is one agent item read a target fewer, and the
// push no longer waits for 10 batch reads.

// AgentsRead is what an evaluation's read of agents kept besides the agents
// themselves: per agent, the parts of its item that a write carries along
// and the counter it was read at.
type AgentsRead struct {
	rest map[string]recordRest
}

type recordRest struct {
	push          Push
	assignPending bool
	assignedRev   int64
	credential    Credential
	version       int64
	factsVersion  int64 // kept by the desired hash's write (AgentRecord.FactsVersion)
}

// AgentsForEvaluation is AgentsByID that also returns what a later
// SetDesiredHashOver needs of the same read. An evaluation reads its agents
// in rounds, as the engine asks for them (engine.Input.Read): into, when it
// is what an earlier call returned, gets this call's agents added and is
// returned.
func (s *Store) AgentsForEvaluation(ctx context.Context, ids []string, into any) (map[string]agent.Agent, any, error) {
	out := make(map[string]agent.Agent, len(ids))
	read, _ := into.(*AgentsRead)
	if read == nil {
		read = &AgentsRead{rest: make(map[string]recordRest, len(ids))}
	}
	err := s.eachAgent(ctx, ids, false, func(r AgentRecord) { // one agent at a time
		out[r.ID] = r.Agent
		read.rest[r.ID] = recordRest{push: r.Push, assignPending: r.AssignPending, assignedRev: r.AssignedRev,
			credential: r.Credential, version: r.Version, factsVersion: r.FactsVersion}
	})
	if err != nil {
		return map[string]agent.Agent{}, nil, err
	}
	return out, read, nil
}

// SetDesiredHashOver is SetDesiredHash over agents as an evaluation read
// them (AgentsForEvaluation: the agents and what it kept of their items).
// An agent the read does not hold is read first, as SetDesiredHash does.
func (s *Store) SetDesiredHashOver(ctx context.Context, ids []string, hash string, agents map[string]agent.Agent, read any) error {
	rd, ok := read.(*AgentsRead)
	if !ok || rd == nil {
		return s.SetDesiredHash(ctx, ids, hash)
	}
	recs := make(map[string]AgentRecord, len(ids))
	var unread []string
	for _, id := range ids {
		a, ok := agents[id]
		rest, kept := rd.rest[id]
		if !ok || !kept {
			unread = append(unread, id)
			continue
		}
		recs[id] = AgentRecord{Agent: a, Push: rest.push, AssignPending: rest.assignPending, AssignedRev: rest.assignedRev,
			Credential: rest.credential, Version: rest.version, FactsVersion: rest.factsVersion}
	}
	set := desiredHash(hash)
	if err := s.writeAgents(ctx, recs, set); err != nil {
		return err
	}
	if len(unread) == 0 {
		return nil
	}
	return s.updateAgents(ctx, unread, set)
}
