package gateway

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/open-telemetry/opamp-go/protobufs"
	"github.com/open-telemetry/opamp-go/server/types"

	"github.com/myriarch/myriarch/core/agent"
)

// session is what a task knows of one agent it holds: over WebSocket for the
// life of the connection, over plain HTTP from its first poll until it falls
// silent.
type session struct {
	id          string
	uid         []byte
	conn        types.Connection // nil over plain HTTP: pushes ride on responses
	connectedAt time.Time
	// heardNanos is the Unix time in nanoseconds of the last message:
	// silence is judged in memory, never written. Atomic so that the sweep
	// reads it without taking mu.
	heardNanos atomic.Int64
	slot       atomic.Pointer[beatSlot] // the registry's copy of heardNanos, while registered

	// writeMu is held by every store write of the agent from this task:
	// the session's writer and an acknowledgement of a push. Overlapping,
	// the acknowledgement's read-modify-write loses its conditional put to
	// each report of an agent that reports often (a collector starting up)
	// and gives up; one at a time, the two never race.
	writeMu sync.Mutex

	mu            sync.Mutex
	view          agent.Agent   // reported facts as last translated, desired state as last read
	gen           uint64        // changes of view that are to be stored
	storedGen     uint64        // the last of them stored
	stored        any           // the store's version of what was last read or written
	desiredAt     any           // the store's version of the read whose desired state view holds
	writing       bool          // a writer goroutine stores view
	urgent        bool          // a change to store that may not wait for LazyWrite
	hurry         chan struct{} // closed to end a writer's wait for LazyWrite
	idle          chan struct{}
	abandoned     bool // writes stopped for good (the store panicked)
	capabilities  uint64
	heartbeatSent bool
	sentHash      string // configuration sent on this session
	sentOffer     string // package offer sent on this session
	// Of a myriarch-updater's session: the collector it serves, as last
	// linked in the registry, and the offer key sent for that collector.
	serves, sentFor string
}

// heard records a message at now.
func (s *session) heard(now time.Time) {
	n := now.UnixNano()
	s.heardNanos.Store(n)
	if b := s.slot.Load(); b != nil && b.owner.Load() == s {
		b.heard.Store(n)
	}
}

// silentAt reports whether the session was not heard from for longer than
// timeout as of now.
func (s *session) silentAt(now time.Time, timeout time.Duration) bool {
	return now.UnixNano()-s.heardNanos.Load() > int64(timeout)
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

// open starts a session for the first message of a connection (WebSocket)
// or of an agent unknown to this task (plain HTTP), seeded with the stored
// agent so that dated facts keep their dates and the desired state is known.
func (g *Gateway) open(ctx context.Context, id string, uid []byte, conn types.Connection) (*session, error) {
	stored, found, version, err := g.load(ctx, id)
	if err != nil {
		return nil, err
	}
	if !found {
		stored = agent.Agent{ID: id}
	}
	now := g.now()
	s := &session{id: id, uid: append([]byte(nil), uid...), conn: conn, connectedAt: now, view: stored, stored: version, desiredAt: version}
	s.heard(now)
	g.sessions.put(s)
	return s, nil
}

// report folds a message into the session and decides the response. A
// message that changed a reported fact (the first of a connection always
// does: its connection and task are new) is queued for writing; wrote
// tells the caller to wait for it (not for a deferrable change). A
// heartbeat that changes nothing writes nothing: silence is tracked in
// memory (heard).
func (g *Gateway) report(s *session, msg *protobufs.AgentToServer, fresh bool) (resp *protobufs.ServerToAgent, wrote bool, push [2]string, err error) {
	now := g.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	bye := msg.GetAgentDisconnect() != nil
	s.heard(now)
	if fresh || !g.changesNothing(s, msg) {
		next, err := Translate(s.view, msg, now, g.cfg.PackageName)
		if err != nil {
			return nil, false, push, err
		}
		next.Online, next.ConnectedAt, next.Task = !bye, s.connectedAt, g.cfg.Task
		var urgent bool
		if !sameFacts(s.view, next) {
			next.LastSeen, wrote, urgent = now, true, !deferrable(s.view, next)
		}
		s.view = next
		if c := next.LinkedCollector(); c != s.serves && !bye {
			g.relink(s, c)
		}
		if wrote {
			g.queueLocked(s, urgent)
		}
		wrote = wrote && urgent // a deferrable write is not waited for
	}
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
	return resp, wrote, push, nil
}

// changesNothing reports whether msg is a heartbeat that Translate and the
// connection facts would leave the view as it is: no field that Translate
// folds in, the capabilities unchanged, and the view already online on this
// connection of this task. Most messages of an idle fleet are such
// heartbeats; they skip Translate's copies of the view and the comparison
// of every fact. Under s.mu.
func (g *Gateway) changesNothing(s *session, msg *protobufs.AgentToServer) bool {
	c := msg.GetCapabilities()
	return msg.GetAgentDescription() == nil && msg.GetHealth() == nil && msg.GetRemoteConfigStatus() == nil && msg.GetEffectiveConfig() == nil &&
		msg.GetPackageStatuses() == nil && msg.GetAgentDisconnect() == nil &&
		(c == 0 || c == s.view.Capabilities) &&
		s.view.Online && s.view.ConnectedAt.Equal(s.connectedAt) && s.view.Task == g.cfg.Task
}

// answerIdle answers, in place of report and the rest of handle, a
// heartbeat of an open session that changes nothing (changesNothing) and
// gets nothing back but the plain answer: no heartbeat offer due and no
// configuration or package offer pending. ok is false for any other
// message. It takes no store call and grows no stack, so the connection's
// goroutine runs it itself: handing an idle heartbeat to a handler
// goroutine cost more (a wake-up of a parked goroutine, often of a thread)
// than handling it.
func (g *Gateway) answerIdle(s *session, msg *protobufs.AgentToServer) (resp *protobufs.ServerToAgent, ok bool) {
	now := g.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	caps := s.capabilities
	if c := msg.GetCapabilities(); c != 0 {
		caps = c
	}
	if !g.changesNothing(s, msg) || (!s.heartbeatSent && caps != 0) ||
		wantsConfig(s.view, s.sentHash) || wantsOffer(s.view, s.sentOffer) {
		return nil, false
	}
	s.heard(now)
	s.capabilities = caps
	return &protobufs.ServerToAgent{InstanceUid: s.uid, Capabilities: serverCapabilities}, true
}

// markOffline queues the write that the session's agent went offline, unless
// the view says so already, and waits for it up to WriteWait.
func (g *Gateway) markOffline(s *session, reason string) {
	s.mu.Lock()
	if !s.view.Online {
		s.mu.Unlock()
		g.await(s)
		return
	}
	s.view.Online, s.view.LastSeen = false, g.now()
	g.queueLocked(s, true)
	s.mu.Unlock()
	g.log.Debug("agent offline", "agent", s.id, "reason", reason)
	g.await(s)
}
