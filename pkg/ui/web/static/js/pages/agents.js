// The inventory: every agent the gateway has heard from.
import { badge, h, shortRef, timeEl } from '../dom.js';

const PAGE = 100;

function filters(app) {
  const q = app.route.query;
  return { fleet: q.get('fleet') || '', online: q.get('online') || '', configStatus: q.get('configStatus') || '' };
}

async function load(app) {
  const f = filters(app);
  const [list, fleets] = await Promise.all([
    app.api.page('agents', f, app.ui.limit || PAGE),
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
    h('h1', {}, 'Agents'),
    h('form', { class: 'filters', 'aria-label': 'Filter the agents', 'data-action': 'filter' },
      h('label', { for: 'a-fleet' }, 'Fleet'),
      h('select', { id: 'a-fleet', name: 'fleet', 'data-change': 'filter' },
        option('', 'any fleet', f.fleet), fleets.map((n) => option(n, n, f.fleet))),
      h('label', { for: 'a-online' }, 'Connection'),
      h('select', { id: 'a-online', name: 'online', 'data-change': 'filter' },
        option('', 'online or offline', f.online), option('true', 'online', f.online), option('false', 'offline', f.online)),
      h('label', { for: 'a-config' }, 'Configuration'),
      h('select', { id: 'a-config', name: 'configStatus', 'data-change': 'filter' },
        option('', 'any state', f.configStatus), option('FAILED,drifted', 'failed or drifted', f.configStatus),
        option('APPLYING', 'applying', f.configStatus), option('APPLIED', 'applied', f.configStatus)),
      h('button', { type: 'submit' }, 'Filter')),
    list.items.length === 0 ? h('p', {}, 'No agent matches.') : h('table', { class: 'list agents' },
      h('caption', { class: 'visually-hidden' }, 'Agents'),
      h('thead', {}, h('tr', {}, ['Agent', 'Fleet', 'Version', 'Configuration', 'Health', 'Connection', 'Last seen'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, list.items.map((a) => h('tr', { 'data-key': a.id },
        h('th', { scope: 'row', title: a.id }, a.displayName),
        h('td', {}, a.fleet ? h('a', { href: '#/fleets/' + encodeURIComponent(a.fleet) }, a.fleet) : (a.assignmentError ? 'none: ' + a.assignmentError : 'none')),
        h('td', {}, a.version || '?', a.targetVersion && a.targetVersion !== a.version ? ` → ${a.targetVersion}` : ''),
        h('td', {}, configText(a.config)),
        h('td', {}, healthText(a.health)),
        h('td', {}, a.gone ? badge('gone') : badge(a.online ? 'online' : 'offline')),
        h('td', {}, timeEl(a.lastSeen)))))),
    list.more ? h('p', {}, h('button', { type: 'button', 'data-action': 'more' }, 'Show more')) : null);
}

function configText(c) {
  if (!c) return '';
  const parts = [c.status ? c.status.toLowerCase() : 'no report'];
  if (c.drifted) parts.push('drifted');
  if (c.reportedHash) parts.push(shortRef(c.reportedHash));
  if (c.error) parts.push(c.error);
  return parts.join(' · ');
}

function healthText(hl) {
  if (!hl) return '';
  const parts = [hl.healthy ? 'healthy' : 'unhealthy'];
  if (hl.status && hl.status !== 'StatusOK') parts.push(hl.status);
  if (hl.lastError) parts.push(hl.lastError);
  if (hl.components && hl.components.unhealthyCount > 0) parts.push(`${hl.components.unhealthyCount} of ${hl.components.total} components unhealthy`);
  return parts.join(' · ');
}

function applyFilters(app, form) {
  const q = new URLSearchParams();
  for (const name of ['fleet', 'online', 'configStatus']) {
    const v = form.elements[name].value;
    if (v) q.set(name, v);
  }
  app.ui.limit = PAGE;
  const s = q.toString();
  app.go('#/agents' + (s ? '?' + s : ''));
}

const actions = {
  filter(app, { form }) {
    applyFilters(app, form);
    return { local: true, keep: true };
  },
  more(app) {
    app.ui.limit = (app.ui.limit || PAGE) + PAGE;
    app.refresh();
    return { local: true };
  },
};

const changes = { filter: (app, el) => applyFilters(app, el.form) };

export default { title: () => 'Agents', load, view, actions, changes };
