package gateway

import (
	"context"
	"encoding/hex"
	"sync"
	"time"

	"github.com/open-telemetry/opamp-go/protobufs"

	"github.com/myriarch/myriarch/core/agent"
)

// Run renews the task's lease every RenewEvery, polls the lagging index
// (the agents this task holds get their pending pushes; NextPoll says when)
// closes the sessions that fell silent every SweepEvery and pings the quiet
// WebSocket connections every PingEvery (ping.go), until ctx
// ends. It is how an engine decision reaches an agent within a second or
// two from whichever task holds it, without scanning the table.
func (g *Gateway) Run(ctx context.Context) {
	poll := time.NewTimer(g.cfg.PollInterval)
	defer poll.Stop()
	pace := pollPace{g: g}
	renew := time.NewTicker(g.RenewEvery())
	defer renew.Stop()
	sweep := time.NewTicker(g.SweepEvery())
	defer sweep.Stop()
	ping := time.NewTicker(g.PingEvery())
	defer ping.Stop()
	g.RenewLease(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-renew.C:
			g.RenewLease(ctx)
		case <-poll.C:
			pushed := g.Poll(ctx)
			poll.Reset(pace.next(pushed))
		case <-sweep.C:
			g.sweep()
		case <-ping.C:
			g.pingQuiet()
		}
	}
}

// Poll reads the lagging index once and pushes to the agents held here.
// The index is eventually consistent, and a stale page must not push an
// older configuration: a held agent whose desired state looks changed is
// taken from the page only when its listed version is after the one whose
// desired state the session holds (OrderedVersion); it is skipped when
// the version is not after it, and read again when either version is
// unknown.
//
// The next page is read while the previous one is pushed (two pages ahead
// at most), so that the pushes of a large wave, and the acknowledgements and
// reports they cause, do not hold up the reading of the rest of the index.
// The first page is read on the caller's goroutine: an idle index is one
// page, and a reader goroutine started for every poll grew a fresh stack
// through the SDK's middleware each second (a twentieth of an idle task's
// CPU at 10,000 agents).
//
// It returns the number of pushes it started.
func (g *Gateway) Poll(ctx context.Context) (pushed int) {
	first, next, ok := g.lagging(ctx, "")
	if !ok {
		return 0
	}
	if next == "" {
		return g.pushPage(ctx, first)
	}
	pages := make(chan laggingPage, 2)
	go func() {
		defer close(pages)
		for token := next; token != ""; {
			var p laggingPage
			if p, token, ok = g.lagging(ctx, token); !ok {
				return
			}
			pages <- p
		}
	}()
	pushed = g.pushPage(ctx, first)
	for p := range pages {
		pushed += g.pushPage(ctx, p)
	}
	return pushed
}

// lagging reads one page of the lagging index; ok is false (and logged)
// when the store failed.
func (g *Gateway) lagging(ctx context.Context, token string) (p laggingPage, next string, ok bool) {
	sctx, cancel := g.storeCtx(ctx)
	defer cancel()
	page, versions, next, err := g.agents.LaggingAgents(sctx, token, g.cfg.PollPageSize)
	if err != nil {
		g.log.Warn("read lagging agents", "error", err)
		return laggingPage{}, "", false
	}
	return laggingPage{page, versions}, next, true
}

// laggingPage is one page of the lagging index: the agents and, when the
// store lists them, their versions.
type laggingPage struct {
	agents   []agent.Agent
	versions []any
}

func (p laggingPage) version(i int) any {
	if i < len(p.versions) {
		return p.versions[i]
	}
	return nil
}

// NextPoll is the wait before the next poll after one that started pushed
// pushes: a tenth of PollInterval while pushes go out, PollInterval when
// there were none. A wave's desired hashes are written over a second or
// more, in chunks; looking again soon after a poll that found some takes
// the next chunks to their agents without waiting out the interval, and an
// idle index (or one that holds only agents of other tasks, or offline
// ones) is still read once per interval.
func (g *Gateway) NextPoll(pushed int) time.Duration {
	if pushed > 0 {
		return g.cfg.PollInterval / 10
	}
	return g.cfg.PollInterval
}

