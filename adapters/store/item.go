package store

import (
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/adapters/store/tables"
)

// SchemaVersion is the item layout this build writes (attribute sv). An item
// with a higher sv was written by a newer build: decoding refuses it rather
// than guess, and a rolling deployment migrates readers before writers.
// Version 2 packs the documents of agents and targets (pack.go); version 3
// packs an agent's acknowledgements, credential and assigned revision into
// its document (agentDocument). Each reads the items of the versions
// before as they are.
const SchemaVersion = 3

// Attributes every item carries besides its keys.
const (
	attrSV     = "sv"            // schema version (N)
	attrV      = "v"             // optimistic-concurrency counter: number of writes of the item (N)
	attrDoc    = "doc"           // the core value as JSON (S): the form the API serves, with its own golden tests
	attrStatus = "status"        // rollouts: status (S), top-level for the console and filters
	attrKind   = tables.AttrKind // rollouts: kind (S)
)

// DecodeError is an item that does not decode: a missing attribute, a wrong
// type, a future schema version or a document that does not parse. Item
// names the item by kind and key, e.g. "rollout r-123".
type DecodeError struct {
	Item    string
	Problem string
}

func (e *DecodeError) Error() string { return "decode " + e.Item + ": " + e.Problem }

// decoder reads attributes strictly; the first problem sticks and later
// reads return zero values, so a caller reads everything and checks err once.
type decoder struct {
	item string
	av   map[string]types.AttributeValue
	sv   int64 // the item's schema version
	err  error
}

func newDecoder(item string, av map[string]types.AttributeValue) *decoder {
	d := &decoder{item: item, av: av}
	d.schema()
	return d
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = &DecodeError{Item: d.item, Problem: fmt.Sprintf(format, args...)}
	}
}

func typeName(v types.AttributeValue) string {
	switch v.(type) {
	case *types.AttributeValueMemberS:
		return "S"
	case *types.AttributeValueMemberN:
		return "N"
	case *types.AttributeValueMemberB:
		return "B"
	case *types.AttributeValueMemberBOOL:
		return "BOOL"
	case *types.AttributeValueMemberM:
		return "M"
	case *types.AttributeValueMemberL:
		return "L"
	case *types.AttributeValueMemberNULL:
		return "NULL"
	}
	return fmt.Sprintf("%T", v)
}

// str is a required string attribute.
func (d *decoder) str(name string) string {
	v, ok := d.av[name]
	if !ok {
		d.fail("attribute %q missing", name)
		return ""
	}
	return d.asStr(name, v)
}

// optStr is an optional string attribute: absent is "".
func (d *decoder) optStr(name string) string {
	v, ok := d.av[name]
	if !ok {
		return ""
	}
	return d.asStr(name, v)
}

func (d *decoder) asStr(name string, v types.AttributeValue) string {
	s, ok := v.(*types.AttributeValueMemberS)
	if !ok {
		d.fail("attribute %q is %s, want S", name, typeName(v))
		return ""
	}
	return s.Value
}

// num is a required integer attribute.
func (d *decoder) num(name string) int64 {
	v, ok := d.av[name]
	if !ok {
		d.fail("attribute %q missing", name)
		return 0
	}
	n, ok := v.(*types.AttributeValueMemberN)
	if !ok {
		d.fail("attribute %q is %s, want N", name, typeName(v))
		return 0
	}
	i, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil {
		d.fail("attribute %q is %q, want an integer", name, n.Value)
	}
	return i
}

// optNum is an optional integer attribute: absent is 0.
func (d *decoder) optNum(name string) int64 {
	if _, ok := d.av[name]; !ok {
		return 0
	}
	return d.num(name)
}

// bytes is a required binary attribute.
func (d *decoder) bytes(name string) []byte {
	v, ok := d.av[name]
	if !ok {
		d.fail("attribute %q missing", name)
		return nil
	}
	b, ok := v.(*types.AttributeValueMemberB)
	if !ok {
		d.fail("attribute %q is %s, want B", name, typeName(v))
		return nil
	}
	return b.Value
}

// schema checks sv: present, a number, and not newer than this build.
func (d *decoder) schema() {
	sv := d.num(attrSV)
	d.sv = sv
	switch {
	case d.err != nil:
	case sv > SchemaVersion:
		d.fail("schema version %d is newer than this build understands (%d)", sv, SchemaVersion)
	case sv < 1:
		d.fail("schema version %d is not valid", sv)
	}
}

// doc unmarshals the JSON document into v: the packed one if the item has
// it (pack.go), else the readable one.
func (d *decoder) doc(v any) {
	d.docWith(func(doc []byte) error { return json.Unmarshal(doc, v) })
}

// docWith is doc with another unmarshaling of the document (targetDoc);
// unmarshal must keep nothing of the bytes it is given.
func (d *decoder) docWith(unmarshal func(doc []byte) error) {
	buf := docBuffers.Get().(*[]byte)
	defer docBuffers.Put(buf)
	name := attrDoc
	if _, ok := d.av[attrPacked]; ok {
		name = attrPacked
		p := d.bytes(attrPacked)
		if d.err != nil {
			return
		}
		doc, err := unpack((*buf)[:0], p)
		if err != nil {
			d.fail("attribute %q: %v", attrPacked, err)
			return
		}
		*buf = doc
	} else {
		s := d.str(attrDoc)
		if d.err != nil {
			return
		}
		*buf = append((*buf)[:0], s...)
	}
	// keeps nothing of buf: its strings are copies
	if err := unmarshal(*buf); err != nil {
		d.fail("attribute %q: %v", name, err)
	}
}

// docBuffers hold the bytes of documents being unmarshaled: json.Unmarshal
// takes bytes and DynamoDB gives a string, and a new copy of each of the
// 200,000 documents of an evaluation over 100,000 targets was 150 MB to
// allocate, clear and collect.
var docBuffers = sync.Pool{New: func() any { return new([]byte) }}

// item is an item under construction.
type item map[string]types.AttributeValue

func newItem() item { return item{attrSV: num(SchemaVersion)} }

func (it item) s(name, v string) item { it[name] = str(v); return it }

// sIf sets a string attribute that is absent when empty: key attributes of
// indexes may not be empty, and a sparse index wants the attribute absent.
func (it item) sIf(name, v string) item {
	if v != "" {
		it[name] = str(v)
	}
	return it
}

func (it item) n(name string, v int64) item { it[name] = num(v); return it }

func (it item) doc(v any) (item, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return it, fmt.Errorf("encode: %w", err)
	}
	it[attrDoc] = str(string(b))
	return it, nil
}

func str(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func num(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

// sortableTime is a time as fixed-width UTC text, so that sort keys order
// like the times: 2026-03-02T10:00:00.000000000Z.
func sortableTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000000Z") }
