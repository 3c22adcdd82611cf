package gateway

import (
	"bytes"
	"context"
	"encoding/hex"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/open-telemetry/opamp-go/protobufs"
	"google.golang.org/protobuf/proto"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/revision"
)

var transports = []string{"ws", "http"}

func TestGateway_RecordsAgent(t *testing.T) {
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			h := newHarness(t, newMemAgents())
			h.startAgent(transport, token)
			h.eventually("the agent recorded with its health", func() bool {
				return h.agents.get(id1).Health.Status == agent.StatusOK
			})
			a := h.agents.get(id1)
			if !a.Online || !a.ConnectedAt.Equal(t0) || !a.LastSeen.Equal(t0) || a.ServiceVersion != "0.110.0" ||
				a.Attributes["host.name"] != "host-1" || a.Attributes["site.timezone"] != "Europe/Berlin" ||
				!a.Health.Healthy || !a.Health.StartTime.Equal(at(1)) || !a.Health.ReportedAt.Equal(t0) {
				t.Errorf("recorded %+v", a)
			}
		})
	}
}

func TestGateway_RefusesBadToken(t *testing.T) {
	h := newHarness(t, newMemAgents())
	for _, bad := range []string{"wrong", ""} {
		if _, resp, err := h.dialWS(bad); err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("WebSocket with token %q: err %v, response %v; want 401", bad, err, resp)
		}
		if resp, _ := h.postHTTP(bad, mustMarshal(t, msg(withVersion("1.0")))); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("plain HTTP with token %q: status %d, want 401", bad, resp.StatusCode)
		}
	}
	a := h.startAgent("ws", "wrong")
	receive(t, a.failed, "the client's connect failure")
	if n := h.agents.writeCount(); n != 0 || h.g.Len() != 0 {
		t.Errorf("%d writes and %d sessions after refused agents, want none", n, h.g.Len())
	}
	if !h.logged("WARN", "refused an agent without a valid token") {
		t.Error("refusal not logged")
	}
	w, _, err := h.dialWS("old-token") // the previous secret during a rotation
	must(t, err)
	if w.send(msg(withVersion("1.0"))).ErrorResponse != nil || h.agents.writeCount() != 1 {
		t.Error("the second configured token was not accepted")
	}
}

// ackGraceAfter makes the acknowledgement grace a channel the test closes
// (the harness's After otherwise, for the writer's backoffs).
func ackGraceAfter(release <-chan time.Time) func(*Config) {
	const grace = 77 * time.Millisecond
	return func(c *Config) {
		c.AckGrace = grace
		c.After = func(d time.Duration) <-chan time.Time {
			if d == grace {
				return release
			}
			return time.After(d)
		}
	}
}

// startHeldGrace starts a gateway whose acknowledgement grace ends when
// release is closed, and one agent on transport, once it is recorded.
func startHeldGrace(t *testing.T, transport string) (*harness, *testAgent, chan time.Time) {
	t.Helper()
	release := make(chan time.Time)
	h := newHarness(t, newMemAgents(), ackGraceAfter(release))
	a := h.startAgent(transport, token)
	h.eventually("the agent recorded", func() bool { return h.agents.get(id1).Online })
	return h, a, release
}

// TestGateway_PushesConfig: the configuration is pushed once; the agent
// reports its hash within the acknowledgement grace, and that report,
// which takes it out of the lagging index, is all that is written.
func TestGateway_PushesConfig(t *testing.T) {
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			h, a, release := startHeldGrace(t, transport)

			h.agents.setDesired(id1, "abcd01", "") // the engine starts a configuration target
			rc := receive(t, a.configs, "the remote configuration")
			if !bytes.Equal(rc.ConfigHash, hashA) || string(rc.Config.ConfigMap[""].Body) != "receivers: {}" {
				t.Fatalf("received %v", rc)
			}
			must(t, a.c.SetRemoteConfigStatus(&protobufs.RemoteConfigStatus{LastRemoteConfigHash: rc.ConfigHash, Status: applied}))
			h.eventually("APPLIED recorded", func() bool { return h.agents.get(id1).RemoteConfig.Status == agent.ConfigApplied })
			if got := h.agents.get(id1).RemoteConfig; got.Hash != "abcd01" || !got.Since.Equal(t0) {
				t.Errorf("remote config %+v", got)
			}
			close(release) // the grace ends
			h.eventually("the acknowledgement left out", func() bool {
				return h.logged("DEBUG", "configuration reported by the agent: no acknowledgement written")
			})
			if acks := h.agents.ackList(); len(acks) != 0 {
				t.Errorf("acknowledged pushes %q, want none: the agent reported the hash", acks)
			}
			select {
			case again := <-a.configs:
				t.Errorf("configuration sent twice: %v", again)
			case <-time.After(50 * time.Millisecond): // several polls
			}
		})
	}
}

