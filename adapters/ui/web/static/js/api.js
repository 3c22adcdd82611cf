// The REST API of api/openapi.yaml, as the page reads it: JSON with the
// bearer token, problems as errors that carry the API's own words.

// Problem is a refusal of the API (application/problem+json) or a failure
// to reach it (status 0).
export class Problem extends Error {
  constructor(status, body) {
    const b = body || {};
    super(b.detail || b.title || `the API answered ${status}`);
    this.status = status;
    this.code = b.code || '';
    this.title = b.title || '';
    this.detail = b.detail || '';
    this.issues = Array.isArray(b.issues) ? b.issues : [];
  }

  // text is what the page shows: the API's detail, and the messages of
  // the issues that say more than it.
  text() {
    const extra = this.issues.map((i) => i.message).filter((m) => m && m !== this.detail);
    return [this.detail || this.title || this.message, ...extra].join(' · ');
  }
}

// API calls the REST API beside the page: ../api/v1/ relative to /ui/, so
// that behind API Gateway the stage stays in the URL (/prod/ui/ calls
// /prod/api/v1/).
export class API {
  constructor(token, base = new URL('../api/v1/', document.baseURI)) {
    this.token = token;
    this.base = base;
  }

  async request(method, path, { query, body } = {}) {
    const url = new URL(path.replace(/^\//, ''), this.base);
    for (const [k, v] of Object.entries(query || {})) {
      if (v !== undefined && v !== null && v !== '') url.searchParams.set(k, String(v));
    }
    const headers = { Authorization: 'Bearer ' + this.token, Accept: 'application/json' };
    const init = { method, headers, cache: 'no-store', credentials: 'omit' };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    let res;
    try {
      res = await fetch(url, init);
    } catch (e) {
      throw new Problem(0, { title: 'The API cannot be reached', detail: `the API cannot be reached: ${e.message}` });
    }
    const text = await res.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = null;
    }
    if (!res.ok) throw new Problem(res.status, data || { detail: `the API answered ${res.status}` });
    return data;
  }

  get(path, query) {
    return this.request('GET', path, { query });
  }

  post(path, body) {
    return this.request('POST', path, { body: body || {} });
  }

  // page reads a list until it has `want` items or no page follows: with
  // a filter a page may hold fewer items than asked, even none, while a
  // nextPageToken is present. At most 20 pages.
  async page(path, query, want) {
    const items = [];
    let token = '';
    for (let i = 0; i < 20; i++) {
      const p = await this.get(path, { ...query, limit: Math.min(500, Math.max(1, want - items.length)), pageToken: token });
      items.push(...(p.items || []));
      token = p.nextPageToken || '';
      if (!token || items.length >= want) break;
    }
    return { items, more: token !== '' };
  }

  // all reads every item of a list, 500 at a time.
  async all(path, query) {
    const items = [];
    let token = '';
    do {
      const p = await this.get(path, { ...query, limit: 500, pageToken: token });
      items.push(...(p.items || []));
      token = p.nextPageToken || '';
    } while (token);
    return items;
  }
}

// seg is one path segment, escaped.
export const seg = encodeURIComponent;
