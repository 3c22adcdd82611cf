// What the list pages (rollouts, agents) share: filters kept in the
// route's query (#/rollouts?fleet=edge&kind=config), so that a filtered
// list can be linked and reloaded, and a "Show more" that reads further.
import { h } from '../dom.js';

// query is the route's value of each filter ('' when unset).
export function query(app, names) {
  return Object.fromEntries(names.map((n) => [n, app.route.query.get(n) || '']));
}

// fleetNames are the fleets of the applied revision, read once per page.
export async function fleetNames(app) {
  if (!app.ui.fleets) {
    const p = await app.api.page('fleets', {}, 500);
    app.ui.fleets = p.items.map((f) => f.name);
  }
  return app.ui.fleets;
}

// filterForm is a labelled select per filter; choosing a value applies
// it at once, and the button applies them all (without a pointer too).
// A filter is {name, label, options: [[value, text], ...]}.
export function filterForm(title, filters, current) {
  return h('form', { class: 'filters', 'aria-label': title, 'data-action': 'filter' },
    filters.map((f) => [
      h('label', { for: 'filter-' + f.name }, f.label),
      h('select', { id: 'filter-' + f.name, name: f.name, 'data-change': 'filter' },
        f.options.map(([value, text]) => h('option', { value, selected: value === current[f.name] }, text))),
    ]),
    h('button', { type: 'submit' }, 'Filter'));
}

// fleetFilter offers every fleet.
export function fleetFilter(fleets) {
  return { name: 'fleet', label: 'Fleet', options: [['', 'any fleet'], ...fleets.map((n) => [n, n])] };
}

// moreButton reads further while the API has more.
export function moreButton(list) {
  return list.more ? h('p', {}, h('button', { type: 'button', 'data-action': 'more' }, 'Show more')) : null;
}

// listHandlers are the actions and changes of a list page at `path` with
// filters `names`, `step` items more per "Show more" (at most 500).
export function listHandlers(path, names, step) {
  const apply = (app, form) => {
    const q = new URLSearchParams();
    for (const n of names) {
      const v = form.elements[n].value;
      if (v) q.set(n, v);
    }
    app.ui.limit = step;
    const s = q.toString();
    app.go(`#/${path}` + (s ? '?' + s : ''));
  };
  return {
    actions: {
      filter(app, { form }) {
        apply(app, form);
        return { local: true, keep: true };
      },
      more(app) {
        app.ui.limit = Math.min((app.ui.limit || step) + step, 500);
        app.refresh();
        return { local: true };
      },
    },
    changes: { filter: (app, el) => apply(app, el.form) },
  };
}