// An agent that does not report the hash it was sent within the grace gets
// the acknowledgement written, so that it leaves the lagging index.
func TestGateway_PushedConfigNotReported_AcknowledgedAfterTheGrace(t *testing.T) {
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			h, a, release := startHeldGrace(t, transport)
			h.agents.setDesired(id1, "abcd01", "")
			receive(t, a.configs, "the remote configuration")
			if acks := h.agents.ackList(); len(acks) != 0 {
				t.Fatalf("acknowledged %q before the grace ended", acks)
			}
			close(release)
			h.eventually("the push acknowledged to the store", func() bool { return len(h.agents.ackList()) > 0 })
			if acks := h.agents.ackList(); !slices.Equal(acks, []string{id1 + " abcd01 "}) {
				t.Errorf("acknowledged pushes %q, want the configuration once", acks)
			}
		})
	}
}

// The acknowledgement and the session's own writes of an agent that reports
// all the time (a collector starting up) take turns. Overlapping, in
// DynamoDB the acknowledgement's read-modify-write lost its conditional put
// to every report and gave up after 8 attempts ("acknowledge push ... 8
// attempts lost"), and the agent stayed in the lagging index.
func TestGateway_AcknowledgementTakesTurnsWithTheSessionsWrites(t *testing.T) {
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			release := make(chan time.Time)
			agents := newMemAgents()
			agents.writeTime = 2 * time.Millisecond
			h := newHarness(t, agents, ackGraceAfter(release))
			a := h.startAgent(transport, token)
			h.eventually("the agent recorded", func() bool { return h.agents.get(id1).Online })

			h.agents.setDesired(id1, "abcd01", "")
			receive(t, a.configs, "the remote configuration")
			stop := make(chan struct{})
			chatter := make(chan struct{})
			go func() { // health flips: each report is a write at once
				defer close(chatter)
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					if err := a.c.SetHealth(hl(i%2 == 0, agent.StatusOK, "", 1, nil)); err != nil {
						return
					}
					time.Sleep(time.Millisecond)
				}
			}()
			h.eventually("the agent's reports being written", func() bool { return agents.writesSoFar() > 3 })
			close(release)
			h.eventually("the push acknowledged", func() bool { return len(h.agents.ackList()) > 0 })
			time.Sleep(20 * time.Millisecond) // writes after the acknowledgement
			close(stop)
			<-chatter
			agents.mu.Lock()
			defer agents.mu.Unlock()
			if len(agents.overlaps) > 0 {
				t.Errorf("writes of the agent overlapped: %q", agents.overlaps)
			}
		})
	}
}

