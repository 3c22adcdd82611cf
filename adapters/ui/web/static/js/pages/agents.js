// The inventory: every agent the gateway has heard from.
import { badge, h, idHints, nameWithHint, shortRef, timeEl } from '../dom.js';
import { filterForm, fleetFilter, fleetNames, listHandlers, moreButton, query } from './lists.js';

const FILTERS = ['fleet', 'online', 'configStatus'];
const PAGE = 100;

async function load(app) {
  const [list, fleets] = await Promise.all([app.api.page('agents', query(app, FILTERS), app.ui.limit || PAGE), fleetNames(app)]);
  return { list, fleets };
}

function view(app) {
  const { list, fleets } = app.data;
  return h('div', {},
    h('h1', {}, 'Agents'),
    filterForm('Filter the agents', [
      fleetFilter(fleets),
      { name: 'online', label: 'Connection', options: [['', 'online or offline'], ['true', 'online'], ['false', 'offline']] },
      { name: 'configStatus', label: 'Configuration', options: [['', 'any state'], ['FAILED,drifted', 'failed or drifted'],
        ['APPLYING', 'applying'], ['APPLIED', 'applied']] },
    ], query(app, FILTERS)),
    list.items.length === 0 ? h('p', {}, 'No agent matches.') : h('table', { class: 'list agents' },
      h('caption', { class: 'visually-hidden' }, 'Agents'),
      h('thead', {}, h('tr', {}, ['Agent', 'Fleet', 'Region', 'Zone', 'Version', 'Configuration', 'Health', 'Connection', 'Last seen']
        .map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, rows(list.items))),
    moreButton(list));
}

// LINK is the attribute with which a myriarch-updater names its collector.
const LINK = 'myriarch.updater.collector';

// links pairs the page's collectors and the updaters that name them: the
// updater's row says whom it serves, the collector's row who updates it
// (when both are on the page; the agent's own view, myrctl agents get,
// always says).
function links(items) {
  const byID = new Map(items.map((a) => [a.id, a]));
  const updaterOf = new Map();
  for (const a of items) {
    const c = (a.attributes || {})[LINK];
    if (c) updaterOf.set(c.toLowerCase(), a);
  }
  return { byID, updaterOf };
}

function linkLine(a, { byID, updaterOf }) {
  const c = (a.attributes || {})[LINK];
  if (c) {
    const col = byID.get(c.toLowerCase());
    return h('div', { class: 'link' }, 'updater of ', col ? col.displayName : c);
  }
  const u = updaterOf.get(a.id);
  return u ? h('div', { class: 'link' }, 'updated by ', u.displayName) : '';
}

// REGION and ZONE are the attributes that place an agent, the defaults of
// a policy's topology (docs/policy.md); a policy may read others.
const REGION = 'cloud.region';
const ZONE = 'cloud.availability_zone';

// rows are the agents, those with the same name told apart by their ids.
function rows(items) {
  const l = links(items);
  const hints = idHints(items, (a) => a.displayName, (a) => a.id);
  return items.map((a) => row(a, l, hints.get(a.id)));
}

function row(a, l, hint) {
  const attrs = a.attributes || {};
  return h('tr', { 'data-key': a.id, 'data-agent': a.id },
    h('th', { scope: 'row', title: a.id }, nameWithHint(a.displayName, hint), linkLine(a, l)),
    h('td', {}, a.fleet ? h('a', { href: '#/fleets/' + encodeURIComponent(a.fleet) }, a.fleet) : (a.assignmentError ? 'none: ' + a.assignmentError : 'none')),
    h('td', { class: 'region' }, attrs[REGION] || '–'),
    h('td', { class: 'zone' }, attrs[ZONE] || '–'),
    h('td', {}, a.version || '?', a.targetVersion && a.targetVersion !== a.version ? ` → ${a.targetVersion}` : ''),
    h('td', {}, configText(a.config)),
    h('td', {}, healthText(a.health)),
    h('td', {}, a.gone ? badge('gone') : badge(a.online ? 'online' : 'offline')),
    h('td', {}, timeEl(a.lastSeen)));
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
  if (hl.reported === false) return 'no health reports';
  const parts = [hl.healthy ? 'healthy' : 'unhealthy'];
  if (hl.status && hl.status !== 'StatusOK') parts.push(hl.status);
  if (hl.lastError) parts.push(hl.lastError);
  if (hl.components && hl.components.unhealthyCount > 0) parts.push(`${hl.components.unhealthyCount} of ${hl.components.total} components unhealthy`);
  return parts.join(' · ');
}

export default { title: () => 'Agents', load, view, ...listHandlers('agents', FILTERS, PAGE) };
