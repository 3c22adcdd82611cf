package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/myriarch/myriarch/adapters/store/tables"
	"github.com/myriarch/myriarch/core/releases"
	"github.com/myriarch/myriarch/local/storetest"
)

// The handler as Lambda runs it, on DynamoDB Local and a GitHub that
// answers from loopback.
func TestHandler_RefreshesIntoTheStore(t *testing.T) {
	st, names := storetest.NewWithTables(t)
	gh := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/repos/acme/otelcol-releases/releases" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, `[{"tag_name": "v1.2.0", "draft": false, "prerelease": false, "published_at": "2026-11-20T10:00:00Z",
			"assets": [{"name": "acme-otelcol_1.2.0_linux_amd64.tar.gz"}]},
			{"tag_name": "v1.1.0", "draft": false, "prerelease": false, "published_at": "2026-10-20T10:00:00Z", "assets": []}]`)
	}))
	t.Cleanup(gh.Close)
	prefix := strings.TrimSuffix(names.Objects, tables.Objects.Name)
	env := map[string]string{"MYRIARCH_TABLE_PREFIX": prefix, EnvRefresh: "acme-otelcol=acme/otelcol-releases", EnvSourceURL: gh.URL}
	run, err := build(func(k string) string { return env[k] }, storetest.Client(t), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	res, err := run(context.Background(), []byte(`{"source": "aws.events"}`))
	if err != nil || len(res.Distributions) != 1 || res.Distributions[0].Written != 2 {
		t.Fatalf("refresh %+v, %v", res, err)
	}
	rs, err := st.ReleasesOf(context.Background(), "acme-otelcol")
	if err != nil || strings.Join(releases.Versions(rs), ",") != "1.2.0,1.1.0" || rs[0].Source != releases.SourcePublished ||
		strings.Join(rs[0].Platforms, ",") != "linux/amd64" {
		t.Fatalf("catalogue %+v, %v", rs, err)
	}
}

func TestBuild_RefusesBadSettings(t *testing.T) {
	for _, env := range []map[string]string{
		{EnvRefresh: "otelcol"}, // no table prefix
		{"MYRIARCH_TABLE_PREFIX": "p-", EnvRefresh: "acme-otelcol"}, // no known publisher
	} {
		if _, err := build(func(k string) string { return env[k] }, nil, slog.New(slog.DiscardHandler)); err == nil {
			t.Errorf("%v: built", env)
		}
	}
	run, err := build(func(k string) string { return map[string]string{"MYRIARCH_TABLE_PREFIX": "p-"}[k] }, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if res, err := run(context.Background(), nil); err != nil || len(res.Distributions) != 0 {
		t.Errorf("nothing configured: %+v %v, want nothing to do", res, err)
	}
}
