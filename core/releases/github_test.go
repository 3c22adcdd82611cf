package releases

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
)

// recorded serves the recorded answers of GitHub for the collector
// releases repository: testdata/github-releases-page-<n>.json, page 1
// linking to page 2 as GitHub does (rel="next" and rel="last" on the
// first page, rel="prev" and rel="first" on the last).
type recorded struct {
	t        *testing.T
	srv      *httptest.Server
	mu       sync.Mutex
	requests []*http.Request
	status   int    // != 0: answer every request with this status
	next     string // != "": the Link target of page 1 instead of page 2
}

func newRecorded(t *testing.T) *recorded {
	t.Helper()
	rec := &recorded{t: t}
	rec.srv = httptest.NewServer(http.HandlerFunc(rec.serve))
	t.Cleanup(rec.srv.Close)
	return rec
}

func (rec *recorded) serve(w http.ResponseWriter, r *http.Request) {
	rec.mu.Lock()
	rec.requests = append(rec.requests, r.Clone(context.Background()))
	status, next := rec.status, rec.next
	rec.mu.Unlock()
	if status != 0 {
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Reset", "1764572400")
		w.WriteHeader(status)
		fmt.Fprint(w, `{"message":"API rate limit exceeded for 203.0.113.7.","documentation_url":"https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting"}`)
		return
	}
	if r.URL.Path != "/repos/"+CollectorReleases+"/releases" && r.URL.Path != "/repositories/271234567/releases" {
		http.NotFound(w, r)
		return
	}
	page := r.URL.Query().Get("page")
	if page == "" {
		page = "1"
	}
	body, err := os.ReadFile("testdata/github-releases-page-" + page + ".json")
	if err != nil {
		http.NotFound(w, r)
		return
	}
	// GitHub links by repository id, not by name.
	link := func(p int) string {
		return fmt.Sprintf("%s/repositories/271234567/releases?per_page=100&page=%d", rec.srv.URL, p)
	}
	switch page {
	case "1":
		n := link(2)
		if next != "" {
			n = next
		}
		w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next", <%s>; rel="last"`, n, link(2)))
	case "2":
		w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="prev", <%s>; rel="first"`, link(1), link(1)))
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = w.Write(body)
}

func TestGitHub_FollowsTheLinkHeaderToTheLastPage(t *testing.T) {
	rec := newRecorded(t)
	got, err := GitHub{BaseURL: rec.srv.URL}.Releases(context.Background(), CollectorReleases)
	if err != nil {
		t.Fatal(err)
	}
	var tags []string
	for _, p := range got {
		tags = append(tags, p.Tag)
	}
	want := "v0.163.0 v0.163.0-rc.1 cmd/builder/v0.162.0 v0.162.0 v0.161.0 0.160.0 v0.99.0 v0.98.0"
	if strings.Join(tags, " ") != want {
		t.Errorf("tags %v, want %s", tags, want)
	}
	if len(rec.requests) != 2 {
		t.Fatalf("%d requests, want 2 (one per page)", len(rec.requests))
	}
	first := rec.requests[0]
	if first.URL.RequestURI() != "/repos/"+CollectorReleases+"/releases?per_page=100" {
		t.Errorf("first request %s", first.URL.RequestURI())
	}
	for h, v := range map[string]string{"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28", "User-Agent": "myriarch-releases"} {
		if first.Header.Get(h) != v {
			t.Errorf("header %s = %q, want %q", h, first.Header.Get(h), v)
		}
	}
	if first.Header.Get("Authorization") != "" {
		t.Error("the refresh sends no credentials")
	}
	if rc1 := got[1]; !rc1.Prerelease || rc1.PublishedAt == nil || len(rc1.Assets) != 4 {
		t.Errorf("v0.163.0-rc.1 read as %+v", rc1)
	}
	if draft := got[0]; !draft.Draft || draft.PublishedAt != nil {
		t.Errorf("the draft read as %+v", draft)
	}
}

func TestGitHub_Refusals(t *testing.T) {
	t.Run("rate limit", func(t *testing.T) {
		rec := newRecorded(t)
		rec.status = http.StatusForbidden
		_, err := GitHub{BaseURL: rec.srv.URL}.Releases(context.Background(), CollectorReleases)
		if err == nil || !strings.Contains(err.Error(), "403: API rate limit exceeded") || !strings.Contains(err.Error(), "resets at Unix time 1764572400") {
			t.Errorf("error %v, want GitHub's message and the reset", err)
		}
	})
	t.Run("a next page on another host", func(t *testing.T) {
		rec := newRecorded(t)
		rec.next = "https://example.com/steal?page=2"
		_, err := GitHub{BaseURL: rec.srv.URL}.Releases(context.Background(), CollectorReleases)
		if err == nil || !strings.Contains(err.Error(), "is not on") || len(rec.requests) != 1 {
			t.Errorf("error %v after %d requests, want a refusal to follow", err, len(rec.requests))
		}
	})
	t.Run("more pages than allowed", func(t *testing.T) {
		rec := newRecorded(t)
		_, err := GitHub{BaseURL: rec.srv.URL, MaxPages: 1}.Releases(context.Background(), CollectorReleases)
		if err == nil || !strings.Contains(err.Error(), "more than 1 pages") {
			t.Errorf("error %v, want the page bound", err)
		}
	})
	t.Run("not a repository", func(t *testing.T) {
		rec := newRecorded(t)
		_, err := GitHub{BaseURL: rec.srv.URL}.Releases(context.Background(), "../../user")
		if err == nil || len(rec.requests) != 0 {
			t.Errorf("error %v after %d requests, want a refusal before any request", err, len(rec.requests))
		}
	})
	t.Run("unknown repository", func(t *testing.T) {
		rec := newRecorded(t)
		_, err := GitHub{BaseURL: rec.srv.URL}.Releases(context.Background(), "acme/nothing")
		if err == nil || !strings.Contains(err.Error(), "404") {
			t.Errorf("error %v, want the 404", err)
		}
	})
}

func TestNextPage(t *testing.T) {
	base := mustURL(t, "https://api.github.com")
	tests := []struct {
		name, link, want string
		fails            bool
	}{
		{name: "no header", link: "", want: ""},
		{name: "last page", link: `<https://api.github.com/repositories/1/releases?page=1>; rel="prev", <https://api.github.com/repositories/1/releases?page=1>; rel="first"`, want: ""},
		{name: "next first", link: `<https://api.github.com/repositories/1/releases?per_page=100&page=2>; rel="next", <https://api.github.com/repositories/1/releases?per_page=100&page=5>; rel="last"`,
			want: "https://api.github.com/repositories/1/releases?per_page=100&page=2"},
		{name: "next after prev", link: `<https://api.github.com/r?page=1>; rel="prev", <https://api.github.com/r?page=3>; rel="next"`, want: "https://api.github.com/r?page=3"},
		{name: "relative", link: `</r?page=2>; rel="next"`, want: "https://api.github.com/r?page=2"},
		{name: "other scheme", link: `<http://api.github.com/r?page=2>; rel="next"`, fails: true},
		{name: "other host", link: `<https://evil.example/r?page=2>; rel="next"`, fails: true},
	}
	for _, tt := range tests {
		got, err := nextPage(base, tt.link)
		if (err != nil) != tt.fails || got != tt.want {
			t.Errorf("%s: %q %v, want %q (fails: %v)", tt.name, got, err, tt.want, tt.fails)
		}
	}
}
