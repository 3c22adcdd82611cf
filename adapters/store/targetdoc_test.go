package store

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/myriarch/myriarch/adapters/store/tables"
	"github.com/myriarch/myriarch/core/progress"
	"github.com/myriarch/myriarch/core/rollout"
)

// A target's document decodes (targetDoc) to what encoding/json makes of
// it, and fails where encoding/json fails: every field set, the forms a
// document of another build or a hand-made one may take (unknown fields,
// nulls, names in another case, escapes, offsets), and broken ones.
func TestTargetDoc_AsEncodingJSON(t *testing.T) {
	at := time.Date(2026, 12, 5, 13, 25, 26, 123456789, time.UTC)
	full := rollout.Target{RolloutID: "r-1", AgentID: "a-1", Wave: 2, Status: rollout.TargetFailed, Reason: "apply failed: \"x\" <&>",
		ReasonCode: "apply_failed", Attempt: 3, FromRef: "h-old", ToRef: "h-new", StartedAt: &at, VerifiedAt: &at, ReportedAt: &at,
		FinishedAt: &at, ExternalRef: "manual", HealthyOnTarget: true, LastHealthy: true, Restarts: 2, VersionAtVerify: "0.160.0",
		Stage: 1, Pass: 2, Batch: 3, RollbackAt: &at, Version: 9,
		Progress: &progress.TargetProgress{Phase: "installing", Source: "updater", DownloadPercent: 40, Error: "e", Attempt: 1,
			FromVersion: "0.159.0", ToVersion: "0.160.0", UpdatedAt: at, FollowUntil: &at,
			Steps: []progress.Step{{Name: "download", Status: "done", StartedAt: &at, FinishedAt: &at, Detail: "d"}}}}
	fullDoc, err := json.Marshal(full)
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{
		"every field":     string(fullDoc),
		"pending":         `{"rolloutId":"r-1","agentId":"a-1","wave":1,"status":"pending","attempt":0,"fromRef":"h-old","toRef":"h-new","version":0}`,
		"unknown fields":  `{"agentId":"a-1","later":{"x":[1,2,{"y":null}]},"attempt":1}`,
		"nulls":           `{"agentId":null,"startedAt":null,"progress":null,"attempt":null,"restarts":null}`,
		"names in case":   `{"AGENTID":"a-1","Attempt":2,"fromref":"h"}`,
		"escapes":         `{"reason":"\u00e9\ud83d\ude00\n\t\"\\\/","agentId":"a\u0000b"}`,
		"offset times":    `{"startedAt":"2026-12-05T15:25:26.5+02:00","finishedAt":"2026-12-05T13:25:26Z"}`,
		"repeated name":   `{"attempt":1,"attempt":2}`,
		"whitespace":      " \n{ \"attempt\" : 1 ,\t\"toRef\":\"h\" }\n",
		"empty object":    `{}`,
		"not an object":   `[]`,
		"wrong type":      `{"attempt":"1"}`,
		"fraction":        `{"attempt":1.5}`,
		"overflow":        `{"attempt":1e400}`,
		"bad time":        `{"startedAt":"yesterday"}`,
		"truncated":       `{"attempt":1`,
		"trailing":        `{"attempt":1} x`,
		"invalid UTF-8":   "{\"reason\":\"\xff\"}",
		"bare value":      `null`,
		"empty":           ``,
		"wrong step type": `{"progress":{"steps":{}}}`,
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			var want rollout.Target
			wantErr := json.Unmarshal([]byte(doc), &want)
			var got rollout.Target
			d := &decoder{item: "target", av: map[string]types.AttributeValue{attrDoc: str(doc)}}
			d.targetDoc(&got)
			if (wantErr != nil) != (d.err != nil) {
				t.Fatalf("error %v, want one like %v", d.err, wantErr)
			}
			if wantErr == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("decoded %+v\nwant %+v", got, want)
			}
		})
	}
}

// A page's targets are decoded in place (decodeTargetInto) as decodeTarget
// decodes each: packed and readable documents alike.
func TestDecodeTargetInto_AsDecodeTarget(t *testing.T) {
	r := rollout.Rollout{ID: "r-1", Kind: "config", CreatedAt: time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)}
	tg := rollout.Target{RolloutID: r.ID, AgentID: "a-1", Wave: 3, Status: rollout.TargetPending, FromRef: "h-old", ToRef: "h-new"}
	packed, err := encodeTarget(r, tg, 2)
	if err != nil {
		t.Fatal(err)
	}
	readable := item{}
	for k, v := range packed {
		if k != attrPacked {
			readable[k] = v
		}
	}
	tg.Version = 2
	if _, err := readable.doc(tg); err != nil {
		t.Fatal(err)
	}
	for name, it := range map[string]item{"packed": packed, "readable": readable} {
		one, err := decodeTarget(it)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		page := make([]rollout.Target, 1)
		if err := decodeTargetInto(&page[0], it); err != nil || !reflect.DeepEqual(page[0], one) || !reflect.DeepEqual(one, tg) {
			t.Fatalf("%s: in place %+v (%v)\none by one %+v\nwant %+v", name, page[0], err, one, tg)
		}
	}
	bad := item{}
	for k, v := range packed {
		bad[k] = v
	}
	bad[tables.AttrWaveAgent] = str("3#a-1")
	if err := decodeTargetInto(new(rollout.Target), bad); err == nil || err.Error() != `decode target r-1 3#a-1: attribute "waveAgent" is "3#a-1", want <wave, 5 digits>#<agentId>` {
		t.Fatalf("bad sort key: %v", err)
	}
}
