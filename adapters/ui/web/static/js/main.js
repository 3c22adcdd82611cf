// The page: sign-in with a bearer token, hash routing, polling, and the
// actions of every page dispatched from one set of listeners.
import { API, Problem } from './api.js';
import { h, morph } from './dom.js';
import rolloutsPage from './pages/rollouts.js';
import rolloutPage from './pages/rollout.js';
import fleetsPage from './pages/fleets.js';
import fleetPage from './pages/fleet.js';
import agentsPage from './pages/agents.js';

// POLL_MS is the time between two reads of the API; every action reads at
// once too. Countdowns tick every second in between.
const POLL_MS = 3000;
const TICK_MS = 1000;
const TOKEN_KEY = 'myriarch.token'; // sessionStorage: gone when the tab closes

const main = document.getElementById('main');
const nav = document.getElementById('nav');
const who = document.getElementById('who');
const announcer = document.getElementById('announce');

// app is what every page reads: the API, the caller, the route, the last
// data the page loaded and the page's own state (ui), which a new page
// starts afresh.
const app = {
  api: null,
  me: null,
  route: { page: '', id: '', query: new URLSearchParams() },
  page: null,
  data: null,
  error: null,
  ui: {},
  now: () => Date.now(),
  can(permission) {
    return Boolean(this.me && (this.me.permissions || []).includes(permission));
  },
  // go navigates to a route of the page, e.g. #/rollouts?fleet=edge.
  go(hash) {
    if (location.hash === hash) refresh();
    else location.hash = hash;
  },
  render: () => render(),
  refresh: () => refresh(),
  announce: (text) => announce(text),
};

const pages = { rollouts: rolloutsPage, rollout: rolloutPage, fleets: fleetsPage, fleet: fleetPage, agents: agentsPage };

function parseRoute() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [path, query] = raw.split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const q = new URLSearchParams(query || '');
  const [first = 'rollouts', id = ''] = parts;
  const page = { rollouts: id ? 'rollout' : 'rollouts', fleets: id ? 'fleet' : 'fleets', agents: 'agents' }[first] || '';
  return { page, id, query: q, nav: first };
}

// --- polling ---------------------------------------------------------------

let generation = 0;
let pollTimer = 0;

async function refresh() {
  clearTimeout(pollTimer);
  if (!app.api || !app.page) return;
  const gen = ++generation;
  if (document.hidden && app.data) {
    pollTimer = setTimeout(refresh, POLL_MS);
    return;
  }
  try {
    const data = await app.page.load(app);
    if (gen !== generation) return;
    const said = app.page.announce ? app.page.announce(app.data, data, app) : null;
    app.data = data;
    app.error = null;
    if (said) announce(said);
  } catch (e) {
    if (gen !== generation) return;
    if (e instanceof Problem && e.status === 401) {
      signOut('The API refused the token: ' + e.text());
      return;
    }
    app.error = e instanceof Problem ? e : new Problem(0, { detail: String(e) });
  }
  render();
  pollTimer = setTimeout(refresh, POLL_MS);
}

setInterval(() => {
  if (app.page && app.page.ticks && app.data && !document.hidden) render();
}, TICK_MS);

document.addEventListener('visibilitychange', () => {
  if (!document.hidden) refresh();
});

// --- rendering -------------------------------------------------------------

