// The fleets of the applied revision, by name.
import { seg } from '../api.js';
import { badge, h } from '../dom.js';

async function load(app) {
  return app.api.page('fleets', {}, 500);
}

// targetText is the effective target version and where it comes from.
export function targetText(t) {
  if (!t) return '';
  if (t.source === 'hold') return 'on hold';
  if (t.source === 'none') return 'none';
  return `${t.version} (${t.source === 'ui' ? 'chosen in the UI' : 'from Git'})`;
}

function view(app) {
  const { items } = app.data;
  if (items.length === 0) return h('div', {}, h('h1', {}, 'Fleets'), h('p', {}, 'No revision is applied yet, or it has no fleets.'));
  return h('div', {},
    h('h1', {}, 'Fleets'),
    h('table', { class: 'list' },
      h('caption', { class: 'visually-hidden' }, 'Fleets by name'),
      h('thead', {}, h('tr', {}, ['Fleet', 'Target version', 'Agents', 'On target', 'Executor', 'Active rollouts'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, items.map(fleetRow))));
}

function fleetRow(f) {
  const active = f.activeRollouts || [];
  return h('tr', { 'data-key': f.name },
    h('th', { scope: 'row' }, h('a', { href: '#/fleets/' + seg(f.name) }, f.name)),
    h('td', {}, targetText(f.versionTarget)),
    h('td', {}, `${f.agents.online} online of ${f.agents.total}`),
    h('td', {}, `${f.agents.onTargetVersion} on the version, ${f.agents.onConfigHash} on the configuration`),
    h('td', {}, f.executor),
    h('td', {}, active.length === 0 ? 'none' : h('ul', { class: 'plain' }, active.map((r) => h('li', {},
      h('a', { href: '#/rollouts/' + seg(r.id) }, r.id), ' ', r.kind, ' ', badge(r.status))))));
}

export default { title: () => 'Fleets', load, view };