// maxQuickPolls bounds the quick polls in a row: a send that keeps failing
// on a connection that stays open is pushed again at every poll, and must
// not keep the task reading the index ten times an interval.
const maxQuickPolls = 30

// pollPace is NextPoll with that bound: after maxQuickPolls quick polls in
// a row, one whole interval.
type pollPace struct {
	g     *Gateway
	quick int
}

func (p *pollPace) next(pushed int) time.Duration {
	d := p.g.NextPoll(pushed)
	if d >= p.g.cfg.PollInterval || p.quick >= maxQuickPolls {
		p.quick = 0
		return p.g.cfg.PollInterval
	}
	p.quick++
	return d
}

// pushPage pushes to the agents of one page of the lagging index held here.
// A held agent whose desired state looks changed takes it from the page
// when its listed version is later than the session's (Poll), else is read
// again first, in one batch when the store can (a wave starts hundreds at
// once); the sends then go out concurrently (push).
//
// Taking the page's state spares the wave's pushes a read of every agent:
// while the engine writes a wave's 1,000 desired hashes, that consistent
// read waited for its writes, and took longer than the push itself.
func (g *Gateway) pushPage(ctx context.Context, page laggingPage) (pushed int) {
	var held, changed []*session
	for i, a := range page.agents {
		if u := g.sessions.updaterOf(a.ID); u != nil && g.pushListed(ctx, u, a, page.version(i)) {
			pushed++ // its updater is held here
		}
		s := g.sessions.get(a.ID)
		if s == nil {
			continue // held by another task
		}
		held = append(held, s)
		s.mu.Lock()
		looksChanged := s.view.DesiredHash != a.DesiredHash || s.view.PackageOffer != a.PackageOffer
		known := s.desiredAt
		s.mu.Unlock()
		if !looksChanged {
			continue
		}
		v, ordered := page.version(i).(OrderedVersion)
		switch {
		case !ordered || known == nil:
			changed = append(changed, s)
		case v.After(known):
			s.took(a, v)
		default:
			// listed as of the session's state or before it: a stale page
		}
	}
	g.refreshAll(ctx, changed)
	for _, s := range held {
		if s.conn != nil && g.push(ctx, s) { // plain HTTP agents get theirs in the response to their next poll
			pushed++
		}
	}
	return pushed
}

// refreshAll reads the agents of ss again to take their current desired
// state: in one consistent batch read when the store offers it, else one
// by one.
func (g *Gateway) refreshAll(ctx context.Context, ss []*session) {
	br, ok := g.agents.(BatchReader)
	if !ok || len(ss) < 2 {
		for _, s := range ss {
			g.refresh(ctx, s)
		}
		return
	}
	ids := make([]string, len(ss))
	for i, s := range ss {
		ids[i] = s.id
	}
	sctx, cancel := g.storeCtx(ctx)
	defer cancel()
	got, versions, err := br.LoadAgents(sctx, ids)
	if err != nil {
		g.log.Warn("read lagging agents again", "agents", len(ids), "error", err)
		return
	}
	for _, s := range ss {
		if a, found := got[s.id]; found {
			s.took(a, versions[s.id])
		}
	}
}

// refresh reads the agent to take its current desired state, and its
// version when no write is in flight, so that the session's next write
// needs no read either.
func (g *Gateway) refresh(ctx context.Context, s *session) {
	sctx, cancel := g.storeCtx(ctx)
	defer cancel()
	a, found, version, err := g.agents.LoadAgent(sctx, s.id)
	if err != nil || !found {
		g.log.Warn("read agent", "agent", s.id, "found", found, "error", err)
		return
	}
	s.took(a, version)
}

