// A fleet: its effective target version, its agents, the version an
// operator may choose inside the frame Git declares, and a preview of the
// rollout a change would start.
import { Problem, seg } from '../api.js';
import { alertText, badge, facts, formatInstant, h, shortRef, timeEl } from '../dom.js';
import { describeWhen, shortDuration } from '../time.js';
import { targetText } from './fleets.js';

const SET_VERSION = 'fleets:set_version';

// noPlans is set once the API answered the preview with a 404: it has no
// plans, and no fleet page offers the preview again until the page loads.
let noPlans = false;

// NOT_ALLOWED and REASON say in words why a fleet admits no choice, or
// why one version is not selectable (the codes of getFleetVersionOptions).
const NOT_ALLOWED = {
  selection_disabled: 'update.selection is not enabled for this fleet in Git',
  no_executor: 'the fleet has no update executor',
  blocking_rollout: 'a version rollout of the fleet is failed or rolling back',
};
const REASON = {
  current_target: 'the current target',
  outside_frame: 'outside the frame',
  downgrade_not_allowed: 'a downgrade, which the frame does not allow',
  prerelease_not_allowed: 'a prerelease, which the frame does not allow',
  unknown_version: 'not in the release catalogue',
};

function title(app) {
  return 'Fleet ' + app.route.id;
}

async function load(app) {
  const name = seg(app.route.id);
  const [fleet, options] = await Promise.all([app.api.get(`fleets/${name}`), app.api.get(`fleets/${name}/version-options`)]);
  return { fleet, options };
}

function view(app) {
  const { fleet: f, options: o } = app.data;
  const a = f.agents;
  const sel = f.uiSelection;
  return h('div', { class: 'fleet' },
    h('p', { class: 'crumbs' }, h('a', { href: '#/fleets' }, 'Fleets')),
    h('h1', {}, 'Fleet ', h('code', {}, f.name)),
    facts([
      ['Target version', targetText(f.versionTarget)],
      ['Git version', f.gitVersion],
      ['UI selection', sel ? [`${sel.version} by ${sel.selectedBy} at `, timeEl(sel.selectedAt), sel.reason ? `: ${sel.reason}` : '',
        sel.state === 'invalidated' ? ` (invalidated: ${sel.stateReason || ''})` : ''] : null],
      ['Distribution', f.distribution],
      ['Executor', f.executor],
      ['Policies', `configuration ${f.configPolicy}, version ${f.versionPolicy}`],
      ['Configuration', f.configHash ? h('code', { title: f.configHash }, shortRef(f.configHash)) : null],
      ['Revision', h('code', {}, f.commit)],
      ['Agents', `${a.total} (${a.online} online, ${a.onTargetVersion} on the target version, ${a.onConfigHash} on the configuration, ` +
        `${a.drifted} drifted, ${a.gone} gone, ${a.assignmentErrors} with an assignment error)`],
      ['Active rollouts', (f.activeRollouts || []).map((r) => h('span', { class: 'chip' },
        h('a', { href: '#/rollouts/' + seg(r.id) }, r.id), ' ', r.kind, ' ', badge(r.status)))],
    ]),
    h('p', {}, h('a', { href: '#/rollouts?fleet=' + seg(f.name) }, 'Rollouts of this fleet'), ' · ',
      h('a', { href: '#/agents?fleet=' + seg(f.name) }, 'Agents of this fleet')),
    versionSection(app, f, o),
    noPlans ? null : previewSection(app));
}

