package gateway

import (
	"context"

	"github.com/open-telemetry/opamp-go/protobufs"

	"github.com/myriarch/myriarch/core/agent"
)

// A collector that takes no packages itself (the OpenTelemetry supervisor
// does not install any) is updated by a myriarch-updater beside it: an
// agent of its own that names the collector (agent.AttrLinkedCollector).
// The collector's offer stays on the collector's item, where the engine
// writes it and the lagging index lists it; the gateway task that holds the
// updater's connection sends it there, judged by the collector's version
// and the updater's package status (agent.WithUpdater), and acknowledges it
// on the collector's item. An updater that connects, or names a collector
// anew, is sent that collector's pending offer at once.

// relink records that s serves collector now (under s.mu), and sends it the
// collector's pending offer.
func (g *Gateway) relink(s *session, collector string) {
	g.sessions.link(s, s.serves, collector)
	s.serves, s.sentFor = collector, ""
	if collector == "" || s.conn == nil {
		return
	}
	go func() {
		defer g.recoverIn("offer to an updater")
		ctx, cancel := g.storeCtx(context.Background())
		defer cancel()
		c, found, _, err := g.load(ctx, collector)
		if err != nil || !found {
			return // the next poll lists the collector when it lags
		}
		g.pushFor(ctx, s, c)
	}()
}

// pushListed is pushFor for collector c as a lagging page lists it. A page
// that lists the desired state alone (DesiredListing) lacks what pushFor
// judges by (the collector's capabilities and version), so the collector
// is read first, and only when u serves it and has not been sent its offer:
// once per offer, not at every poll while the offer lags.
func (g *Gateway) pushListed(ctx context.Context, u *session, c agent.Agent, version any) bool {
	if _, partial := version.(DesiredListing); partial {
		u.mu.Lock()
		skip := u.conn == nil || u.serves != c.ID || c.PackageOffer == "" || c.PackageOffer == u.sentFor
		u.mu.Unlock()
		if skip {
			return false
		}
		whole, found, _, err := g.load(ctx, c.ID)
		if err != nil || !found {
			g.log.Warn("read the collector of an updater's offer", "agent", c.ID, "found", found, "error", err)
			return false
		}
		c = whole
	}
	return g.pushFor(ctx, u, c)
}

// pushFor sends collector c's pending offer to u, the session of its
// updater, and reports whether it started a send.
func (g *Gateway) pushFor(ctx context.Context, u *session, c agent.Agent) bool {
	if c.InstallsOwnPackages() || u.conn == nil {
		return false
	}
	u.mu.Lock()
	if u.serves != c.ID || !offerPending(c.WithUpdater(u.view), u.sentFor) {
		u.mu.Unlock()
		return false
	}
	offer := c.PackageOffer
	u.sentFor = offer
	goos, arch := u.view.Attributes["os.type"], u.view.Attributes["host.arch"]
	u.mu.Unlock()
	unsend := func(why string, err error) {
		u.mu.Lock()
		if u.sentFor == offer {
			u.sentFor = "" // the next poll tries again
		}
		u.mu.Unlock()
		g.log.Warn(why, "agent", c.ID, "updater", u.id, "offer", offer, "error", err)
	}
	go func() {
		defer g.recoverIn("push to an updater")
		// fetched here, not on the poll's goroutine: a slow mirror holds up
		// this offer only
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*sourceTimeout)
		file, err := g.source.File(sctx, agent.OfferVersion(offer), goos, arch)
		cancel()
		if err != nil {
			unsend("read the package source", err)
			return
		}
		msg := &protobufs.ServerToAgent{InstanceUid: u.uid, Capabilities: serverCapabilities,
			PackagesAvailable: packagesOf(g.cfg.PackageName, offer, file)}
		g.log.Info("offer package to the collector's updater", "agent", c.ID, "updater", u.id, "offer", offer, "url", file.GetDownloadUrl())
		if err := u.conn.Send(context.WithoutCancel(ctx), msg); err != nil {
			unsend("push to an updater", err)
			return
		}
		if acker, ok := g.agents.(PushAcker); ok {
			if cs := g.sessions.get(c.ID); cs != nil { // the collector's own writes wait (session.writeMu)
				cs.writeMu.Lock()
				defer cs.writeMu.Unlock()
			}
			sctx, cancel := g.storeCtx(context.WithoutCancel(ctx))
			defer cancel()
			if err := acker.AckPush(sctx, c.ID, "", offer); err != nil {
				g.log.Warn("acknowledge push", "agent", c.ID, "error", err)
			}
		}
	}()
	return true
}
