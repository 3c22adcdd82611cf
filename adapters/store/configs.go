package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/adapters/store/tables"
	"github.com/myriarch/myriarch/core/revision"
)

// Rendered configurations are content-addressed by hash under pk "config".
// A DynamoDB item holds at most 400 KB, attribute names included, so a
// configuration larger than one chunk is kept as chunks in a partition of
// its own, config#<hash>, sk the chunk's index (00000, 00001, ...), and the
// item config/<hash> becomes its manifest: chunk count, size and sha256, no
// body. The chunks are written first and the manifest last, so that a
// configuration is visible through ConfigByHash only once it is whole; a
// write that stops half-way leaves chunks no manifest names, which nothing
// reads. A configuration of one chunk or less stays one item with its body,
// the layout of every configuration stored before chunks existed.
//
// An older build reads a manifest as a DecodeError (attribute "body"
// missing): it never stored a configuration that large, so no push it made
// before breaks.
const (
	configChunkBytes = 256 << 10 // well below the 400 KB item limit, with room for keys and attributes

	attrChunks = "chunks" // manifest: number of chunks (N)
	attrSize   = "size"   // manifest: bytes of the whole configuration (N)
	attrSHA256 = "sha256" // manifest: hex sha256 of the whole configuration (S)
)

// configChunksPK is the partition of the chunks of one configuration.
func configChunksPK(hash string) string { return pkConfig + "#" + hash }

// chunkSK is the sort key of chunk i: fixed width, so that the chunks sort
// in order and a range reads exactly those a manifest names.
func chunkSK(i int) string { return fmt.Sprintf("%05d", i) }

// ConfigContentType is the content type of rendered configurations: a
// revision holds them as configs/<fleet>.yaml.
const ConfigContentType = "text/yaml"

// ErrConfigNotFound is wrapped when no applied revision carried a hash.
var ErrConfigNotFound = errors.New("configuration not found")

// writeConfigs stores the configurations of a revision; nothing refers to
// them until the revision pointer moves. Chunks go first, in batches (a
// transaction would cap a revision at 4 MB and 100 items, and nothing needs
// one: a manifest written after its chunks is the commit point of each
// configuration). A chunked configuration whose manifest exists is complete
// and, being content-addressed, cannot differ: it is not written again, so
// that applying the next commit does not rewrite megabytes that did not
// change.
func (s *Store) writeConfigs(ctx context.Context, configs map[string]revision.Config) error {
	var items, manifests []types.WriteRequest
	seen := map[string]bool{}
	for _, c := range configs {
		if c.Hash == "" || seen[c.Hash] {
			continue
		}
		seen[c.Hash] = true
		if len(c.Body) <= configChunkBytes {
			it := newItem().s(tables.AttrPK, pkConfig).s(tables.AttrSK, c.Hash).s(attrType, ConfigContentType)
			it[attrBody] = &types.AttributeValueMemberB{Value: c.Body}
			items = append(items, putRequest(it))
			continue
		}
		stored, err := s.chunkedConfigStored(ctx, c.Hash)
		if err != nil {
			return err
		}
		if stored {
			continue
		}
		items = append(items, chunkRequests(c)...)
		manifests = append(manifests, putRequest(manifestItem(c)))
	}
	if err := s.batchWriteAll(ctx, s.names.Objects, items); err != nil {
		return classify(err, "write configurations")
	}
	return classify(s.batchWriteAll(ctx, s.names.Objects, manifests), "write configuration manifests")
}

func putRequest(it item) types.WriteRequest {
	return types.WriteRequest{PutRequest: &types.PutRequest{Item: it}}
}

func chunkRequests(c revision.Config) []types.WriteRequest {
	var out []types.WriteRequest
	for i := 0; i*configChunkBytes < len(c.Body); i++ {
		part := c.Body[i*configChunkBytes : min((i+1)*configChunkBytes, len(c.Body))]
		it := newItem().s(tables.AttrPK, configChunksPK(c.Hash)).s(tables.AttrSK, chunkSK(i))
		it[attrBody] = &types.AttributeValueMemberB{Value: part}
		out = append(out, putRequest(it))
	}
	return out
}