// A configuration pushed within the grace of an earlier one supersedes it:
// the earlier push is not acknowledged when its grace ends, although the
// agent reports another hash by then. Acknowledged, it would stay the
// agent's delivered hash while the agent runs (and reports, which writes
// no acknowledgement) the newer one, and a rollback to it would look
// delivered: out of the lagging index, never sent. This is the bootstrap
// followed at once by a rollout, then a rollback to the bootstrap
// configuration (local/stack TestTopologyRollout_RedStage_RollbackAll).
func TestGateway_SupersededPushNotAcknowledged_RollbackIsPushed(t *testing.T) {
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			h, a, release := startHeldGrace(t, transport)

			h.agents.setDesired(id1, "abcd01", "") // bootstrap
			if rc := receive(t, a.configs, "the bootstrap configuration"); !bytes.Equal(rc.ConfigHash, hashA) {
				t.Fatalf("received %x, want abcd01", rc.ConfigHash)
			}
			h.agents.setDesired(id1, "abcd02", "") // a rollout, within the bootstrap's grace
			rc := receive(t, a.configs, "the rollout's configuration")
			if hex.EncodeToString(rc.ConfigHash) != "abcd02" {
				t.Fatalf("received %x, want abcd02", rc.ConfigHash)
			}
			must(t, a.c.SetRemoteConfigStatus(&protobufs.RemoteConfigStatus{LastRemoteConfigHash: rc.ConfigHash, Status: applied}))
			h.eventually("abcd02 APPLIED recorded", func() bool {
				got := h.agents.get(id1).RemoteConfig
				return got.Hash == "abcd02" && got.Status == agent.ConfigApplied
			})
			close(release) // both graces end
			h.eventually("both graces handled", func() bool {
				return h.logged("DEBUG", "configuration reported by the agent: no acknowledgement written") &&
					(h.logged("DEBUG", "configuration superseded: no acknowledgement written") || len(h.agents.ackList()) > 0)
			})
			if acks := h.agents.ackList(); len(acks) != 0 {
				t.Errorf("acknowledged pushes %q, want none: abcd01 was superseded, abcd02 reported", acks)
			}

			h.agents.setDesired(id1, "abcd01", "") // the rollback
			if rc := receive(t, a.configs, "the rollback's configuration"); !bytes.Equal(rc.ConfigHash, hashA) {
				t.Fatalf("received %x, want abcd01", rc.ConfigHash)
			}
		})
	}
}

func TestGateway_PushesOnConnect(t *testing.T) {
	agents := newMemAgents()
	agents.setDesired(id1, "abcd02", "") // decided while the agent was away
	h := newHarness(t, agents)
	a := h.startAgent("ws", token)
	rc := receive(t, a.configs, "the remote configuration on connect")
	if string(rc.Config.ConfigMap[""].Body) != "receivers: {otlp: {}}" {
		t.Errorf("received %v", rc)
	}
}

func TestGateway_OffersPackage(t *testing.T) {
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			h := newHarness(t, newMemAgents())
			a := h.startAgent(transport, token)
			h.eventually("the agent recorded", func() bool { return h.agents.get(id1).Online })

			h.agents.setDesired(id1, "", "0.111.0") // the updater executor starts a version target
			offer := receive(t, a.offers, "the package offer")
			p := offer.Packages[""]
			if p == nil || p.Version != "0.111.0" || p.File.GetDownloadUrl() != "https://example.invalid/otelcol/0.111.0" {
				t.Fatalf("offer %v", offer)
			}
			must(t, a.c.SetPackageStatuses(&protobufs.PackageStatuses{ServerProvidedAllPackagesHash: offer.AllPackagesHash,
				Packages: map[string]*protobufs.PackageStatus{"": {AgentHasVersion: "0.110.0", ServerOfferedVersion: "0.111.0",
					Status: protobufs.PackageStatusEnum_PackageStatusEnum_Downloading, DownloadDetails: &protobufs.PackageDownloadDetails{DownloadPercent: 10}}}}))
			h.eventually("DOWNLOADING recorded", func() bool { return h.agents.get(id1).Package.Status == agent.PackageDownloading })
			if got := h.agents.get(id1).Package; got.Since.IsZero() || got != (agent.PackageStatus{Version: "0.111.0", Status: agent.PackageDownloading, DownloadPercent: 10, Since: got.Since}) {
				t.Errorf("package %+v", got)
			}
			h.eventually("the offer acknowledged to the store", func() bool { return len(h.agents.ackList()) > 0 })
			if acks := h.agents.ackList(); !slices.Equal(acks, []string{id1 + "  0.111.0"}) {
				t.Errorf("acknowledged pushes %q, want the offer once", acks)
			}
			select {
			case again := <-a.offers:
				t.Errorf("offer sent twice: %v", again)
			case <-time.After(50 * time.Millisecond):
			}
		})
	}
}