function render() {
  if (!app.api) return;
  let children;
  try {
    if (!app.page) {
      children = [h('h1', {}, 'Not found'), h('p', {}, 'This page does not exist. '), h('p', {}, h('a', { href: '#/rollouts' }, 'Rollouts'))];
    } else if (!app.data && app.error) {
      children = [h('h1', {}, app.page.title(app)), h('p', { class: 'error', role: 'alert' }, app.error.text())];
    } else if (!app.data) {
      children = [h('h1', {}, app.page.title(app)), h('p', {}, 'Loading…')];
    } else {
      children = [
        app.error ? h('p', { class: 'error stale', role: 'alert', 'data-key': 'stale' },
          `The last refresh failed; trying again every ${POLL_MS / 1000}s: ${app.error.text()}`) : null,
        app.page.view(app),
      ];
    }
  } catch (e) {
    children = [h('p', { class: 'error', role: 'alert' }, 'The page failed to show this: ' + e.message)];
  }
  morph(main, h('main', {}, children));
  document.title = (app.page ? app.page.title(app) + ' · ' : '') + 'Myriarch';
  for (const a of nav.querySelectorAll('a')) {
    if (a.dataset.page === app.route.nav) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

function announce(text) {
  announcer.textContent = '';
  setTimeout(() => {
    announcer.textContent = text;
  }, 50);
}

// --- routing ---------------------------------------------------------------

function route() {
  const next = parseRoute();
  const samePage = app.page && next.page === app.route.page && next.id === app.route.id;
  app.route = next;
  if (!samePage) {
    app.page = pages[next.page] || null;
    app.data = null;
    app.error = null;
    app.ui = { msg: {} };
  }
  render();
  if (!samePage && document.activeElement !== main && routed) main.focus();
  routed = true;
  refresh();
}
let routed = false;

window.addEventListener('hashchange', () => {
  if (app.api) route();
});

// --- actions ---------------------------------------------------------------

// act runs a page's action for a form or a button: the action is named by
// data-action (of the submit button, else of the form). While it runs its
// controls are busy; its answer or refusal is shown beside it (data-key),
// and the page reads the API again at once.
async function act(name, form, button) {
  const el = button || form;
  const key = (form || el).dataset.key || name;
  const fn = app.page && app.page.actions && app.page.actions[name];
  if (!fn || app.ui.busy) return;
  app.ui.busy = key;
  app.ui.msg[key] = null;
  render();
  let res = null;
  try {
    res = await fn(app, { form, button, data: form ? new FormData(form) : new FormData(), set: el.dataset });
    app.ui.msg[key] = res && res.text ? { ok: true, text: res.text, link: res.link } : null;
    if (res && res.text) announce(res.text);
    if (form && !(res && res.keep)) form.reset();
    const details = el.closest('details');
    if (details && !(res && res.keep)) details.open = false;
  } catch (e) {
    if (e instanceof Problem && e.status === 401) {
      signOut('The API refused the token: ' + e.text());
      return;
    }
    app.ui.msg[key] = { ok: false, text: e instanceof Problem ? e.text() : String(e) };
  } finally {
    app.ui.busy = null;
  }
  render();
  if (!document.activeElement || document.activeElement === document.body) main.focus();
  if (!(res && res.local)) refresh();
}

document.addEventListener('submit', (e) => {
  const form = e.target.closest('form[data-action]');
  if (!form) return;
  e.preventDefault();
  const button = e.submitter && e.submitter.dataset.action ? e.submitter : null;
  const name = button ? button.dataset.action : form.dataset.action;
  if (name === 'signin') signIn(form);
  else act(name, form, button);
});

document.addEventListener('click', (e) => {
  const button = e.target.closest('button[data-action][type="button"]');
  if (!button) return;
  if (button.dataset.action === 'signout') signOut('Signed out.');
  else act(button.dataset.action, button.closest('form'), button);
});

document.addEventListener('change', (e) => {
  const el = e.target.closest('[data-change]');
  if (el && app.page && app.page.changes && app.page.changes[el.dataset.change]) app.page.changes[el.dataset.change](app, el);
});

// --- signing in ------------------------------------------------------------

function storage() {
  try {
    return window.sessionStorage;
  } catch {
    return null;
  }
}

async function start(token) {
  const api = new API(token);
  const me = await api.get('me');
  app.api = api;
  app.me = me;
  storage()?.setItem(TOKEN_KEY, token);
  nav.hidden = false;
  morph(who, h('div', {},
    h('span', {}, 'Signed in as ', h('strong', {}, me.displayName || me.actor), ` (${me.role})`),
    h('button', { type: 'button', class: 'link', 'data-action': 'signout' }, 'Sign out')));
  route();
}

async function signIn(form) {
  const token = String(new FormData(form).get('token') || '').trim();
  if (!token) {
    say(form, 'Enter a token.', true);
    return;
  }
  say(form, 'Signing in…', false);
  try {
    await start(token);
  } catch (e) {
    say(form, e instanceof Problem ? e.text() : String(e), true);
    form.querySelector('input').focus();
  }
}

// say shows the sign-in form's message: an error (a token the API does
// not know, a token missing) as an alert, styled as the page's other
// errors and tied to the token field; progress as a quiet status.
function say(form, text, error) {
  const msg = form.querySelector('[data-msg]');
  const input = form.querySelector('input');
  msg.textContent = text;
  msg.hidden = !text;
  msg.className = error ? 'error' : 'note';
  msg.setAttribute('role', error ? 'alert' : 'status');
  if (error) {
    input.setAttribute('aria-invalid', 'true');
    input.setAttribute('aria-describedby', msg.id);
  } else {
    input.removeAttribute('aria-invalid');
    input.removeAttribute('aria-describedby');
  }
}

function signOut(why) {
  clearTimeout(pollTimer);
  generation++;
  storage()?.removeItem(TOKEN_KEY);
  app.api = null;
  app.me = null;
  app.page = null;
  app.data = null;
  nav.hidden = true;
  morph(who, h('div', {}));
  showSignIn(why);
}

function showSignIn(why) {
  document.title = 'Sign in · Myriarch';
  morph(main, h('main', {},
    h('h1', {}, 'Sign in'),
    h('form', { class: 'signin', 'data-action': 'signin' },
      h('p', {}, 'The page reads the Myriarch API with your API token. It is kept in this tab only, until the tab closes.'),
      h('label', { for: 'token' }, 'API token'),
      h('input', { id: 'token', name: 'token', type: 'password', autocomplete: 'off', spellcheck: 'false', required: true }),
      h('button', { type: 'submit' }, 'Sign in'),
      h('p', { id: 'signin-msg', 'data-msg': '' }))));
  const form = main.querySelector('form');
  say(form, why || '', Boolean(why));
  form.querySelector('input').focus();
}

const saved = storage()?.getItem(TOKEN_KEY);
if (saved) {
  start(saved).catch((e) => signOut(e instanceof Problem ? 'Sign in again: ' + e.text() : String(e)));
} else {
  showSignIn('');
}
