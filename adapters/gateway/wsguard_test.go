package gateway

import (
	"encoding/binary"
	"io"
	"log/slog"
	"testing"
)

// clientFrame is a masked frame header (RFC 6455 §5.2) with a payload of
// n zero bytes.
func clientFrame(fin bool, opcode byte, n int) []byte {
	b := []byte{opcode}
	if fin {
		b[0] |= 0x80
	}
	switch {
	case n < 126:
		b = append(b, 0x80|byte(n))
	case n < 1<<16:
		b = append(b, 0x80|126, byte(n>>8), byte(n))
	default:
		b = append(b, 0x80|127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	b = append(b, 1, 2, 3, 4) // mask key
	return append(b, make([]byte, n)...)
}

func frames(fs ...[]byte) []byte {
	var out []byte
	for _, f := range fs {
		out = append(out, f...)
	}
	return out
}

// The guard follows frames across reads of any size and counts a
// message's fragments, not the control frames between them.
func TestFrameGuard_Scan(t *testing.T) {
	const limit = 300
	for _, c := range []struct {
		name string
		wire []byte
		want int // close code; 0: none
	}{
		{name: "one frame at the limit", wire: clientFrame(true, 2, limit)},
		{name: "one frame over", wire: clientFrame(true, 2, limit+1), want: closeMessageTooBig},
		{name: "fragments at the limit", wire: frames(clientFrame(false, 2, 200), clientFrame(true, 0, 100))},
		{name: "fragments over", wire: frames(clientFrame(false, 2, 200), clientFrame(true, 0, 101)), want: closeMessageTooBig},
		{name: "a ping between fragments is no part of the message", wire: frames(clientFrame(false, 2, 200), clientFrame(true, 9, 100), clientFrame(true, 0, 100))},
		{name: "messages each at the limit", wire: frames(clientFrame(true, 2, limit), clientFrame(true, 1, limit), clientFrame(true, 2, limit))},
		{name: "a 64-bit length", wire: clientFrame(true, 2, 1<<16), want: closeMessageTooBig},
	} {
		for _, chunk := range []int{1, 3, 7, 1000} {
			g := newFrameGuard(limit, newDecodeSlots(1, 0, nil), slog.New(slog.NewTextHandler(io.Discard, nil)), "test", nil, func(*wsRefusal) {})
			got := 0
			for b := c.wire; len(b) > 0 && got == 0; {
				n := min(chunk, len(b))
				if r := g.scan(nil, b[:n]); r != nil {
					got = r.code
				}
				b = b[n:]
			}
			if got != c.want {
				t.Errorf("%s, reads of %d: close code %d, want %d", c.name, chunk, got, c.want)
			}
		}
	}
}