function versionSection(app, f, o) {
  const may = app.can(SET_VERSION);
  const busy = Boolean(app.ui.busy);
  return h('section', { 'aria-labelledby': 'version-title' },
    h('h2', { id: 'version-title' }, 'Collector version'),
    o.allowed ? null : h('p', {}, 'Operators cannot choose the version now: ' + (NOT_ALLOWED[o.notAllowedCode] || o.notAllowedCode || 'the frame admits none') + '.'),
    f.selection && f.selection.versionRange ? h('p', {}, `The frame in Git: ${f.selection.versionRange}` +
      (f.selection.allowDowngrade ? ', downgrades allowed' : '') + (f.selection.requireReason ? ', a reason is required' : '') + '.') : null,
    h('table', { class: 'list options' },
      h('caption', {}, 'Versions, newest first'),
      h('thead', {}, h('tr', {}, ['Version', 'Selectable', 'Notes'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, o.options.map((v) => h('tr', { 'data-key': v.version },
        h('th', { scope: 'row' }, v.version),
        h('td', {}, v.selectable ? 'yes' : 'no: ' + (REASON[v.reasonCode] || v.reasonCode || '')),
        h('td', {}, [v.isGitTarget ? 'the Git target' : '', v.isSelected ? 'selected in the UI' : '', v.prerelease ? 'prerelease' : '']
          .filter(Boolean).join(', ')))))),
    may && o.allowed ? selectForm(app, f, o, busy) : null,
    alertText(app.ui.msg.select, 'select'),
    may && f.uiSelection ? clearForm(app, busy) : null,
    alertText(app.ui.msg.clear, 'clear'));
}

function selectForm(app, f, o, busy) {
  const choices = o.options.filter((v) => v.selectable);
  return h('form', { class: 'stack', 'data-action': 'select', 'data-key': 'select', 'data-expected': (o.target && o.target.version) || '' },
    h('h3', {}, 'Choose a version'),
    h('label', { for: 'select-version' }, 'Version'),
    h('select', { id: 'select-version', name: 'version' },
      choices.length ? null : h('option', { value: '' }, 'no version is selectable'),
      choices.map((v) => h('option', { value: v.version }, v.version + (v.prerelease ? ' (prerelease)' : '')))),
    h('label', { for: 'select-reason' }, 'Reason' + (f.selection && f.selection.requireReason ? ' (this fleet requires one)' : '')),
    h('textarea', { id: 'select-reason', name: 'reason', rows: 2, maxlength: 500 }),
    h('button', { type: 'submit', disabled: busy }, 'Select version'));
}

function clearForm(app, busy) {
  return h('form', { class: 'stack', 'data-action': 'clear', 'data-key': 'clear' },
    h('h3', {}, 'Take the UI choice back'),
    h('p', {}, 'The version in Git applies again.'),
    h('label', { for: 'clear-reason' }, 'Reason'),
    h('textarea', { id: 'clear-reason', name: 'reason', rows: 2, maxlength: 500 }),
    h('button', { type: 'submit', disabled: busy }, 'Clear the selection'));
}

// --- preview -------------------------------------------------------------------

function previewSection(app) {
  const busy = Boolean(app.ui.busy);
  const p = app.ui.preview;
  return h('section', { class: 'preview', 'aria-labelledby': 'preview-title' },
    h('h2', { id: 'preview-title' }, 'Preview'),
    h('p', {}, 'The rollout a change of this fleet would start now: its waves, when each would start and end, and when it would finish. Nothing is changed.'),
    h('div', { class: 'bar' },
      h('button', { type: 'button', 'data-action': 'preview', 'data-kind': 'config', 'data-key': 'preview-config', disabled: busy }, 'Preview a configuration rollout'),
      h('button', { type: 'button', 'data-action': 'preview', 'data-kind': 'version', 'data-key': 'preview-version', disabled: busy }, 'Preview a version rollout')),
    alertText(app.ui.msg.preview, 'preview'),
    p ? planView(p.kind, p.plan, app.now()) : null);
}

// planView shows a plan of POST /api/v1/plans: its waves with their start
// and end, and the predicted finish. A moment is {at} or {afterApprovalOf,
// offsetSeconds} ("12m after wave 1 is approved").
function planView(kind, plan, now) {
  const when = (w) => describeWhen(w, now, formatInstant);
  const waves = plan.waves || [];
  const finish = plan.prediction && plan.prediction.finish;
  return h('div', { class: 'plan', 'aria-live': 'polite' },
    h('h3', {}, kind === 'version' ? 'A version rollout' : 'A configuration rollout'),
    plan.note || plan.message ? h('p', {}, plan.note || plan.message) : null,
    waves.length ? h('table', { class: 'list' },
      h('caption', { class: 'visually-hidden' }, 'The waves of the previewed rollout'),
      h('thead', {}, h('tr', {}, ['Wave', 'Targets', 'Start', 'End'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, waves.map((w, i) => h('tr', {},
        h('th', { scope: 'row' }, `${w.index ?? i} · ${w.name || ''}`),
        h('td', {}, String(Array.isArray(w.targets) ? w.targets.length : (w.targets ?? w.total ?? ''))),
        h('td', {}, when(w.start)),
        h('td', {}, when(w.end)))))) : null,
    finish ? h('p', { class: 'finish' }, 'Predicted finish: ', h('strong', {}, when(finish))) : null,
    finish ? toleranceLine(plan.prediction, when) : null);
}

// toleranceLine says how far off the finish may be: the pessimistic
// finish, a bound while the assumptions hold, and what it allows for.
function toleranceLine(p, when) {
  const t = p.tolerance;
  if (!t || !p.finishPessimistic) return null;
  return h('p', { class: 'tolerance' }, `At the latest: ${when(p.finishPessimistic)}, up to ${shortDuration(Math.ceil(t.laterSeconds))} later `
    + `(apply times at their 90th percentile and ${Math.round(t.evaluationSeconds * 1000)}ms for each of ${t.evaluations} evaluations); `
    + 'sooner when agents apply faster.');
}

// --- what the actions send -----------------------------------------------------

function reasonOf(data) {
  return String(data.get('reason') || '').trim();
}

const actions = {
  async select(app, { form, data }) {
    const body = { version: String(data.get('version') || ''), expectedTargetVersion: form.dataset.expected || '' };
    const reason = reasonOf(data);
    if (reason) body.reason = reason;
    const res = await app.api.post(`fleets/${seg(app.route.id)}/actions/select-version`, body);
    return { text: res.message, link: res.rolloutId ? { href: '#/rollouts/' + seg(res.rolloutId), label: 'Rollout ' + res.rolloutId } : null };
  },
  async clear(app, { data }) {
    const reason = reasonOf(data);
    const t = await app.api.post(`fleets/${seg(app.route.id)}/actions/clear-version-selection`, reason ? { reason } : {});
    return { text: `The selection is cleared: the target is ${targetText(t)}.` + (t.possibleDowngrade ? ' This may be a downgrade.' : '') };
  },
  async preview(app, { set }) {
    try {
      const plan = await app.api.post('plans', { fleet: app.route.id, kind: set.kind });
      app.ui.preview = { kind: set.kind, plan };
      return { local: true };
    } catch (e) {
      // An API without plans answers 404: the page then offers no preview.
      if (e instanceof Problem && (e.status === 404 || e.status === 405) && e.code !== 'fleet_not_found') {
        noPlans = true;
        return { local: true };
      }
      throw e;
    }
  },
};

export default { title, load, view, actions };
