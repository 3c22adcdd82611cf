package gateway

import (
	"context"
	"sync"
	"time"

	"github.com/open-telemetry/opamp-go/protobufs"
	"github.com/open-telemetry/opamp-go/server/types"

	"github.com/myriarch/myriarch/pkg/agent"
)

// session is what a task knows of one agent it holds: over WebSocket for the
// life of the connection, over plain HTTP from its first poll until it falls
// silent.
type session struct {
	id          string
	uid         []byte
	conn        types.Connection // nil over plain HTTP: pushes ride on responses
	connectedAt time.Time

	mu            sync.Mutex
	view          agent.Agent // reported facts as last translated, desired state as last read
	dirty         bool        // view has facts that no write has stored yet
	writtenSeen   time.Time   // lastSeen of the last write
	capabilities  uint64
	heartbeatSent bool
	sentHash      string // configuration sent on this session
	sentOffer     string // package offer sent on this session
}

// takePush decides what to send now and marks it sent; under s.mu.
func (s *session) takePush() (hash, offer string) {
	if wantsConfig(s.view, s.sentHash) {
		hash, s.sentHash = s.view.DesiredHash, s.view.DesiredHash
	}
	if wantsOffer(s.view, s.sentOffer) {
		offer, s.sentOffer = s.view.PackageOffer, s.view.PackageOffer
	}
	return hash, offer
}

// unsend forgets a push that did not reach the agent, so a later poll or
// message sends it again.
func (s *session) unsend(hash, offer string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if hash != "" && s.sentHash == hash {
		s.sentHash = ""
	}
	if offer != "" && s.sentOffer == offer {
		s.sentOffer = ""
	}
}

// setDesired takes the desired state of a fresh read of the agent.
func (s *session) setDesired(a agent.Agent) (changed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	changed = s.view.DesiredHash != a.DesiredHash || s.view.PackageOffer != a.PackageOffer
	s.view.DesiredHash, s.view.PackageOffer, s.view.TargetVersion = a.DesiredHash, a.PackageOffer, a.TargetVersion
	return changed
}

// open starts a session for the first message of a connection (WebSocket)
// or of an agent unknown to this task (plain HTTP), seeded with the stored
// agent so that dated facts keep their dates and the desired state is known.
func (g *Gateway) open(ctx context.Context, id string, uid []byte, conn types.Connection) (*session, error) {
	sctx, cancel := g.storeCtx(ctx)
	defer cancel()
	stored, found, err := g.agents.GetAgent(sctx, id)
	if err != nil {
		return nil, err
	}
	if !found {
		stored = agent.Agent{ID: id}
	}
	s := &session{id: id, uid: append([]byte(nil), uid...), conn: conn, connectedAt: g.now(), view: stored}
	g.sessions.put(s)
	return s, nil
}

// report folds a message into the session and decides the response; the
// write, if any, is returned for the caller to do outside the lock.
func (g *Gateway) report(s *session, msg *protobufs.AgentToServer, fresh bool) (resp *protobufs.ServerToAgent, write *agent.Agent, push [2]string, err error) {
	now := g.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	next, err := Translate(s.view, msg, now, g.cfg.PackageName)
	if err != nil {
		return nil, nil, push, err
	}
	bye := msg.GetAgentDisconnect() != nil
	next.Online, next.ConnectedAt, next.LastSeen = !bye, s.connectedAt, now
	if s.dirty || !sameFacts(s.view, next) || now.Sub(s.writtenSeen) >= g.lastSeenEvery {
		s.dirty, write = true, &next
	}
	s.view = next
	if msg.GetCapabilities() != 0 {
		s.capabilities = msg.GetCapabilities()
	}
	resp = &protobufs.ServerToAgent{InstanceUid: s.uid, Capabilities: serverCapabilities}
	if fresh && msg.GetAgentDescription() == nil {
		// A reconnecting agent may send only what changed since it last
		// sent; ask for everything so that nothing stays stale.
		resp.Flags |= uint64(protobufs.ServerToAgentFlags_ServerToAgentFlags_ReportFullState)
	}
	if !s.heartbeatSent && s.capabilities != 0 {
		resp.ConnectionSettings, s.heartbeatSent = heartbeatFor(s.capabilities, g.cfg.Heartbeat), true
	}
	if !bye {
		push[0], push[1] = s.takePush()
	}
	return resp, write, push, nil
}

// record writes a view of the agent and notes that it is stored.
func (g *Gateway) record(ctx context.Context, s *session, a agent.Agent) {
	sctx, cancel := g.storeCtx(ctx)
	defer cancel()
	if err := g.agents.RecordAgent(sctx, a); err != nil {
		g.log.Error("record agent", "agent", a.ID, "error", err)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writtenSeen = a.LastSeen
	if s.view.LastSeen.Equal(a.LastSeen) {
		s.dirty = false
	}
}

// markOffline writes that the session's agent went offline, unless the
// last write already said so.
func (g *Gateway) markOffline(s *session, reason string) {
	s.mu.Lock()
	stored := !s.view.Online && !s.dirty
	s.mu.Unlock()
	if stored {
		return
	}
	ctx, cancel := g.storeCtx(context.Background())
	defer cancel()
	if err := g.agents.MarkOffline(ctx, s.id, s.connectedAt, g.now()); err != nil {
		g.log.Error("mark agent offline", "agent", s.id, "reason", reason, "error", err)
	}
}