// manifestItem states the chunks by count, size and checksum; the
// checksum is computed here rather than taken from the hash, so that the
// reader's check does not depend on how the revision named the body.
func manifestItem(c revision.Config) item {
	sum := sha256.Sum256(c.Body)
	chunks := (len(c.Body) + configChunkBytes - 1) / configChunkBytes
	return newItem().s(tables.AttrPK, pkConfig).s(tables.AttrSK, c.Hash).s(attrType, ConfigContentType).
		n(attrChunks, int64(chunks)).n(attrSize, int64(len(c.Body))).s(attrSHA256, hex.EncodeToString(sum[:]))
}

// chunkedConfigStored reports whether the manifest of a chunked
// configuration exists (strongly consistent: an apply that just wrote it
// must see it).
func (s *Store) chunkedConfigStored(ctx context.Context, hash string) (bool, error) {
	av, err := s.getItem(ctx, &dynamodb.GetItemInput{TableName: &s.names.Objects, Key: objKey(pkConfig, hash), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return false, classify(err, "get configuration "+hash)
	}
	_, chunked := av[attrChunks]
	return chunked, nil
}

// ConfigByHash reads a rendered configuration by its hash (gateway.Configs)
// and returns it whole, however it is stored. A chunked one is checked
// against its manifest (count, size, sha256); a mismatch is a DecodeError,
// never a partial body.
func (s *Store) ConfigByHash(ctx context.Context, hash string) (body []byte, contentType string, err error) {
	av, err := s.getItem(ctx, &dynamodb.GetItemInput{TableName: &s.names.Objects, Key: objKey(pkConfig, hash)})
	if err != nil {
		return nil, "", classify(err, "get configuration "+hash)
	}
	if av == nil {
		return nil, "", fmt.Errorf("configuration %s: %w", hash, ErrConfigNotFound)
	}
	d := newDecoder("configuration "+hash, av)
	contentType = d.str(attrType)
	if _, chunked := av[attrChunks]; !chunked {
		body = d.bytes(attrBody)
		return body, contentType, d.err
	}
	chunks, size, sum := d.num(attrChunks), d.num(attrSize), d.str(attrSHA256)
	if d.err != nil {
		return nil, "", d.err
	}
	if chunks < 1 || size < 0 {
		return nil, "", &DecodeError{Item: d.item, Problem: fmt.Sprintf("manifest of %d chunks and %d bytes", chunks, size)}
	}
	body, err = s.readChunks(ctx, hash, int(chunks), size)
	if err != nil {
		return nil, "", err
	}
	if got := sha256.Sum256(body); hex.EncodeToString(got[:]) != sum {
		return nil, "", &DecodeError{Item: d.item, Problem: fmt.Sprintf("the chunks' sha256 is %x, the manifest says %s", got, sum)}
	}
	return body, contentType, nil
}

// readChunks reads chunks 0 to n-1 in order. The read is strongly
// consistent: the manifest was written after every chunk was acknowledged,
// so a consistent read after seeing the manifest sees them all. The range
// names exactly the manifest's chunks, whatever else the partition holds.
func (s *Store) readChunks(ctx context.Context, hash string, n int, size int64) ([]byte, error) {
	what := "configuration " + hash
	body := make([]byte, 0, size)
	var start map[string]types.AttributeValue
	next := 0
	for {
		out, err := s.query(ctx, &dynamodb.QueryInput{
			TableName: &s.names.Objects, ConsistentRead: aws.Bool(true), ExclusiveStartKey: start,
			KeyConditionExpression:   aws.String("#pk = :pk AND #sk BETWEEN :first AND :last"),
			ExpressionAttributeNames: map[string]string{"#pk": tables.AttrPK, "#sk": tables.AttrSK},
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":pk": str(configChunksPK(hash)), ":first": str(chunkSK(0)), ":last": str(chunkSK(n - 1))},
		})
		if err != nil {
			return nil, classify(err, "read the chunks of "+what)
		}
		for _, av := range out.Items {
			if sk := keyOf(av, tables.AttrSK); sk != chunkSK(next) {
				return nil, &DecodeError{Item: what, Problem: fmt.Sprintf("chunk %s missing (found %s)", chunkSK(next), sk)}
			}
			d := newDecoder(fmt.Sprintf("chunk %d of %s", next, what), av)
			part := d.bytes(attrBody)
			if d.err != nil {
				return nil, d.err
			}
			body = append(body, part...)
			next++
		}
		if start = out.LastEvaluatedKey; start == nil {
			break
		}
	}
	if next != n || int64(len(body)) != size {
		return nil, &DecodeError{Item: what, Problem: fmt.Sprintf("%d of %d chunks stored, %d of %d bytes", next, n, len(body), size)}
	}
	return body, nil
}
