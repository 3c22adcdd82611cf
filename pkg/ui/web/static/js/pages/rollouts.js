// The rollouts, newest first, filtered by fleet, kind and status.
import { seg } from '../api.js';
import { badge, h, shortRef, timeEl } from '../dom.js';

const STATUSES = ['pending', 'running', 'waiting_approval', 'paused', 'frozen', 'completed', 'failed', 'aborted',
  'rolling_back', 'rolled_back', 'superseded'];
// ACTIVE are the statuses that are not final (failed waits for a person).
const ACTIVE = 'pending,running,waiting_approval,paused,frozen,failed,rolling_back';
const PAGE = 50;

function filters(app) {
  const q = app.route.query;
  return { fleet: q.get('fleet') || '', kind: q.get('kind') || '', status: q.get('status') || '' };
}

async function load(app) {
  const f = filters(app);
  const want = app.ui.limit || PAGE;
  const [list, fleets] = await Promise.all([
    app.api.page('rollouts', { fleet: f.fleet, kind: f.kind, status: f.status === 'active' ? ACTIVE : f.status }, want),
    app.ui.fleets ? Promise.resolve(app.ui.fleets) : app.api.page('fleets', {}, 500).then((p) => p.items.map((x) => x.name)),
  ]);
  app.ui.fleets = fleets;
  return { list, fleets };
}

function option(value, label, current) {
  return h('option', { value, selected: value === current }, label);
}

function view(app) {
  const f = filters(app);
  const { list, fleets } = app.data;
  return h('div', {},
    h('h1', {}, 'Rollouts'),
    h('form', { class: 'filters', 'aria-label': 'Filter the rollouts', 'data-action': 'filter' },
      h('label', { for: 'f-fleet' }, 'Fleet'),
      h('select', { id: 'f-fleet', name: 'fleet', 'data-change': 'filter' },
        option('', 'any fleet', f.fleet), fleets.map((n) => option(n, n, f.fleet))),
      h('label', { for: 'f-kind' }, 'Kind'),
      h('select', { id: 'f-kind', name: 'kind', 'data-change': 'filter' },
        option('', 'any kind', f.kind), option('config', 'configuration', f.kind), option('version', 'version', f.kind)),
      h('label', { for: 'f-status' }, 'Status'),
      h('select', { id: 'f-status', name: 'status', 'data-change': 'filter' },
        option('', 'any status', f.status), option('active', 'not final (active or failed)', f.status),
        STATUSES.map((s) => option(s, s.replaceAll('_', ' '), f.status))),
      h('button', { type: 'submit' }, 'Filter')),
    list.items.length === 0 ? h('p', {}, 'No rollout matches.') : h('table', { class: 'list' },
      h('caption', { class: 'visually-hidden' }, 'Rollouts, newest first'),
      h('thead', {}, h('tr', {}, ['Rollout', 'Fleet', 'Kind', 'Status', 'Progress', 'To', 'Origin', 'Created'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, list.items.map((r) => h('tr', { 'data-key': r.id },
        h('th', { scope: 'row' }, h('a', { href: '#/rollouts/' + seg(r.id) }, r.id)),
        h('td', {}, h('a', { href: '#/fleets/' + seg(r.fleet) }, r.fleet)),
        h('td', {}, r.kind),
        h('td', {}, badge(r.status), r.statusReason ? h('div', { class: 'reason small' }, r.statusReason) : null),
        h('td', {}, progress(r)),
        h('td', {}, h('code', { title: r.toRef }, shortRef(r.toRef))),
        h('td', {}, r.origin),
        h('td', {}, r.createdBy ? [r.createdBy, h('br'), timeEl(r.createdAt)] : timeEl(r.createdAt)))))),
    list.more ? h('p', {}, h('button', { type: 'button', 'data-action': 'more' }, 'Show more')) : null);
}

// progress is the stages passed of all (2/4) for a rollout in stages, else
// the waves that are over of all.
function progress(r) {
  if (r.progress) return `stages ${r.progress}`;
  const waves = r.waves || [];
  const over = waves.filter((w) => ['completed', 'skipped', 'failed'].includes(w.status)).length;
  return `waves ${over}/${waves.length}`;
}

function applyFilters(app, form) {
  const q = new URLSearchParams();
  for (const name of ['fleet', 'kind', 'status']) {
    const v = form.elements[name].value;
    if (v) q.set(name, v);
  }
  const s = q.toString();
  app.go('#/rollouts' + (s ? '?' + s : ''));
}

const actions = {
  filter(app, { form }) {
    app.ui.limit = PAGE;
    applyFilters(app, form);
    return { local: true, keep: true };
  },
  more(app) {
    app.ui.limit = Math.min((app.ui.limit || PAGE) + PAGE, 500);
    app.refresh();
    return { local: true };
  },
};

const changes = {
  filter(app, el) {
    app.ui.limit = PAGE;
    applyFilters(app, el.form);
  },
};

export default { title: () => 'Rollouts', load, view, actions, changes };
