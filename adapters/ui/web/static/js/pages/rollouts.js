// The rollouts, newest first, filtered by fleet, kind and status.
import { seg } from '../api.js';
import { badge, h, shortRef, timeEl } from '../dom.js';
import { filterForm, fleetFilter, fleetNames, listHandlers, moreButton, query } from './lists.js';

const STATUSES = ['pending', 'running', 'waiting_approval', 'paused', 'frozen', 'completed', 'failed', 'aborted',
  'rolling_back', 'rolled_back', 'superseded'];
// ACTIVE are the statuses that are not final (failed waits for a person).
const ACTIVE = 'pending,running,waiting_approval,paused,frozen,failed,rolling_back';
const FILTERS = ['fleet', 'kind', 'status'];
const PAGE = 50;

async function load(app) {
  const f = query(app, FILTERS);
  const [list, fleets] = await Promise.all([
    app.api.page('rollouts', { ...f, status: f.status === 'active' ? ACTIVE : f.status }, app.ui.limit || PAGE),
    fleetNames(app),
  ]);
  return { list, fleets };
}

function view(app) {
  const { list, fleets } = app.data;
  return h('div', {},
    h('h1', {}, 'Rollouts'),
    filterForm('Filter the rollouts', [
      fleetFilter(fleets),
      { name: 'kind', label: 'Kind', options: [['', 'any kind'], ['config', 'configuration'], ['version', 'version']] },
      { name: 'status', label: 'Status', options: [['', 'any status'], ['active', 'not final (active or failed)'],
        ...STATUSES.map((s) => [s, s.replaceAll('_', ' ')])] },
    ], query(app, FILTERS)),
    list.items.length === 0 ? h('p', {}, 'No rollout matches.') : h('table', { class: 'list' },
      h('caption', { class: 'visually-hidden' }, 'Rollouts, newest first'),
      h('thead', {}, h('tr', {}, ['Rollout', 'Fleet', 'Kind', 'Status', 'Progress', 'To', 'Origin', 'Created'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, list.items.map(row))),
    moreButton(list));
}

function row(r) {
  return h('tr', { 'data-key': r.id },
    h('th', { scope: 'row' }, h('a', { href: '#/rollouts/' + seg(r.id) }, r.id)),
    h('td', {}, h('a', { href: '#/fleets/' + seg(r.fleet) }, r.fleet)),
    h('td', {}, r.kind),
    h('td', {}, badge(r.status), r.statusReason ? h('div', { class: 'reason small' }, r.statusReason) : null),
    h('td', {}, progress(r)),
    h('td', {}, h('code', { title: r.toRef }, shortRef(r.toRef))),
    h('td', {}, r.origin),
    h('td', {}, r.createdBy ? [r.createdBy, h('br'), timeEl(r.createdAt)] : timeEl(r.createdAt)));
}

// progress is the stages passed of all (2/4) for a rollout in stages, else
// the waves that are over of all.
function progress(r) {
  if (r.progress) return `stages ${r.progress}`;
  const waves = r.waves || [];
  const over = waves.filter((w) => ['completed', 'skipped', 'failed'].includes(w.status)).length;
  return `waves ${over}/${waves.length}`;
}

export default { title: () => 'Rollouts', load, view, ...listHandlers('rollouts', FILTERS, PAGE) };
