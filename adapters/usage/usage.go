// Package usage counts what a program asks of DynamoDB, per kind of call
// ("Query targets", "GetRecords agents stream"): requests, items and their
// bytes read and written, and the capacity units DynamoDB reports. The
// store and the stream poller count into one Meter each, so that a
// benchmark can say what one decided report costs in the units users pay
// for, on any machine, rather than in seconds of an emulator.
package usage

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Counts is what calls asked of DynamoDB. Bytes are item sizes as DynamoDB
// sizes them (ItemSize), the measure its read and write units are billed on;
// a stream read's bytes are its records' images and keys.
type Counts struct {
	Requests int64
	// EmptyReads are the read requests that returned nothing: a poll of
	// an idle stream or of an empty index. Their number follows the clock
	// (polls per second), the others follow the work.
	EmptyReads   int64
	ItemsRead    int64
	ItemsWritten int64
	BytesRead    int64
	BytesWritten int64
	ReadUnits    float64
	WriteUnits   float64
}

// Add is the sum of c and o.
func (c Counts) Add(o Counts) Counts {
	return Counts{Requests: c.Requests + o.Requests, EmptyReads: c.EmptyReads + o.EmptyReads, ItemsRead: c.ItemsRead + o.ItemsRead,
		ItemsWritten: c.ItemsWritten + o.ItemsWritten, BytesRead: c.BytesRead + o.BytesRead,
		BytesWritten: c.BytesWritten + o.BytesWritten, ReadUnits: c.ReadUnits + o.ReadUnits,
		WriteUnits: c.WriteUnits + o.WriteUnits}
}

// Sub is c less o: what was asked between two readings of a Meter.
func (c Counts) Sub(o Counts) Counts {
	return Counts{Requests: c.Requests - o.Requests, EmptyReads: c.EmptyReads - o.EmptyReads, ItemsRead: c.ItemsRead - o.ItemsRead,
		ItemsWritten: c.ItemsWritten - o.ItemsWritten, BytesRead: c.BytesRead - o.BytesRead,
		BytesWritten: c.BytesWritten - o.BytesWritten, ReadUnits: c.ReadUnits - o.ReadUnits,
		WriteUnits: c.WriteUnits - o.WriteUnits}
}

func (c Counts) String() string {
	return fmt.Sprintf("%d requests (%d empty reads), %d items read (%d B), %d items written (%d B), %.1f RCU, %.1f WCU",
		c.Requests, c.EmptyReads, c.ItemsRead, c.BytesRead, c.ItemsWritten, c.BytesWritten, c.ReadUnits, c.WriteUnits)
}

// Meter adds up Counts per kind of call. Its methods may be called
// concurrently; the zero Meter is ready.
type Meter struct {
	mu    sync.Mutex
	kinds map[string]Counts
}

// Count adds c to kind's counts.
func (m *Meter) Count(kind string, c Counts) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.kinds == nil {
		m.kinds = map[string]Counts{}
	}
	m.kinds[kind] = m.kinds[kind].Add(c)
}

// Total is the sum over every kind.
func (m *Meter) Total() Counts {
	m.mu.Lock()
	defer m.mu.Unlock()
	var t Counts
	for _, c := range m.kinds {
		t = t.Add(c)
	}
	return t
}

// Kinds returns a copy of the counts per kind.
func (m *Meter) Kinds() Kinds {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(Kinds, len(m.kinds))
	for k, c := range m.kinds {
		out[k] = c
	}
	return out
}

// Reset sets every count to zero.
func (m *Meter) Reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.kinds = nil
}

// Kinds are counts per kind of call.
type Kinds map[string]Counts

// Merge adds every kind of o to k (two meters' readings side by side).
func (k Kinds) Merge(o Kinds) Kinds {
	out := make(Kinds, len(k)+len(o))
	for n, c := range k {
		out[n] = c
	}
	for n, c := range o {
		out[n] = out[n].Add(c)
	}
	return out
}

// Total is the sum over every kind.
func (k Kinds) Total() Counts {
	var t Counts
	for _, c := range k {
		t = t.Add(c)
	}
	return t
}

// Names are the kinds in order, the most bytes read first.
func (k Kinds) Names() []string {
	names := make([]string, 0, len(k))
	for n := range k {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := k[names[i]], k[names[j]]
		if a.BytesRead != b.BytesRead {
			return a.BytesRead > b.BytesRead
		}
		if a.Requests != b.Requests {
			return a.Requests > b.Requests
		}
		return names[i] < names[j]
	})
	return names
}

// Table writes one line per kind, and the total, each divided by per (the
// targets decided, say): requests and the empty reads among them, items
// and bytes read and written, RCU and WCU.
func (k Kinds) Table(per float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-44s %9s %9s %9s %9s %9s %9s %8s %8s\n", fmt.Sprintf("per %.0f", per), "requests", "empty rd", "items rd", "bytes rd", "items wr", "bytes wr", "RCU", "WCU")
	line := func(name string, c Counts) {
		fmt.Fprintf(&b, "%-44s %9.3f %9.3f %9.3f %9.0f %9.3f %9.0f %8.3f %8.3f\n", name,
			float64(c.Requests)/per, float64(c.EmptyReads)/per, float64(c.ItemsRead)/per, float64(c.BytesRead)/per,
			float64(c.ItemsWritten)/per, float64(c.BytesWritten)/per, c.ReadUnits/per, c.WriteUnits/per)
	}
	for _, n := range k.Names() {
		line(n, k[n])
	}
	line("total", k.Total())
	return b.String()
}
