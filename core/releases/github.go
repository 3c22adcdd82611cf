package releases

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// DefaultGitHubURL is the GitHub REST API. GitHub Enterprise Server serves
// the same API under https://<host>/api/v3.
const DefaultGitHubURL = "https://api.github.com"

// DefaultMaxPages bounds the pages of one listing: 20 pages of 100 are
// 2,000 releases, years of monthly releases, and a Link header that never
// ends cannot keep a refresh busy.
const DefaultMaxPages = 20

// maxPageBytes bounds one page. A page of 100 releases of the collector
// releases repository, with their assets, is about 1.5 MB.
const maxPageBytes = 16 << 20

// Published is one release as its publisher lists it.
type Published struct {
	Tag         string
	Draft       bool
	Prerelease  bool
	PublishedAt *time.Time
	Assets      []string // file names of the release's assets
}

// GitHub lists the releases of a repository through the GitHub REST API,
// GET /repos/{owner}/{repo}/releases?per_page=100, following the Link
// header's rel="next" from page to page. It sends no token: a daily refresh
// needs a few requests per repository, well within the 60 an hour that
// GitHub allows without one.
type GitHub struct {
	BaseURL   string       // "": DefaultGitHubURL
	HTTP      *http.Client // nil: a client with a 30 s timeout
	UserAgent string       // "": myriarch-releases (GitHub refuses requests without one)
	MaxPages  int          // 0: DefaultMaxPages
}

var repositoryPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+$`)

// ValidRepository reports whether s is owner/name.
func ValidRepository(s string) bool {
	return len(s) <= 200 && repositoryPattern.MatchString(s) && !strings.Contains(s, "..")
}

// githubRelease is the part of GitHub's release object that is read.
type githubRelease struct {
	TagName     string     `json:"tag_name"`
	Draft       bool       `json:"draft"`
	Prerelease  bool       `json:"prerelease"`
	PublishedAt *time.Time `json:"published_at"`
	Assets      []struct {
		Name string `json:"name"`
	} `json:"assets"`
}

// Releases lists every release of the repository (owner/name), newest
// first as GitHub orders them.
func (g GitHub) Releases(ctx context.Context, repository string) ([]Published, error) {
	if !ValidRepository(repository) {
		return nil, fmt.Errorf("list releases: %q is not a repository owner/name", repository)
	}
	base, err := url.Parse(strings.TrimRight(orDefault(g.BaseURL, DefaultGitHubURL), "/"))
	if err != nil || (base.Scheme != "https" && base.Scheme != "http") || base.Host == "" {
		return nil, fmt.Errorf("list releases of %s: the API URL %q is not an http(s) URL", repository, g.BaseURL)
	}
	next := base.String() + "/repos/" + repository + "/releases?per_page=100"
	var out []Published
	for page := 1; next != ""; page++ {
		if page > orDefault(g.MaxPages, DefaultMaxPages) {
			return nil, fmt.Errorf("list releases of %s: more than %d pages", repository, orDefault(g.MaxPages, DefaultMaxPages))
		}
		rs, link, err := g.page(ctx, next)
		if err != nil {
			return nil, fmt.Errorf("list releases of %s, page %d: %w", repository, page, err)
		}
		for _, r := range rs {
			p := Published{Tag: r.TagName, Draft: r.Draft, Prerelease: r.Prerelease, PublishedAt: r.PublishedAt}
			for _, a := range r.Assets {
				p.Assets = append(p.Assets, a.Name)
			}
			out = append(out, p)
		}
		if next, err = nextPage(base, link); err != nil {
			return nil, fmt.Errorf("list releases of %s, page %d: %w", repository, page, err)
		}
	}
	return out, nil
}

func (g GitHub) page(ctx context.Context, u string) ([]githubRelease, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	req.Header.Set("User-Agent", orDefault(g.UserAgent, "myriarch-releases"))
	hc := g.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxPageBytes+1))
	if err != nil {
		return nil, "", fmt.Errorf("read the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, "", statusError(resp, body)
	}
	if len(body) > maxPageBytes {
		return nil, "", fmt.Errorf("the page is larger than %d bytes", maxPageBytes)
	}
	var rs []githubRelease
	if err := json.Unmarshal(body, &rs); err != nil {
		return nil, "", fmt.Errorf("the answer is not a list of releases: %w", err)
	}
	return rs, resp.Header.Get("Link"), nil
}

// statusError says what GitHub answered: its message, and when the rate
// limit is spent, when it resets.
func statusError(resp *http.Response, body []byte) error {
	var m struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(body, &m)
	msg := fmt.Sprintf("GitHub answered %d", resp.StatusCode)
	if m.Message != "" {
		msg += ": " + m.Message
	}
	if resp.Header.Get("X-RateLimit-Remaining") == "0" {
		msg += " (rate limit spent; it resets at Unix time " + resp.Header.Get("X-RateLimit-Reset") + ")"
	}
	return errors.New(msg)
}

// linkNext finds the rel="next" target of a Link header (RFC 8288):
// `<https://api.github.com/repositories/1/releases?per_page=100&page=2>; rel="next", <…>; rel="last"`.
var linkNext = regexp.MustCompile(`<([^>]+)>\s*;[^,]*\brel="?next"?`)

// nextPage is the URL of the next page, "" on the last one. It must be on
// the API's own scheme and host: a Link elsewhere is not followed, so that
// a misconfigured proxy cannot send the refresh to another server.
func nextPage(base *url.URL, link string) (string, error) {
	m := linkNext.FindStringSubmatch(link)
	if m == nil {
		return "", nil
	}
	u, err := url.Parse(m[1])
	if err != nil {
		return "", fmt.Errorf("the next page %q is not a URL", m[1])
	}
	u = base.ResolveReference(u)
	if u.Scheme != base.Scheme || u.Host != base.Host {
		return "", fmt.Errorf("the next page %s is not on %s://%s", u, base.Scheme, base.Host)
	}
	return u.String(), nil
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}
