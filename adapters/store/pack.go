package store

import (
	"bytes"
	"compress/flate"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Agents and targets are the items every report and every evaluation
// reads, and the agents' stream carries two images of each agent write. A
// JSON document of an agent is about 1.1 KB, most of it field names and
// the same configuration hash three times; deflated against a dictionary
// of the document's usual text it is about 300 bytes, so that every read,
// write and stream record of these items costs a third or less (AWS's
// advice for large attribute values: compress them). Such items carry the
// document as attrPacked, binary: one byte naming the dictionary, then
// the deflated JSON. Other items keep the readable attrDoc; a reader takes
// whichever the item has.
const attrPacked = "dz"

// A dictionary, once written to a table, must never change: items written
// with it are read with it for as long as they live. A better dictionary
// is a new id. TestPackDictionaries_NeverChange holds them to digests.
var packDictionaries = map[byte][]byte{
	dictAgent1:  []byte(agentDictionary1),
	dictTarget1: []byte(targetDictionary1),
	dictAgent2:  []byte(agentDictionary2),
}

const (
	dictAgent1  byte = 1
	dictTarget1 byte = 2
	dictAgent2  byte = 3 // schema version 3: agentDocument
)

// agentDictionary1 is an agent document's usual text: deflate finds the
// names and common values here instead of spelling them out. The most
// frequent strings are at the end, nearest to the data.
const agentDictionary1 = `"lastError":"","update":{"status":"","version":"0.","from":"0.","startedAt":"20","steps":{}},` +
	`"components":{"total":,"unhealthyCount":,"unhealthy":[]},"downloadPercent":,"packageOffer":"",` +
	`"assignmentError":"","error":"","status":"APPLYING","status":"FAILED","status":"StatusStarting",` +
	`"status":"StatusRecoverableError","status":"INSTALLING","healthy":false,` +
	`{"id":"","fleet":"","attributes":{"host.arch":"amd64","host.name":"","labels.fleet":"","os.type":"linux",` +
	`"service.instance.id":"","service.name":"otelcol-contrib","service.version":"0.","site.timezone":""},` +
	`"online":true,"lastSeen":"2026-12-","connectedAt":"2026-12-","task":"gw-","capabilities":,` +
	`"health":{"healthy":true,"status":"StatusOK","startTime":"2026-12-","reportedAt":"2026-12-"},` +
	`"remoteConfig":{"hash":"","status":"APPLIED","since":"2026-12-"},"effectiveHash":"",` +
	`"serviceVersion":"0.","versionSince":"2026-12-","package":{"version":"0.","status":"INSTALLED","since":"2026-12-"},` +
	`"desiredHash":"","targetVersion":"0."}`

// agentDictionary2 is agentDictionary1 and the names that agentDocument
// adds after the agent's.
const agentDictionary2 = agentDictionary1 + `"ackOffer":"","credNext":"","credRotate":true,"assignedRev":,` +
	`"cred":"","credAt":"2026-12-",","ackHash":"`

// targetDictionary1 is a target document's usual text.
const targetDictionary1 = `"reason":"","rollbackAt":"2026-12-","progress":{},"rollback":,"status":"failed","status":"skipped",` +
	`"status":"in_progress","status":"verifying","status":"pending",` +
	`{"rolloutId":"r-2026","agentId":"","wave":0,"status":"succeeded","attempt":1,"fromRef":"","toRef":"",` +
	`"startedAt":"2026-12-","verifiedAt":"2026-12-","reportedAt":"2026-12-","finishedAt":"2026-12-",` +
	`"versionAtVerify":"0.","version":`

// packed sets the item's document, deflated against dictionary dict.
func (it item) packed(v any, dict byte) (item, error) {
	doc, err := json.Marshal(v)
	if err != nil {
		return it, fmt.Errorf("encode: %w", err)
	}
	p, err := pack(doc, dict)
	if err != nil {
		return it, fmt.Errorf("encode: %w", err)
	}
	it[attrPacked] = &types.AttributeValueMemberB{Value: p}
	return it, nil
}

// A flate writer holds about 1 MB of tables and a reader about 40 KB: the
// gateway packs an agent at every stored report, so both are kept for
// reuse (Reset keeps a writer's dictionary; a reader is given its own).
var (
	writers = map[byte]*sync.Pool{}
	readers = sync.Pool{New: func() any { return flate.NewReader(bytes.NewReader(nil)) }}
)

func init() {
	for id, dict := range packDictionaries {
		writers[id] = &sync.Pool{New: func() any {
			w, err := flate.NewWriterDict(io.Discard, flate.BestCompression, dict)
			if err != nil {
				panic(err) // only for a level out of range
			}
			return w
		}}
	}
}

func pack(doc []byte, dict byte) ([]byte, error) {
	pool, ok := writers[dict]
	if !ok {
		return nil, fmt.Errorf("dictionary %d is unknown", dict)
	}
	w := pool.Get().(*flate.Writer)
	defer pool.Put(w)
	var b bytes.Buffer
	b.Grow(len(doc)/2 + 16)
	b.WriteByte(dict)
	w.Reset(&b)
	if _, err := w.Write(doc); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// unpack appends the JSON document of a packed attribute to dst.
func unpack(dst, p []byte) ([]byte, error) {
	if len(p) == 0 {
		return nil, fmt.Errorf("empty")
	}
	dict, ok := packDictionaries[p[0]]
	if !ok {
		return nil, fmt.Errorf("dictionary %d is unknown to this build", p[0])
	}
	r := readers.Get().(io.ReadCloser)
	defer readers.Put(r)
	if err := r.(flate.Resetter).Reset(bytes.NewReader(p[1:]), dict); err != nil {
		return nil, err
	}
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		// A packed attribute that inflates past DynamoDB's item size many
		// times over is not one this store wrote.
		if len(dst) > maxDocument {
			return nil, fmt.Errorf("inflates past %d bytes", maxDocument)
		}
		switch {
		case err == io.EOF:
			return dst, nil
		case err != nil:
			return nil, err
		}
	}
}

// maxDocument bounds an inflated document: four times DynamoDB's 400 KB
// item, well past any document this store writes.
const maxDocument = 1600 << 10