// took takes the desired state of a read of the agent (or of its lagging
// entry) at version, and the version itself when no write is in flight:
// a read's when it holds the facts the session wrote, a listing's when
// nothing but the desired state was written since the session's version
// (DesiredListing).
func (s *session) took(a agent.Agent, version any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.view.DesiredHash, s.view.PackageOffer, s.view.TargetVersion = a.DesiredHash, a.PackageOffer, a.TargetVersion
	s.desiredAt = version
	if s.writing {
		return
	}
	if l, ok := version.(DesiredListing); ok {
		if v, ok := l.Over(s.stored); ok {
			s.stored = v
		}
		return
	}
	if sameFacts(s.view, a) {
		s.stored = version // what this session wrote, with the new desired state
	}
}

// push sends a WebSocket agent what it lacks, if anything, and reports
// whether it started a send.
func (g *Gateway) push(ctx context.Context, s *session) bool {
	s.mu.Lock()
	hash, offer := s.takePush()
	s.mu.Unlock()
	if hash == "" && offer == "" {
		return false
	}
	msg := &protobufs.ServerToAgent{InstanceUid: s.uid, Capabilities: serverCapabilities}
	g.fill(ctx, s, msg, hash, offer)
	if msg.RemoteConfig == nil && msg.PackagesAvailable == nil {
		return false
	}
	// opamp-go serializes sends per connection; a stuck agent must not
	// hold up the poll, so each push has its own goroutine.
	go func() {
		defer g.recoverIn("push")
		if err := s.conn.Send(context.WithoutCancel(ctx), msg); err != nil {
			s.unsend(hash, offer)
			g.log.Warn("push to agent", "agent", s.id, "error", err)
			return
		}
		g.ack(ctx, s, msg, offer)
	}()
	return true
}

// fill adds the configuration and the package offer decided by takePush to
// msg. A configuration that cannot be read is not sent and stays pending.
func (g *Gateway) fill(ctx context.Context, s *session, msg *protobufs.ServerToAgent, hash, offer string) {
	if hash != "" {
		rc, err := g.remoteConfig(ctx, hash)
		if err != nil {
			g.log.Error("read configuration to push", "agent", s.id, "hash", hash, "error", err)
			s.unsend(hash, "")
			hash = ""
		} else {
			msg.RemoteConfig = rc
			g.log.Info("push configuration", "agent", s.id, "hash", hash)
		}
	}
	if offer != "" {
		msg.PackagesAvailable = packagesFor(g.cfg.PackageName, offer, g.cfg.DownloadURL)
		g.log.Info("offer package", "agent", s.id, "offer", offer)
	}
}

// ack tells a store that asks for it what was sent, so that the agent
// leaves the lagging index; a push that is lost afterwards is sent again
// when the agent reconnects (it is compared with what the agent reports).
//
// A configuration alone is acknowledged only if the agent has not
// reported its hash within AckGrace: a collector reports the hash it got
// at once (APPLYING), and that report's write, made anyway, takes it out
// of the index. A wave then costs no acknowledgement writes while its
// pushes and reports compete for the store. A package offer is
// acknowledged at once: the agent's version changes only after its
// restart.
func (g *Gateway) ack(ctx context.Context, s *session, msg *protobufs.ServerToAgent, offerKey string) {
	acker, ok := g.agents.(PushAcker)
	if !ok || (msg.RemoteConfig == nil && msg.PackagesAvailable == nil) {
		return
	}
	hash, offer := "", ""
	if msg.RemoteConfig != nil {
		hash = hex.EncodeToString(msg.RemoteConfig.ConfigHash)
	}
	if msg.PackagesAvailable != nil {
		offer = offerKey
	}
	if offer == "" {
		go g.ackUnlessReported(context.WithoutCancel(ctx), acker, s, hash)
		return
	}
	g.writeAck(ctx, acker, s, hash, offer)
}

