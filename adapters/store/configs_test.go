package store

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/adapters/store/tables"
	"github.com/myriarch/myriarch/core/fleet"
	"github.com/myriarch/myriarch/core/revision"
)

// configOf is n bytes of YAML whose content differs everywhere (so that
// chunks put back in the wrong order cannot compare equal), the same for
// the same seed.
func configOf(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	var b bytes.Buffer
	b.WriteString("receivers:\n")
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "  r%07d: {endpoint: \"%016x\"}\n", i, r.Uint64())
	}
	return b.Bytes()[:n]
}

// revWithConfigs is a revision with one fleet per body, f0, f1, ...
func revWithConfigs(commit string, bodies ...[]byte) revision.Revision {
	r := revision.Revision{Commit: commit, Configs: map[string]revision.Config{}}
	for i, body := range bodies {
		name := fmt.Sprintf("f%d", i)
		h := revision.Hash(body)
		r.Fleets = append(r.Fleets, fleet.Fleet{Name: name, Config: fleet.Config{Hash: h}})
		r.Configs[name] = revision.Config{Hash: h, Body: body}
	}
	return r
}

func wantConfig(t *testing.T, s *Store, body []byte) {
	t.Helper()
	got, ct, err := s.ConfigByHash(ctxT(t), revision.Hash(body))
	if err != nil {
		t.Fatalf("config of %d bytes: %v", len(body), err)
	}
	if !bytes.Equal(got, body) || ct != ConfigContentType {
		t.Fatalf("config of %d bytes read back as %d bytes (%s), not byte for byte", len(body), len(got), ct)
	}
}

// A configuration over DynamoDB's 400 KB item limit is stored and read
// back whole, up to revision.MaxConfigBytes, and so are the sizes at the
// edges of a chunk.
func TestConfig_LargeRoundTripsByteForByte(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	sizes := []int{
		1,                       // inline
		configChunkBytes,        // the largest inline configuration
		configChunkBytes + 1,    // two chunks, the second of one byte
		3 * configChunkBytes,    // chunks exactly full
		1 << 20,                 // the 1 MB of the report
		revision.MaxConfigBytes, // the limit validation enforces
	}
	bodies := make([][]byte, len(sizes))
	for i, n := range sizes {
		bodies[i] = configOf(n, uint64(i))
	}
	must(t, s.PutRevision(ctx, revWithConfigs("c1", bodies...), t0))
	for _, b := range bodies {
		wantConfig(t, s, b)
	}
}

// Several large configurations in one revision: more than the 4 MB and 100
// items of one TransactWriteItems, which PutRevision must not need.
func TestConfig_SeveralLargeConfigsApply(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	var bodies [][]byte
	for i := range 6 {
		bodies = append(bodies, configOf(1<<20, uint64(100+i)))
	}
	must(t, s.PutRevision(ctx, revWithConfigs("c1", bodies...), t0))
	for _, b := range bodies {
		wantConfig(t, s, b)
	}
	// The next commit keeps the configurations: their chunks are complete
	// and are not written again, only the fleets, the pointer and its
	// assignment sweep are.
	s.ResetUsage()
	must(t, s.PutRevision(ctx, revWithConfigs("c2", bodies...), t0))
	if u := s.Usage(); u.ItemsWritten > int64(len(bodies))+2 {
		t.Errorf("applying unchanged configurations again wrote %d items, want the %d fleets, the pointer and the sweep", u.ItemsWritten, len(bodies))
	}
	for _, b := range bodies {
		wantConfig(t, s, b)
	}
}

// Until its manifest is written a chunked configuration does not exist for
// ConfigByHash; a manifest whose chunks do not add up is an error, never a
// partial or wrong body.
func TestConfig_OnlyWholeConfigurationsAreVisible(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	body := configOf(3*configChunkBytes+10, 7)
	c := revision.Config{Hash: revision.Hash(body), Body: body}
	chunks := chunkRequests(c)
	if len(chunks) != 4 {
		t.Fatalf("%d chunks, want 4", len(chunks))
	}

	// A write that stopped after some chunks: not found, as if never begun.
	must(t, s.batchWriteAll(ctx, s.names.Objects, chunks[:2]))
	if _, _, err := s.ConfigByHash(ctx, c.Hash); !errors.Is(err, ErrConfigNotFound) {
		t.Fatalf("half-written configuration: %v, want ErrConfigNotFound", err)
	}
	must(t, s.batchWriteAll(ctx, s.names.Objects, chunks[2:]))
	if _, _, err := s.ConfigByHash(ctx, c.Hash); !errors.Is(err, ErrConfigNotFound) {
		t.Fatalf("chunks without manifest: %v, want ErrConfigNotFound", err)
	}
	must(t, s.batchWriteAll(ctx, s.names.Objects, []types.WriteRequest{putRequest(manifestItem(c))}))
	wantConfig(t, s, body)

	// A chunk beyond the manifest's count (another chunk size once) is not read.
	extra := newItem().s(tables.AttrPK, configChunksPK(c.Hash)).s(tables.AttrSK, chunkSK(4))
	extra[attrBody] = &types.AttributeValueMemberB{Value: []byte("stale")}
	must(t, s.batchWriteAll(ctx, s.names.Objects, []types.WriteRequest{putRequest(extra)}))
	wantConfig(t, s, body)

	wantDecodeError := func(what, problem string) {
		t.Helper()
		_, _, err := s.ConfigByHash(ctx, c.Hash)
		var de *DecodeError
		if !errors.As(err, &de) || !strings.Contains(de.Problem, problem) {
			t.Fatalf("%s: %v, want a DecodeError saying %q", what, err, problem)
		}
	}
	// A chunk changed under the manifest: the checksum refuses it.
	tampered := newItem().s(tables.AttrPK, configChunksPK(c.Hash)).s(tables.AttrSK, chunkSK(1))
	tampered[attrBody] = &types.AttributeValueMemberB{Value: bytes.ToUpper(body[configChunkBytes : 2*configChunkBytes])}
	must(t, s.batchWriteAll(ctx, s.names.Objects, []types.WriteRequest{putRequest(tampered)}))
	wantDecodeError("tampered chunk", "sha256")
	// A chunk gone: named.
	must(t, s.batchWriteAll(ctx, s.names.Objects, []types.WriteRequest{{DeleteRequest: &types.DeleteRequest{Key: objKey(configChunksPK(c.Hash), chunkSK(1))}}}))
	wantDecodeError("missing chunk", "chunk 00001 missing")
	must(t, s.batchWriteAll(ctx, s.names.Objects, []types.WriteRequest{{DeleteRequest: &types.DeleteRequest{Key: objKey(configChunksPK(c.Hash), chunkSK(3))}},
		{DeleteRequest: &types.DeleteRequest{Key: objKey(configChunksPK(c.Hash), chunkSK(4))}}}))
	must(t, s.batchWriteAll(ctx, s.names.Objects, chunks[1:2]))
	wantDecodeError("last chunk missing", "3 of 4 chunks stored")
}

// Every configuration validation lets through has a chunk count that fits
// the five digits of the chunk's sort key.
func TestConfig_ChunksOfTheLargestFitTheSortKey(t *testing.T) {
	if n := (revision.MaxConfigBytes + configChunkBytes - 1) / configChunkBytes; len(chunkSK(n-1)) != 5 {
		t.Fatalf("%d chunks: sort key %q", n, chunkSK(n-1))
	}
}
