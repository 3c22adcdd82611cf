package store

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/myriarch/myriarch/adapters/store/tables"
	"github.com/myriarch/myriarch/core/releases"
	"github.com/myriarch/myriarch/core/rollout"
)

// The refresh and the API write the catalogue through these methods.
var _ releases.Catalogue = (*Store)(nil)

func release(d, v string, src releases.Source) releases.Release {
	at := t0
	return releases.Release{Distribution: d, Version: v, Prerelease: releases.IsPrerelease(v), Source: src, UpdatedAt: &at}
}

func TestReleases_PutListGetDelete(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	if rs, err := s.ReleasesOf(ctx, "otelcol-contrib"); err != nil || len(rs) != 0 {
		t.Fatalf("empty catalogue: %v %v", rs, err)
	}
	published := t0.Add(-48 * time.Hour)
	r := release("otelcol-contrib", "0.162.0", releases.SourcePublished)
	r.PublishedAt, r.Platforms = &published, []string{"linux/amd64", "linux/arm64"}
	for _, v := range []string{"0.99.0", "0.163.0-rc.1", "0.100.0"} {
		must(t, s.PutRelease(ctx, release("otelcol-contrib", v, releases.SourcePublished), 0))
	}
	must(t, s.PutRelease(ctx, r, 0))
	must(t, s.PutRelease(ctx, release("otelcol", "0.170.0", releases.SourceAdmin), 0)) // another distribution, another partition

	rs, err := s.ReleasesOf(ctx, "otelcol-contrib")
	must(t, err)
	if got := releases.Versions(rs); !reflect.DeepEqual(got, []string{"0.163.0-rc.1", "0.162.0", "0.100.0", "0.99.0"}) {
		t.Errorf("listing %v, want newest first by semantic version", got)
	}
	got, err := s.GetRelease(ctx, "otelcol-contrib", "0.162.0")
	must(t, err)
	if got == nil || got.Revision != 1 || !releases.SameContent(*got, r) || got.UpdatedAt == nil || !got.UpdatedAt.Equal(t0) {
		t.Fatalf("read back %+v, want %+v at revision 1", got, r)
	}
	if rc := rs[0]; !rc.Prerelease || rc.Revision != 1 {
		t.Errorf("release candidate %+v", rc)
	}

	// A write states the revision it read.
	admin := release("otelcol-contrib", "0.162.0", releases.SourceAdmin)
	if err := s.PutRelease(ctx, admin, 0); !errors.Is(err, rollout.ErrConflict) {
		t.Errorf("create over an existing release: %v, want ErrConflict", err)
	}
	if err := s.PutRelease(ctx, admin, 7); !errors.Is(err, rollout.ErrConflict) {
		t.Errorf("stale revision: %v, want ErrConflict", err)
	}
	must(t, s.PutRelease(ctx, admin, 1))
	if got, _ := s.GetRelease(ctx, "otelcol-contrib", "0.162.0"); got.Source != releases.SourceAdmin || got.Revision != 2 || got.Platforms != nil {
		t.Errorf("after the update %+v", got)
	}

	if err := s.DeleteRelease(ctx, "otelcol-contrib", "0.162.0", 1); !errors.Is(err, rollout.ErrConflict) {
		t.Errorf("delete at a stale revision: %v, want ErrConflict", err)
	}
	must(t, s.DeleteRelease(ctx, "otelcol-contrib", "0.162.0", 2))
	if got, err := s.GetRelease(ctx, "otelcol-contrib", "0.162.0"); err != nil || got != nil {
		t.Errorf("after delete: %+v %v", got, err)
	}
	if err := s.DeleteRelease(ctx, "otelcol-contrib", "0.162.0", 2); !errors.Is(err, rollout.ErrConflict) {
		t.Errorf("delete of a deleted release: %v, want ErrConflict (the caller reads again)", err)
	}
	if rs, _ := s.ReleasesOf(ctx, "otelcol"); len(rs) != 1 || rs[0].Version != "0.170.0" {
		t.Errorf("otelcol: %+v", rs)
	}
}

func TestReleases_RefusesWhatNoReaderCouldTrust(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	for _, r := range []releases.Release{
		release("otelcol", "v0.161.0", releases.SourceAdmin),                             // a v
		release("otelcol", "0.161.0", releases.SourceConfig),                             // configured releases are not stored
		release("Otel#col", "0.161.0", releases.SourceAdmin),                             // a key separator
		{Distribution: "otelcol", Version: "0.161.0-rc.1", Source: releases.SourceAdmin}, // a prerelease not flagged
	} {
		if err := s.PutRelease(ctx, r, 0); err == nil {
			t.Errorf("%+v was stored", r)
		}
	}
	// Names no release can have are not looked up.
	if rs, err := s.ReleasesOf(ctx, strings.Repeat("x", 2000)); err != nil || rs != nil {
		t.Errorf("impossible distribution: %v %v", rs, err)
	}
	if r, err := s.GetRelease(ctx, "otelcol", "latest"); err != nil || r != nil {
		t.Errorf("impossible version: %v %v", r, err)
	}
}

func TestReleases_DecodeErrors(t *testing.T) {
	t.Parallel()
	s, ctx := newStore(t), ctxT(t)
	must(t, s.PutRelease(ctx, release("otelcol", "0.161.0", releases.SourceAdmin), 0))
	// An item whose document names another release: someone wrote it by hand.
	it, err := newItem().s(tables.AttrPK, releasePK("otelcol")).s(tables.AttrSK, "0.162.0").n(attrV, 1).doc(release("otelcol", "0.161.0", releases.SourceAdmin))
	must(t, err)
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.names.Objects, Item: it})
	must(t, err)
	var de *DecodeError
	if _, err := s.ReleasesOf(ctx, "otelcol"); !errors.As(err, &de) || !strings.Contains(err.Error(), "decode release otelcol/0.162.0: the document names release otelcol/0.161.0") {
		t.Errorf("listing: %v, want a DecodeError naming the item", err)
	}
	it[attrSV] = num(SchemaVersion + 1)
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.names.Objects, Item: it})
	must(t, err)
	if _, err := s.GetRelease(ctx, "otelcol", "0.162.0"); !errors.As(err, &de) || !strings.Contains(err.Error(), "newer than this build") {
		t.Errorf("future schema: %v", err)
	}
}