func TestGateway_CloseMarksOffline(t *testing.T) {
	t.Run("agent disconnects", func(t *testing.T) {
		h := newHarness(t, newMemAgents())
		a := h.startAgent("ws", token)
		h.eventually("the agent recorded", func() bool { return h.agents.get(id1).Online })
		h.clock.advance(time.Second)
		must(t, a.stop())
		h.eventually("the agent offline", func() bool { return !h.agents.get(id1).Online })
		h.eventually("the close logged", func() bool { return h.logged("DEBUG", "agent disconnected") })
		if h.logged("ERROR", "agent connection lost") || h.g.Len() != 0 {
			t.Errorf("a normal close must be logged at debug level:\n%s", h.logs)
		}
	})
	t.Run("connection lost", func(t *testing.T) {
		h := newHarness(t, newMemAgents())
		w, _, err := h.dialWS(token)
		must(t, err)
		w.send(msg(withVersion("1.0")))
		h.clock.advance(time.Second)
		_ = w.conn.UnderlyingConn().Close() // no close frame, no goodbye
		h.eventually("the agent offline", func() bool { return !h.agents.get(id1).Online })
		if got := h.agents.get(id1).LastSeen; !got.Equal(at(1)) {
			t.Errorf("offline as of %v, want the close time %v", got, at(1))
		}
		if !h.logged("ERROR", "agent connection lost") {
			t.Errorf("an unexpected close must be logged at error level:\n%s", h.logs)
		}
	})
	t.Run("newer connection wins", func(t *testing.T) {
		h := newHarness(t, newMemAgents())
		old, _, err := h.dialWS(token)
		must(t, err)
		old.send(msg(withVersion("1.0")))
		h.clock.advance(time.Second)
		fresh, _, err := h.dialWS(token) // the agent reconnected before the old connection was seen to close
		must(t, err)
		fresh.send(msg(withVersion("1.0")))
		_ = old.conn.Close()
		h.eventually("the old connection closed", func() bool { return h.logged("ERROR", "agent connection lost") })
		if a := h.agents.get(id1); !a.Online || !a.ConnectedAt.Equal(at(1)) {
			t.Errorf("the close of the old connection took the agent offline: %+v", a)
		}
	})
}

// Which messages write (LazyWrite off, so that each change is written at
// once; lazywrite_test.go has the deferral).
func TestGateway_WritesOnlyChanges(t *testing.T) {
	h := newHarness(t, newMemAgents(), func(c *Config) { c.LazyWrite = -1 })
	w, _, err := h.dialWS(token)
	must(t, err)
	steps := []struct {
		name    string
		advance time.Duration
		in      *protobufs.AgentToServer
		writes  int // total so far
	}{
		{name: "connect", advance: 0, in: msg(withVersion("1.0"), withHealth(hl(true, "StatusOK", "", 1, nil))), writes: 1},
		{name: "heartbeat", advance: 30 * time.Second, in: msg(), writes: 1},                                      // nothing changed
		{name: "same health again", advance: 0, in: msg(withHealth(hl(true, "StatusOK", "", 1, nil))), writes: 1}, // repeated, not new
		{name: "heartbeat", advance: 30 * time.Second, in: msg(), writes: 1},                                      // idle heartbeats never write
		{name: "heartbeat", advance: 30 * time.Second, in: msg(), writes: 1},
		{name: "health changed", advance: 0, in: msg(withHealth(hl(false, "StatusRecoverableError", "boom", 1, nil))), writes: 2},
		{name: "config status", advance: 1 * time.Second, in: msg(withRemoteConfig(hashA, applied, "")), writes: 3},
		{name: "same description", advance: 1 * time.Second, in: msg(withVersion("1.0")), writes: 3},
		{name: "new version", advance: 1 * time.Second, in: msg(withVersion("1.1")), writes: 4},
		{name: "effective config", advance: 1 * time.Second, in: msg(withEffective(map[string]string{"": "a: 1"})), writes: 5},
		{name: "same effective config", advance: 1 * time.Second, in: msg(withEffective(map[string]string{"": "a: 1"})), writes: 5}, // reported again, unchanged
		{name: "heartbeat", advance: 30 * time.Second, in: msg(), writes: 5},                                                        // absent: kept
		{name: "effective config changed", advance: 1 * time.Second, in: msg(withEffective(map[string]string{"": "a: 2"})), writes: 6},
		{name: "capabilities in a heartbeat", advance: 30 * time.Second, in: msg(withCapabilities(5)), writes: 7}, // a heartbeat that changes a fact writes
		{name: "heartbeat with the same capabilities", advance: 30 * time.Second, in: msg(withCapabilities(5)), writes: 7},
		{name: "heartbeat without capabilities", advance: 30 * time.Second, in: msg(), writes: 7}, // 0: not sent, unchanged
	}
	for _, s := range steps {
		h.clock.advance(s.advance)
		if resp := w.send(s.in); resp.ErrorResponse != nil {
			t.Fatalf("%s: error response %v", s.name, resp.ErrorResponse)
		}
		// A change no decision waits for (the effective configuration) is
		// answered before it is stored; its writer was started before the
		// answer.
		<-h.g.writes.idle()
		if got := h.agents.writeCount(); got != s.writes {
			t.Errorf("%s: %d writes, want %d", s.name, got, s.writes)
		}
	}
}

