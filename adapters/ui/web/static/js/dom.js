// Building and updating the page without innerHTML: every value from the
// API becomes a text node, never markup.
//
// Pages render the whole picture again on every poll and every second;
// morph then changes only what differs in the live DOM, so that what the
// user holds survives a refresh: the focused control, a half-typed reason,
// an open <details>. Event handlers are not attached to rendered elements
// (morph would keep the old ones): main.js listens once, on the page, and
// dispatches by data-action.

// h is an element with attributes and children. An attribute whose value is
// true is present without a value; false, null and undefined leave it out.
// Children may be nodes, strings, numbers, arrays of them, or nothing.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === false || value === null || value === undefined) continue;
    el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false || c === '') continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

// morph makes the children of the live element `live` those of `next` (a
// detached element), reusing the live nodes that match: same kind and the
// same data-key, or, without a key, the same place among the unkeyed ones.
export function morph(live, next) {
  morphChildren(live, next);
}

function keyOf(n) {
  return n.nodeType === Node.ELEMENT_NODE ? n.getAttribute('data-key') : null;
}

function alike(a, b) {
  return a.nodeType === b.nodeType && a.nodeName === b.nodeName && keyOf(a) === keyOf(b);
}

function morphChildren(live, next) {
  const keyed = new Map();
  for (const c of live.childNodes) {
    const k = keyOf(c);
    if (k !== null) keyed.set(k, c);
  }
  let cur = live.firstChild;
  let wanted = null; // the keys of next's children so far, made only when one has a key
  for (const want of [...next.childNodes]) {
    const k = keyOf(want);
    let match = null;
    if (k !== null) {
      // Siblings that share a key match one live node between them, so the
      // other is made anew on every redraw and loses its focus. That is a
      // bug in the page, reported as an error while the page still shows.
      wanted ||= new Set();
      if (wanted.has(k)) reportError(new Error(`two siblings share data-key "${k}": one of them is replaced on every redraw`));
      wanted.add(k);
      match = keyed.get(k) || null;
      if (match && !alike(match, want)) match = null;
      keyed.delete(k);
    } else {
      for (let c = cur; c; c = c.nextSibling) {
        if (keyOf(c) !== null) continue;
        if (alike(c, want)) match = c;
        break;
      }
    }
    if (!match) {
      live.insertBefore(want, cur);
      continue;
    }
    if (match === cur) cur = cur.nextSibling;
    else live.insertBefore(match, cur);
    patch(match, want);
  }
  while (cur) {
    const after = cur.nextSibling;
    live.removeChild(cur);
    cur = after;
  }
}

function patch(live, want) {
  if (live.nodeType !== Node.ELEMENT_NODE) {
    if (live.nodeValue !== want.nodeValue) live.nodeValue = want.nodeValue;
    return;
  }
  for (const { name, value } of want.attributes) {
    if (live.getAttribute(name) !== value) live.setAttribute(name, value);
  }
  for (const { name } of [...live.attributes]) {
    if (want.hasAttribute(name)) continue;
    if (name === 'open' && live.nodeName === 'DETAILS') continue; // the user opened it
    live.removeAttribute(name);
  }
  morphChildren(live, want);
}

// timeEl is a <time> with the instant in its datetime attribute and title,
// shown in the browser's locale and zone.
export function timeEl(iso) {
  if (!iso) return null;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return h('time', { datetime: iso, title: iso }, formatInstant(d));
}

const instantFormat = new Intl.DateTimeFormat(undefined, {
  year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit',
});

export function formatInstant(d) {
  return instantFormat.format(d);
}

// badge is a status in words, styled by its value (the colour is never the
// only cue: the word is there).
export function badge(status) {
  return h('span', { class: 'badge s-' + status }, status.replaceAll('_', ' '));
}

// facts is a <dl> of the pairs whose value is not empty.
export function facts(pairs, cls = 'facts') {
  const items = [];
  for (const [term, value] of pairs) {
    if (value === null || value === undefined || value === '' || (Array.isArray(value) && value.length === 0)) continue;
    items.push(h('div', {}, h('dt', {}, term), h('dd', {}, value)));
  }
  return h('dl', { class: cls }, items);
}

// shortRef is a configuration hash cut to 12 characters (a version stays).
export function shortRef(ref) {
  return ref && ref.length > 16 ? ref.slice(0, 12) : ref;
}

// alertText is the answer to an action beside its controls: a refusal or
// failure in the API's words (role=alert), or what was done, with a link
// to what it made ({href, label}).
// It is placed outside the controls, which the answer may remove.
export function alertText(msg, key) {
  if (!msg) return null;
  return h('p', { class: msg.ok ? 'ok' : 'error', role: msg.ok ? 'status' : 'alert', 'data-msg-for': key }, msg.text,
    msg.link ? [' ', h('a', { href: msg.link.href }, msg.link.label)] : null);
}

// SHORT_ID is the fewest characters of an id shown to tell agents apart.
const SHORT_ID = 8;

// idHints tells apart the items whose names collide (two collectors on
// hosts called vm): for each of them the shortest prefix of its id, at
// least SHORT_ID characters, that no other item of the same name shares
// ("0192f1c4"; ids drawn at the same moment share a longer one). Items
// whose name is their own get none. It returns a Map id → prefix.
export function idHints(items, nameOf, idOf) {
  const byName = new Map();
  for (const it of items) {
    const n = nameOf(it);
    if (!byName.has(n)) byName.set(n, new Set());
    byName.get(n).add(idOf(it));
  }
  const out = new Map();
  for (const ids of byName.values()) {
    if (ids.size < 2) continue;
    for (const id of ids) {
      let n = SHORT_ID;
      for (const other of ids) {
        if (other !== id) n = Math.max(n, commonPrefix(id, other) + 1);
      }
      out.set(id, id.length > n ? id.slice(0, n) + '…' : id);
    }
  }
  return out;
}

function commonPrefix(a, b) {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

// nameWithHint is an agent's name and, when it collides with another's,
// the prefix of its id that tells it apart, in a span of its own.
export function nameWithHint(name, hint) {
  return hint ? [name, ' ', h('span', { class: 'id-hint' }, hint)] : name;
}