// ackUnlessReported acknowledges hash after AckGrace unless the agent has
// reported it by then, or the push is no longer the session's latest.
//
// The store keeps one acknowledged hash per agent, and an agent whose
// desired hash equals it is out of the lagging index: the gateway never
// hears of that desired state again. An acknowledgement written late, after
// a newer configuration was pushed on the session (a rollout that follows
// its bootstrap within the grace), would name the older hash while the
// agent runs the newer one, whose report writes no acknowledgement; a
// rollback to the older hash would then look delivered and never be sent.
// So a push superseded on its session (another hash sent since, or its
// send forgotten), or whose session no longer holds the agent (the session
// that does compares what the agent reports and pushes again), is not
// acknowledged.
func (g *Gateway) ackUnlessReported(ctx context.Context, acker PushAcker, s *session, hash string) {
	defer g.recoverIn("ack")
	<-g.cfg.After(g.cfg.AckGrace)
	s.mu.Lock()
	reported := s.view.RemoteConfig.Hash == hash
	superseded := s.sentHash != hash
	s.mu.Unlock()
	switch {
	case reported:
		g.log.Debug("configuration reported by the agent: no acknowledgement written", "agent", s.id, "hash", hash)
		return
	case superseded || g.sessions.get(s.id) != s:
		g.log.Debug("configuration superseded: no acknowledgement written", "agent", s.id, "hash", hash)
		return
	}
	g.writeAck(ctx, acker, s, hash, "")
}

func (g *Gateway) writeAck(ctx context.Context, acker PushAcker, s *session, hash, offer string) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	sctx, cancel := g.storeCtx(ctx)
	defer cancel()
	if err := acker.AckPush(sctx, s.id, hash, offer); err != nil {
		g.log.Warn("acknowledge push", "agent", s.id, "error", err)
	}
}

// remoteConfig builds the AgentRemoteConfig of hash; bodies are cached
// because a rollout sends one hash to many agents.
func (g *Gateway) remoteConfig(ctx context.Context, hash string) (*protobufs.AgentRemoteConfig, error) {
	c, ok := g.cache.get(hash)
	if !ok {
		sctx, cancel := g.storeCtx(ctx)
		defer cancel()
		body, contentType, err := g.configs.ConfigByHash(sctx, hash)
		if err != nil {
			return nil, err
		}
		c = cachedConfig{body: body, contentType: contentType}
		g.cache.put(hash, c)
	}
	return remoteConfigFor(hash, c.body, c.contentType)
}

// sweep ends the sessions not heard from for the liveness timeout
// (Heartbeat × OfflineAfterHeartbeats, judged in memory: heartbeats are not written):
// a WebSocket connection is closed, whose close callback writes the agent
// offline; a plain HTTP session is ended and written offline here. It reads
// each session's last message time atomically under the registry's read
// lock, neither copying the registry nor locking a session, and acts on the
// silent ones after the lock is released.
func (g *Gateway) sweep() {
	for _, s := range g.sessions.silent(g.now(), g.timeout) {
		if s.conn != nil {
			g.log.Debug("agent fell silent: closing its connection", "agent", s.id)
			_ = s.conn.Disconnect() // an error means it is closed already
			continue
		}
		g.sessions.remove(s)
		g.log.Debug("plain HTTP agent fell silent", "agent", s.id)
		g.markOffline(s, "silent")
	}
}

// SweepEvery is how often Run looks for silent sessions: a tenth of the
// liveness timeout, so that a silent agent is closed at most 10 % late,
// and never more often than the poll. With the defaults (Heartbeat 30 s ×
// OfflineAfterHeartbeats 3 = 90 s, PollInterval 1 s): every 9 s, and a silent agent
// goes offline between 90 s and 99 s after its last message. Each sweep
// reads every session, so running it each second cost more CPU than
// everything else an idle task does but the OpAMP reads and writes.
func (g *Gateway) SweepEvery() time.Duration { return max(g.timeout/10, g.cfg.PollInterval) }

type cachedConfig struct {
	body        []byte
	contentType string
}

// configCache keeps the bodies of the last few configurations; rendered
// configurations are immutable by hash, so entries never go stale.
type configCache struct {
	mu     sync.Mutex
	byHash map[string]cachedConfig
}

const configCacheSize = 16

func (c *configCache) get(hash string) (cachedConfig, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.byHash[hash]
	return v, ok
}

func (c *configCache) put(hash string, v cachedConfig) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.byHash) >= configCacheSize {
		clear(c.byHash) // rollouts use one or two hashes at a time: a full reset is enough
	}
	c.byHash[hash] = v
}