func TestGateway_DropsMalformed(t *testing.T) {
	h := newHarness(t, newMemAgents())
	w, _, err := h.dialWS(token)
	must(t, err)
	w.sendBytes([]byte{0, 0xff, 0xff, 0xff}) // not protobuf: opamp-go drops it, no answer
	w.sendBytes([]byte{7, 1})                // a non-zero header
	if resp := w.send(&protobufs.AgentToServer{InstanceUid: []byte("short")}); resp.GetErrorResponse().GetType() != protobufs.ServerErrorResponseType_ServerErrorResponseType_BadRequest {
		t.Errorf("bad instance uid answered %v, want BadRequest", resp)
	}
	if n := h.agents.writeCount(); n != 0 {
		t.Fatalf("%d writes from malformed messages, want none", n)
	}
	if resp := w.send(msg(withVersion("1.0"))); resp.ErrorResponse != nil || h.agents.writeCount() != 1 {
		t.Errorf("the connection did not survive: %v, %d writes", resp, h.agents.writeCount())
	}
	if other := w.send(&protobufs.AgentToServer{InstanceUid: bytes.Repeat([]byte{9}, 16)}); other.GetErrorResponse() == nil || h.agents.writeCount() != 1 {
		t.Error("another agent's uid on the same connection was accepted")
	}
	for _, line := range []string{"dropped an undecodable OpAMP message", "dropped a malformed OpAMP message"} {
		if !h.logged("WARN", line) {
			t.Errorf("no log line %q", line)
		}
	}

	resp, _ := h.postHTTP(token, []byte{0xff, 0xff})
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("plain HTTP garbage: status %d, want 400", resp.StatusCode)
	}
	resp, _ = h.postHTTP(token, bytes.Repeat([]byte{0}, 128<<10))
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("plain HTTP oversized body: status %d, want 413", resp.StatusCode)
	}
	if n := h.agents.writeCount(); n != 1 {
		t.Errorf("%d writes, want only the valid message's", n)
	}
}

func TestGateway_RecoversFromPanic(t *testing.T) {
	agents := newMemAgents()
	agents.panicOn = id1
	h := newHarness(t, agents)
	w, _, err := h.dialWS(token)
	must(t, err)
	must(t, w.conn.WriteMessage(2, append([]byte{0}, mustMarshal(t, msg(withVersion("1.0")))...)))
	h.eventually("the panic logged", func() bool { return h.logged("ERROR", "recovered from a panic") })
	other := []byte{2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}
	if resp := w.send(&protobufs.AgentToServer{InstanceUid: other}); resp == nil {
		t.Error("no answer after a panic")
	}
}

