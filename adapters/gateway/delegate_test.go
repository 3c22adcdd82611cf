package gateway

import (
	"bytes"
	"crypto/sha256"
	"testing"
	"time"

	"github.com/open-telemetry/opamp-go/protobufs"
	"google.golang.org/protobuf/proto"

	"github.com/myriarch/myriarch/core/agent"
)

const (
	collectorCaps = uint64(protobufs.AgentCapabilities_AgentCapabilities_ReportsStatus | protobufs.AgentCapabilities_AgentCapabilities_AcceptsRemoteConfig |
		protobufs.AgentCapabilities_AgentCapabilities_ReportsHealth)
	updaterCaps = uint64(protobufs.AgentCapabilities_AgentCapabilities_ReportsStatus | protobufs.AgentCapabilities_AgentCapabilities_AcceptsPackages |
		protobufs.AgentCapabilities_AgentCapabilities_ReportsPackageStatuses | protobufs.AgentCapabilities_AgentCapabilities_ReportsHealth)
)

// updaterHello is a myriarch-updater's first message: it names collector.
func updaterHello(uid []byte, collector string) *protobufs.AgentToServer {
	m := msg(withCapabilities(updaterCaps), withDesc(desc([]*protobufs.KeyValue{str("service.name", "myriarch-updater"), str("service.version", "0.1.0")},
		str("host.name", "host-1"), str(agent.AttrLinkedCollector, collector))), withHealth(hl(true, agent.StatusOK, "", 1, nil)))
	m.InstanceUid = uid
	return m
}

// nextOffer reads what the gateway sends until a package offer, at most n messages.
func (w *rawWS) nextOffer(n int) *protobufs.PackagesAvailable {
	w.t.Helper()
	for range n {
		if p := w.read().GetPackagesAvailable(); p != nil {
			return p
		}
	}
	w.t.Fatalf("no package offer in %d messages", n)
	return nil
}

// silentFor reports whether nothing arrives on w within d.
func (w *rawWS) silentFor(d time.Duration) bool {
	must(w.t, w.conn.SetReadDeadline(time.Now().Add(d)))
	_, _, err := w.conn.ReadMessage()
	return err != nil
}

// A collector that takes no packages itself gets its offer through the
// updater that names it: the updater is sent PackagesAvailable, the
// collector nothing, and the offer is acknowledged on the collector.
func TestDelegate_OfferGoesToTheLinkedUpdater(t *testing.T) {
	st := newMemAgents()
	h := startHarness(t, st)
	col, _, err := h.dialWS(token)
	must(t, err)
	col.send(hello(uid1, "host-1", collectorCaps))
	upd, _, err := h.dialWS(token)
	must(t, err)
	upd.send(updaterHello(uid2, id1))
	h.eventually("both recorded", func() bool { return st.get(id1).Online && st.get(id2).Online })

	st.setDesired(id1, "", "0.150.0") // the updater executor's Start
	p := upd.nextOffer(3)
	for name, pkg := range p.GetPackages() {
		if pkg.GetVersion() != "0.150.0" {
			t.Fatalf("package %q offered at %q, want 0.150.0", name, pkg.GetVersion())
		}
	}
	if !col.silentFor(300 * time.Millisecond) {
		t.Fatal("the collector, which takes no packages, was sent something")
	}
	h.eventually("the offer acknowledged on the collector", func() bool {
		for _, a := range st.ackList() {
			if a == id1+"  0.150.0" {
				return true
			}
		}
		return false
	})
	if st.get(id2).Fleet != "" || st.get(id2).PackageOffer != "" {
		t.Fatalf("the updater's own item was given the collector's state: %+v", st.get(id2))
	}
}

// An updater that connects after the offer was made is sent it at once.
func TestDelegate_UpdaterConnectingLaterGetsThePendingOffer(t *testing.T) {
	st := newMemAgents()
	h := startHarness(t, st, func(c *Config) { c.PollInterval = time.Hour }) // no poll: the link alone sends it
	col, _, err := h.dialWS(token)
	must(t, err)
	col.send(hello(uid1, "host-1", collectorCaps))
	h.eventually("the collector recorded", func() bool { return st.get(id1).Online })
	st.setDesired(id1, "", "0.150.0")
	upd, _, err := h.dialWS(token)
	must(t, err)
	b, err := proto.Marshal(updaterHello(uid2, id1))
	must(t, err)
	upd.sendBytes(append([]byte{0}, b...)) // the offer may come before the answer
	if p := upd.nextOffer(2); len(p.GetPackages()) != 1 {
		t.Fatalf("offer %v", p)
	}
}

// With a package source, the updater's offer is its platform's archive,
// with the SHA-256 from the release's checksums and its signature; the
// source is read off the poll's goroutine.
func TestDelegate_OfferCarriesTheSourcesHashAndSignature(t *testing.T) {
	srv, files, _ := mirror(t)
	st := newMemAgents()
	h := startHarness(t, st, func(c *Config) {
		c.DownloadURL = srv.URL + "/{version}/otelcol-contrib_{version}_{os}_{arch}.tar.gz"
		c.PackageChecksumsURL = srv.URL + "/{version}/checksums.txt"
		c.PackageSignatureURL = c.DownloadURL + ".minisig"
	})
	col, _, err := h.dialWS(token)
	must(t, err)
	col.send(hello(uid1, "host-1", collectorCaps))
	upd, _, err := h.dialWS(token)
	must(t, err)
	hi := updaterHello(uid2, id1)
	hi.AgentDescription.NonIdentifyingAttributes = append(hi.AgentDescription.NonIdentifyingAttributes, str("os.type", "linux"), str("host.arch", "amd64"))
	upd.send(hi)
	h.eventually("both recorded", func() bool { return st.get(id1).Online && st.get(id2).Online })
	st.setDesired(id1, "", "0.150.0")
	var file *protobufs.DownloadableFile
	for _, p := range upd.nextOffer(3).GetPackages() {
		file = p.GetFile()
	}
	archive := "/0.150.0/otelcol-contrib_0.150.0_linux_amd64.tar.gz"
	sum := sha256.Sum256(files[archive])
	if file.GetDownloadUrl() != srv.URL+archive || !bytes.Equal(file.GetContentHash(), sum[:]) || !bytes.Equal(file.GetSignature(), files[archive+".minisig"]) {
		t.Fatalf("offered %v", file)
	}
}
