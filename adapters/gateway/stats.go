package gateway

// Stats are a task's counts of what it refused to hold, since it started.
type Stats struct {
	// Connections is the WebSocket connections open now.
	Connections int
	// RefusedPerSource counts WebSocket connections refused with 429
	// because their source address had MaxConnsPerSource open.
	RefusedPerSource int64
	// TooBig counts connections closed with 1009 and plain HTTP requests
	// answered 413: a message over MaxMessageBytes.
	TooBig int64
	// NoDecodeSlot counts large messages refused after SlotWait without a
	// decode slot (1013 or 503).
	NoDecodeSlot int64
	// Quiet counts connections closed for opening no agent session in
	// time (quiet.go).
	Quiet int64
	// DecodeSlotsInUse is the large messages being read, decoded or
	// handled now.
	DecodeSlotsInUse int
}

// Stats reads the task's counts; safe to call at any time.
func (g *Gateway) Stats() Stats {
	return Stats{
		Connections:      g.links.len(),
		RefusedPerSource: g.refusedPerSource.Load(),
		TooBig:           g.tooBig.Load(),
		NoDecodeSlot:     g.noDecodeSlot.Load(),
		Quiet:            g.quietClosed.Load(),
		DecodeSlotsInUse: g.decodeSlots.inUse(),
	}
}