func TestGateway_HeartbeatOffer(t *testing.T) {
	h := newHarness(t, newMemAgents())
	w, _, err := h.dialWS(token)
	must(t, err)
	first := msg(withVersion("1.0"))
	first.Capabilities = uint64(protobufs.AgentCapabilities_AgentCapabilities_ReportsStatus | protobufs.AgentCapabilities_AgentCapabilities_ReportsHeartbeat)
	resp := w.send(first)
	if got := resp.GetConnectionSettings().GetOpamp().GetHeartbeatIntervalSeconds(); got != 30 {
		t.Errorf("heartbeat offer %d s, want 30 s", got)
	}
	if resp.GetCapabilities()&uint64(protobufs.ServerCapabilities_ServerCapabilities_OffersRemoteConfig) == 0 {
		t.Errorf("server capabilities %b", resp.GetCapabilities())
	}
	if again := w.send(msg()); again.GetConnectionSettings() != nil {
		t.Error("heartbeat offered again on the same connection")
	}
}

func TestGateway_AsksForFullState(t *testing.T) {
	h := newHarness(t, newMemAgents())
	w, _, err := h.dialWS(token)
	must(t, err)
	full := uint64(protobufs.ServerToAgentFlags_ServerToAgentFlags_ReportFullState)
	if resp := w.send(msg()); resp.GetFlags()&full == 0 {
		t.Error("a first message without description did not ask for the full state")
	}
	if resp := w.send(msg()); resp.GetFlags()&full != 0 {
		t.Error("asked for the full state again")
	}
}

func TestGateway_SilentHTTPAgentGoesOffline(t *testing.T) {
	h := newHarness(t, newMemAgents())
	if resp, _ := h.postHTTP(token, mustMarshal(t, msg(withVersion("1.0")))); resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	h.clock.advance(90 * time.Second)
	h.g.sweep()
	if h.g.Len() != 1 || !h.agents.get(id1).Online {
		t.Fatal("an agent within the liveness limit was dropped")
	}
	h.clock.advance(time.Second)
	h.g.sweep()
	if h.g.Len() != 0 || h.agents.get(id1).Online {
		t.Error("a silent plain HTTP agent stayed online")
	}
}

func TestGateway_DrainLeavesAgentsOnline(t *testing.T) {
	h := newHarness(t, newMemAgents())
	w, _, err := h.dialWS(token)
	must(t, err)
	w.send(msg(withVersion("1.0")))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	must(t, h.g.Drain(ctx))
	if h.g.Len() != 0 {
		t.Errorf("%d sessions after the drain", h.g.Len())
	}
	if !h.agents.get(id1).Online || h.agents.offlineCount() != 0 {
		t.Error("a drained agent was marked offline: it reconnects to another task at once")
	}
	if _, resp, err := h.dialWS(token); err == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a draining task accepted a connection: %v", err)
	}
}

func mustMarshal(t *testing.T, m *protobufs.AgentToServer) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	must(t, err)
	return b
}

// An agent reports the largest configuration a revision may carry back as
// its effective configuration, with room for what a supervisor adds: the
// default bound must not drop that report (the stack test
// TestLargeConfiguration_RolloutCompletes rolls one out end to end).
func TestDefaultMaxMessageBytes_TakesTheLargestConfigurationBack(t *testing.T) {
	if DefaultMaxMessageBytes < revision.MaxConfigBytes+1<<20 {
		t.Fatalf("DefaultMaxMessageBytes %d: want at least revision.MaxConfigBytes (%d) + 1 MiB", DefaultMaxMessageBytes, revision.MaxConfigBytes)
	}
	cfg, err := Config{Now: time.Now, Tokens: []string{token}}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MaxMessageBytes != DefaultMaxMessageBytes {
		t.Fatalf("default MaxMessageBytes %d, want %d", cfg.MaxMessageBytes, DefaultMaxMessageBytes)
	}
}
