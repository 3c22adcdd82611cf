package releases

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/rollout"
)

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// catalogue is the stored catalogue with the store's condition: a write
// states the revision it read.
type catalogue struct {
	mu    sync.Mutex
	items map[string]Release // by Key()
	puts  int
	// beforePut runs before a write is checked, to let a race happen.
	beforePut func(r Release)
}

func newCatalogue(rs ...Release) *catalogue {
	c := &catalogue{items: map[string]Release{}}
	for _, r := range rs {
		r.Revision = 1
		c.items[r.Key()] = r
	}
	return c
}

func (c *catalogue) ReleasesOf(_ context.Context, d string) ([]Release, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Release
	for _, r := range c.items {
		if r.Distribution == d {
			out = append(out, r)
		}
	}
	return out, nil
}

func (c *catalogue) PutRelease(_ context.Context, r Release, prev int64) error {
	if c.beforePut != nil {
		c.beforePut(r)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := Check(r); err != nil {
		return err
	}
	if c.items[r.Key()].Revision != prev {
		return fmt.Errorf("put %s: %w", r.Key(), rollout.ErrConflict)
	}
	r.Revision = prev + 1
	c.items[r.Key()] = r
	c.puts++
	return nil
}

func (c *catalogue) get(key string) Release {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.items[key]
}

func (c *catalogue) versions(d string) []string {
	rs, _ := c.ReleasesOf(context.Background(), d)
	SortNewestFirst(rs)
	var out []string
	for _, r := range rs {
		out = append(out, r.Version+" "+string(r.Source))
	}
	return out
}

func refresher(t *testing.T, c *catalogue) (Refresher, *recorded) {
	rec := newRecorded(t)
	return Refresher{Source: GitHub{BaseURL: rec.srv.URL}, Store: c, Clock: func() time.Time { return t0 }}, rec
}

func targets(t *testing.T, s string) []Target {
	t.Helper()
	ts, err := ParseTargets(s)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// The recorded pages hold, newest first: a draft, a release candidate of
// otelcol-contrib only, a builder release, 0.162.0 of all four
// distributions, 0.161.0 of all four, 0.160.0 tagged without v and without
// assets, 0.99.0 marked prerelease by mistake, 0.98.0 of otelcol and
// otelcol-contrib only.
func TestRefresh_FromRecordedPages(t *testing.T) {
	c := newCatalogue()
	r, rec := refresher(t, c)
	res, err := r.Refresh(context.Background(), targets(t, "otelcol-contrib,otelcol-k8s"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.versions("otelcol-contrib"), []string{"0.163.0-rc.1 published", "0.162.0 published", "0.161.0 published", "0.160.0 published", "0.98.0 published"}; !reflect.DeepEqual(got, want) {
		t.Errorf("otelcol-contrib %v, want %v", got, want)
	}
	// otelcol-k8s is in neither the release candidate nor 0.98.0, and 0.160.0 has no assets at all.
	if got, want := c.versions("otelcol-k8s"), []string{"0.162.0 published", "0.161.0 published", "0.160.0 published"}; !reflect.DeepEqual(got, want) {
		t.Errorf("otelcol-k8s %v, want %v", got, want)
	}
	if n := len(rec.requests); n != 2 {
		t.Errorf("%d requests for two distributions of one repository, want 2 (the listing is shared)", n)
	}
	want := []Outcome{
		{Distribution: "otelcol-contrib", Repository: CollectorReleases, Listed: 8, Written: 5, Skipped: 3},
		{Distribution: "otelcol-k8s", Repository: CollectorReleases, Listed: 8, Written: 3, Skipped: 5},
	}
	if !reflect.DeepEqual(res.Distributions, want) {
		t.Errorf("outcome\n got %+v\nwant %+v", res.Distributions, want)
	}

	rc := c.get("otelcol-contrib/0.163.0-rc.1")
	published := time.Date(2026, 11, 24, 16, 31, 45, 0, time.UTC)
	if !rc.Prerelease || rc.PublishedAt == nil || !rc.PublishedAt.Equal(published) || rc.UpdatedAt == nil || !rc.UpdatedAt.Equal(t0) {
		t.Errorf("release candidate %+v", rc)
	}
	if got := c.get("otelcol-contrib/0.162.0").Platforms; !reflect.DeepEqual(got, []string{"darwin/arm64", "linux/amd64", "linux/arm64", "windows/amd64"}) {
		t.Errorf("0.162.0 platforms %v, from the archive and installer names", got)
	}
	if got := c.get("otelcol-k8s/0.162.0").Platforms; !reflect.DeepEqual(got, []string{"linux/amd64", "linux/arm64"}) {
		t.Errorf("otelcol-k8s 0.162.0 platforms %v", got)
	}
	if got := c.get("otelcol-contrib/0.160.0"); got.Platforms != nil || got.Version != "0.160.0" {
		t.Errorf("a release without assets: %+v, want it without platforms", got)
	}

	// The same listing again writes nothing.
	puts := c.puts
	res, err = r.Refresh(context.Background(), targets(t, "otelcol-contrib"))
	if err != nil || c.puts != puts || res.Distributions[0].Unchanged != 5 || res.Distributions[0].Written != 0 {
		t.Errorf("second refresh: %+v %v, %d writes; want every release unchanged", res, err, c.puts-puts)
	}
}

func TestPlanRefresh_AdminEntriesStay(t *testing.T) {
	admin := Release{Distribution: "otelcol-contrib", Version: "0.162.0", Source: SourceAdmin, Platforms: []string{"linux/amd64"}, Revision: 3}
	stale := Release{Distribution: "otelcol-contrib", Version: "0.161.0", Source: SourcePublished, Revision: 1} // published before its assets were up
	onlyHere := Release{Distribution: "otelcol-contrib", Version: "0.150.0", Source: SourcePublished, Revision: 1}
	pubs := []Published{
		{Tag: "v0.162.0", Assets: []string{"otelcol-contrib_0.162.0_linux_arm64.tar.gz"}},
		{Tag: "v0.161.0", Assets: []string{"otelcol-contrib_0.161.0_linux_arm64.tar.gz"}},
		{Tag: "0.161.0", Assets: []string{"otelcol-contrib_0.161.0_linux_amd64.tar.gz"}}, // the same version under a second tag
	}
	p := PlanRefresh("otelcol-contrib", pubs, []Release{admin, stale, onlyHere}, t0)
	if p.KeptAdmin != 1 || p.Unchanged != 0 || len(p.Changes) != 1 {
		t.Fatalf("plan %+v, want the admin entry kept and one change", p)
	}
	c := p.Changes[0]
	if c.Release.Version != "0.161.0" || c.PreviousRevision != 1 || !reflect.DeepEqual(c.Release.Platforms, []string{"linux/arm64"}) {
		t.Errorf("change %+v, want 0.161.0 over revision 1 with the first tag's platforms", c)
	}
	if want := []string{"0.161.0: the version is listed twice"}; !reflect.DeepEqual(p.Skipped, want) {
		t.Errorf("skipped %v, want %v", p.Skipped, want)
	}
	for _, ch := range p.Changes {
		if ch.Release.Version == onlyHere.Version {
			t.Error("a release missing upstream is never touched")
		}
	}
}

func TestPlanRefresh_Skips(t *testing.T) {
	pubs := []Published{
		{Tag: "v0.163.0", Draft: true},
		{Tag: "cmd/builder/v0.162.0", Assets: []string{"ocb_0.162.0_linux_amd64"}},
		{Tag: "v0.99.0", Prerelease: true},
		{Tag: "v0.98.0", Assets: []string{"otelcol_0.98.0_linux_amd64.tar.gz"}},
		{Tag: "v0.97.0-rc.2", Prerelease: false}, // the version decides: a prerelease all the same
	}
	p := PlanRefresh("otelcol-contrib", pubs, nil, t0)
	sort.Strings(p.Skipped)
	want := []string{
		"cmd/builder/v0.162.0: not a semantic version",
		"v0.163.0: a draft",
		"v0.98.0: no asset of otelcol-contrib",
		"v0.99.0: marked prerelease, but the version has no prerelease part",
	}
	if !reflect.DeepEqual(p.Skipped, want) {
		t.Errorf("skipped\n got %v\nwant %v", p.Skipped, want)
	}
	if len(p.Changes) != 1 || p.Changes[0].Release.Version != "0.97.0-rc.2" || !p.Changes[0].Release.Prerelease {
		t.Errorf("changes %+v, want the release candidate as a prerelease", p.Changes)
	}
}

func TestRefresh_AnAdminWriteWinsTheRace(t *testing.T) {
	c := newCatalogue()
	r, _ := refresher(t, c)
	c.beforePut = func(pr Release) {
		if pr.Version == "0.162.0" && pr.Source == SourcePublished {
			c.beforePut = nil
			_ = c.PutRelease(context.Background(), Release{Distribution: pr.Distribution, Version: pr.Version, Source: SourceAdmin}, 0)
		}
	}
	res, err := r.Refresh(context.Background(), targets(t, "otelcol-contrib"))
	if err != nil {
		t.Fatal(err)
	}
	if o := res.Distributions[0]; o.Conflicts != 1 || o.Written != 4 {
		t.Errorf("outcome %+v, want one conflict and the other four written", o)
	}
	if got := c.get("otelcol-contrib/0.162.0"); got.Source != SourceAdmin {
		t.Errorf("0.162.0 is %s, want the administrator's entry", got.Source)
	}
}

type failingLister struct{ fails map[string]bool }

func (f failingLister) Releases(_ context.Context, repo string) ([]Published, error) {
	if f.fails[repo] {
		return nil, errors.New("GitHub answered 502")
	}
	return []Published{{Tag: "v1.0.0"}}, nil
}

func TestRefresh_OneFailureDoesNotStopTheOthers(t *testing.T) {
	c := newCatalogue()
	r := Refresher{Source: failingLister{fails: map[string]bool{"acme/broken": true}}, Store: c, Clock: func() time.Time { return t0 }}
	res, err := r.Refresh(context.Background(), targets(t, "acme=acme/broken,other=acme/fine"))
	if err == nil || !strings.Contains(err.Error(), "refresh acme: GitHub answered 502") {
		t.Errorf("error %v, want the failure of acme", err)
	}
	if len(res.Distributions) != 2 || res.Distributions[0].Error == "" || res.Distributions[1].Written != 1 {
		t.Errorf("outcome %+v, want acme failed and other written", res.Distributions)
	}
}
