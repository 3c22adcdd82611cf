package store

import (
	"encoding/json"
	"hash/fnv"
	"maps"

	"github.com/myriarch/myriarch/core/agent"
)

// What a write of an agent item changed, stamped on the item it writes
// (agent.Written). The agents table's stream carries new images only: the
// agent-event function tells a report that may move a target from a
// heartbeat's or a desired hash's write by the stamp, and finds the fleet
// an agent left by it, instead of by an old image of every record (about
// half of what the stream carries). Every write stamps: attribute wr is
// present on every item this build writes, so that an item without it (an
// older build's) counts as changing everything.
const (
	attrWritten       = "wr" // N: bits of writtenDecisive, writtenAttributes
	attrPrevFleet     = "pf" // S: the fleet before the write, when it changed
	attrPrevCollector = "pc" // S: the linked collector before the write, when it changed
)

const (
	writtenDecisive   = 1 << iota // a fact an engine decision reads
	writtenAttributes             // the attributes
)

// was is what a writer knows of the item its write replaces: enough to
// stamp what the write changed. A record read for a write carries it
// (edit); a record without it is a new agent, and its write changes
// everything.
type was struct {
	decisive   uint64 // fingerprint of the decisive facts
	attributes map[string]string
	fleet      string
}

// edit is r, read, as a write starts from it: it knows what it was.
func edit(r AgentRecord) AgentRecord {
	r.was = wasOf(r.Agent)
	return r
}

func wasOf(a agent.Agent) *was {
	return &was{decisive: fingerprint(a), attributes: maps.Clone(a.Attributes), fleet: a.Fleet}
}

// fingerprint is a hash of the agent's decisive facts (agent.Decisive) as
// JSON, whose maps come in key order, with times in UTC as stored: equal
// facts give equal fingerprints. A collision would hide one change from
// the agent-event path; the next evaluation of the whole rollout still
// judges it (at the latest after route.LostEventCap).
func fingerprint(a agent.Agent) uint64 {
	b, err := json.Marshal(utcAgent(a).Decisive())
	if err != nil {
		return 0
	}
	h := fnv.New64a()
	_, _ = h.Write(b)
	return h.Sum64()
}

// written is what writing r, as a (in UTC), changes of the item it
// replaces.
func (r AgentRecord) written(a agent.Agent) agent.Written {
	if r.was == nil {
		return agent.WrittenBetween(nil, &a)
	}
	return agent.WrittenOver(fingerprint(a) != r.was.decisive, r.was.attributes, r.was.fleet, a)
}

// stamp writes w on the item.
func (it item) stamp(w agent.Written) item {
	bits := 0
	if w.Decisive {
		bits |= writtenDecisive
	}
	if w.Attributes {
		bits |= writtenAttributes
	}
	return it.n(attrWritten, int64(bits)).sIf(attrPrevFleet, w.PrevFleet).sIf(attrPrevCollector, w.PrevCollector)
}

// writtenOf reads the stamp of an item; an item without one says nothing
// (Stamped false).
func writtenOf(d *decoder) agent.Written {
	if _, ok := d.av[attrWritten]; !ok {
		return agent.Written{}
	}
	bits := d.num(attrWritten)
	return agent.Written{Stamped: true, Decisive: bits&writtenDecisive != 0, Attributes: bits&writtenAttributes != 0,
		PrevFleet: d.optStr(attrPrevFleet), PrevCollector: d.optStr(attrPrevCollector)}
}
