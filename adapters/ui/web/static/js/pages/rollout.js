// The rollout page: what myrctl watch shows (cmd/myrctl/frame.go), live —
// the header with the policy source line, the wave cards with their health
// waits and approvals, the stages with bakes and gates and the agents of
// their passes, and the targets with running work first (in a rollout in
// stages with their stage and batch, or only those of one stage); the
// operator actions for those who may.
import { seg } from '../api.js';
import { alertText, badge, facts, formatInstant, h, idHints, nameWithHint, shortRef, timeEl } from '../dom.js';
import { byRunningWork, byWave, countsLine } from '../targets.js';
import { countdownText, describeWhen, evaluated, healthWaits, lastWait, roughDuration, shortDuration } from '../time.js';

const OPERATE = 'rollouts:operate';

// ALLOWED are the statuses in which each action is allowed (core/engine,
// docs/engine.md "Operator actions"): the page offers no action the
// engine would refuse for the status alone.
const ALLOWED = {
  pause: ['pending', 'running', 'waiting_approval', 'frozen'],
  resume: ['paused'],
  approve: ['pending', 'running', 'waiting_approval', 'paused'],
  abort: ['pending', 'running', 'waiting_approval', 'paused', 'frozen', 'failed', 'rolling_back'],
  rollback: ['pending', 'running', 'waiting_approval', 'paused', 'frozen', 'failed'],
  'retry-failed': ['running', 'waiting_approval', 'paused', 'failed'],
  freezeOverride: ['pending', 'running', 'frozen'], // resume with freezeOverride only records the override
};

const allowed = (action, r) => ALLOWED[action].includes(r.status);

// consoleURL is the execution in the Step Functions console, in the region
// of its ARN (arn:aws:states:<region>:<account>:execution:<machine>:<name>).
export function consoleURL(arn) {
  const region = (arn || '').split(':')[3];
  if (!region) return '';
  return `https://${region}.console.aws.amazon.com/states/home?region=${region}#/v2/executions/details/${arn}`;
}

function title(app) {
  return 'Rollout ' + app.route.id;
}

async function load(app) {
  const id = seg(app.route.id);
  const [rollout, targets] = await Promise.all([app.api.get(`rollouts/${id}`), app.api.all(`rollouts/${id}/targets`)]);
  return { rollout, targets };
}

function announce(prev, next) {
  if (!prev || prev.rollout.status === next.rollout.status) return null;
  const r = next.rollout;
  return `Rollout ${r.id} is now ${r.status.replaceAll('_', ' ')}` + (r.statusReason ? `: ${r.statusReason}` : '');
}

function view(app) {
  const { rollout: r, targets } = app.data;
  const now = app.now();
  const waits = healthWaits(r, targets, now);
  return h('div', { class: 'rollout' },
    header(app, r, now),
    app.can(OPERATE) ? actionsBar(app, r) : null,
    waveSection(app, r, waits, now),
    r.stages && r.stages.length ? stageSection(app, r, targets, now) : null,
    targetSection(app, r, targets, waits, now));
}

// --- header ------------------------------------------------------------------

// predictionText is the predicted finish, or why there is none: a paused
// or failed rollout starts no target until a person acts
// (prediction.reason); '' without a prediction.
function predictionText(r, now) {
  const p = r.prediction;
  if (!p) return '';
  if (p.finish) return describeWhen(p.finish, now, formatInstant);
  return p.reason ? 'none: ' + p.reason : '';
}

// windowText says why nothing works now in a rollout whose targets left
// all wait for a maintenance window, and when the first starts by the
// prediction (as myrctl watch does); '' while a target works.
function windowText(r, now) {
  const c = r.targetCounts;
  if (!c || !c.waiting_window || (c.in_progress || 0) + (c.verifying || 0) > 0 || !evaluated(r.status) || r.status === 'paused') return '';
  const why = c.waiting_window === 1 ? '1 target waits for a maintenance window' : `${c.waiting_window} targets wait for a maintenance window`;
  const start = r.prediction && r.prediction.start && r.prediction.start.at ? Date.parse(r.prediction.start.at) : NaN;
  if (start > now) return `Nothing progresses before ${describeWhen(r.prediction.start, now, formatInstant)}: ${why}.`;
  return `Nothing progresses now: ${why}.`;
}

function header(app, r, now) {
  const prediction = predictionText(r, now);
  const stalled = r.prediction && !r.prediction.finish;
  const window = windowText(r, now);
  const link = consoleURL(r.executionArn);
  return h('section', { class: 'head', 'aria-labelledby': 'rollout-title' },
    h('p', { class: 'crumbs' }, h('a', { href: '#/rollouts' }, 'Rollouts'), ' › fleet ',
      h('a', { href: '#/fleets/' + seg(r.fleet) }, r.fleet)),
    h('h1', { id: 'rollout-title' }, 'Rollout ', h('code', {}, r.id)),
    h('p', { class: 'status-line', 'aria-live': 'polite' }, badge(r.status),
      r.statusReason ? h('span', { class: 'reason' }, r.statusReason) : null),
    facts([
      ['Change', [r.kind === 'version' ? 'collector version ' : 'configuration ', h('code', { title: r.toRef }, shortRef(r.toRef))]],
      ['Origin', r.origin],
      ['Created by', createdByText(r)],
      ['Created', timeEl(r.createdAt)],
      ['Reason', r.requestReason],
      ['Executor', r.executor],
      ['Started', timeEl(r.startedAt)],
      ['Finished', timeEl(r.finishedAt)],
      ['Predicted finish', prediction ? h('span', { class: stalled ? 'prediction none' : 'prediction' }, prediction) : null],
      ['Execution', link ? h('a', { href: link, target: '_blank', rel: 'noopener noreferrer' }, 'Step Functions console',
        h('span', { class: 'visually-hidden' }, ' (opens a new tab)')) : null],
    ]),
    window ? h('p', { class: 'window' }, window) : null,
    h('p', { class: 'source' }, r.policy.source),
    r.freezeOverride ? h('p', { class: 'override' }, 'Freezes bypassed by ' + decided(r.freezeOverride)) : null);
}

// createdByText is who created the rollout, with those who applied the
// revision of a GitOps rollout: the rule of no self-approval counts them
// all ("gitops (revision applied by local admin)").
function createdByText(r) {
  const appliers = (r.appliedBy || []).map((d) => d.by);
  if (!appliers.length) return r.createdBy;
  return `${r.createdBy || 'gitops'} (revision applied by ${appliers.join(', ')})`;
}

// creators are those who may not approve the rollout: its creator when
// a person is (not gitops or system) and who applied its revision, each
// with why.
function creators(r) {
  const out = [];
  if (r.createdByActor && r.createdByActor !== 'gitops' && r.createdByActor !== 'system') {
    out.push({ actor: r.createdByActor, name: r.createdBy, why: 'created it' });
  }
  for (const d of r.appliedBy || []) {
    if (!out.some((c) => c.actor === d.byActor)) out.push({ actor: d.byActor, name: d.by, why: 'applied its revision' });
  }
  return out;
}

// whoMayApprove says who may approve a wave: an operator or admin
// (rollouts:operate) who did not create the rollout and has not approved
// the wave yet.
function whoMayApprove(r, w) {
  const not = creators(r).map((c) => `${c.name} (${c.why})`);
  for (const a of w.approvals || []) not.push(`${a.by} (approved already)`);
  return 'Who may approve: an operator or admin' + (not.length ? ' other than ' + not.join(', ') : '') + '.';
}

// decided is "Dana Operator at <time>: the reason".
function decided(d) {
  return `${d.by} at ${formatInstant(new Date(d.at))}` + (d.reason ? `: ${d.reason}` : '');
}

// --- actions -----------------------------------------------------------------

function actionsBar(app, r) {
  const busy = Boolean(app.ui.busy);
  const failed = (r.targetCounts && r.targetCounts.failed) || 0;
  const items = [
    allowed('pause', r) ? h('button', { type: 'button', 'data-action': 'pause', 'data-key': 'pause', disabled: busy }, 'Pause') : null,
    allowed('resume', r) ? resumeForm(app, r, busy) : null,
    allowed('retry-failed', r) && failed > 0
      ? h('button', { type: 'button', 'data-action': 'retry-failed', 'data-key': 'retry-failed', disabled: busy }, `Retry ${failed} failed`) : null,
    allowed('rollback', r) ? confirm('rollback', 'Roll back…', 'Return every started target to where it was.', 'Roll back the rollout', busy) : null,
    allowed('abort', r) ? confirm('abort', 'Abort…', 'Stop the rollout; targets that have not finished are cancelled.', 'Abort the rollout', busy) : null,
  ].filter(Boolean);
  // The answers stay when the controls go: an abort leaves no action, and
  // the freeze override's answer comes here once no stage is frozen.
  const keys = ['pause', 'resume', 'retry-failed', 'rollback', 'abort'];
  if (!(r.stages || []).some((st) => st.status === 'frozen')) keys.push('override');
  const msgs = keys.map((k) => alertText(app.ui.msg[k], k)).filter(Boolean);
  if (!items.length && !msgs.length) return null;
  return h('section', { class: 'actions', 'aria-label': 'Actions' }, items.length ? h('div', { class: 'bar' }, items) : null, msgs);
}

function resumeForm(app, r, busy) {
  const freezes = (r.policy.freezes || []).length > 0 && !r.freezeOverride;
  return h('form', { class: 'inline', 'data-action': 'resume', 'data-key': 'resume' },
    freezes ? h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'freezeOverride' }), ' bypass every freeze') : null,
    h('button', { type: 'submit', disabled: busy }, 'Resume'));
}

// confirm is a destructive action behind a second step: a disclosure that
// says what happens, with the button that does it.
function confirm(action, label, what, button, busy) {
  return h('details', { class: 'confirm', 'data-key': 'confirm-' + action },
    h('summary', {}, label),
    h('div', { class: 'popover' }, h('p', {}, what),
      h('button', { type: 'button', class: 'danger', 'data-action': action, 'data-key': action, disabled: busy }, button)));
}

// overrideForm bypasses every freeze for the rest of the rollout; it is on
// the card of the stage a freeze holds.
function overrideForm(app, busy) {
  return h('form', { class: 'override-form', 'data-action': 'override', 'data-key': 'override' },
    h('p', {}, 'Bypassing the freezes starts this stage now, and no freeze holds a stage of this rollout again.'),
    h('label', { for: 'override-reason' }, 'Reason'),
    h('textarea', { id: 'override-reason', name: 'reason', rows: 2, maxlength: 500 }),
    h('button', { type: 'submit', disabled: busy }, 'Bypass every freeze'));
}

// --- waves -------------------------------------------------------------------

function waveSection(app, r, waits, now) {
  return h('section', { 'aria-labelledby': 'waves-title' },
    h('h2', { id: 'waves-title' }, 'Waves'),
    h('ol', { class: 'cards' }, r.waves.map((w) => waveCard(app, r, w, waits, now))));
}

function waveCard(app, r, w, waits, now) {
  const c = w.counts || {};
  const total = w.total || 0;
  const done = Math.max(total - (c.pending || 0) - (c.waiting_window || 0) - (c.in_progress || 0) - (c.verifying || 0), 0);
  const bad = c.failed || 0; // rolled back targets were taken back on purpose: done, not failed
  const failed = w.status === 'failed';
  // A failed wave's bar is red and says it failed, never a blue "done".
  let text = ` ${done}/${total} done` + (bad ? `, ${bad} failed` : '');
  if (failed) text = ` failed: ${bad} of ${total} failed` + (done > bad ? `, ${done - bad} done` : '');
  return h('li', { class: 'card wave s-' + w.status, 'data-key': 'wave-' + w.index, 'data-wave': w.index },
    h('h3', {}, `Wave ${w.index} · ${w.name}`, ' ', badge(w.status)),
    h('p', { class: 'progress' },
      h('progress', { class: failed ? 'failed' : null, max: Math.max(total, 1), value: failed ? Math.max(total, 1) : done,
        'aria-label': failed ? `wave ${w.index} failed` : `wave ${w.index} done` }),
      text),
    h('p', { class: 'counts' }, countsLine(c)),
    healthWaitLine(w, c, waits),
    approvalBlock(app, r, w, now));
}

// healthWaitLine is the wave card's health wait: how many of its targets
// are in it and when the wait that ends last is over.
function healthWaitLine(w, c, waits) {
  const n = w.inHealthWait ?? c.verifying ?? 0;
  if (!n) return null;
  const last = lastWait(waits, w.index);
  let when = '';
  if (last) when = last.seconds > 0 ? ` · the last ends in ${shortDuration(last.seconds)}` : ' · finishing…';
  return h('p', { class: 'wait' }, `${n} in health wait${when}`);
}

function approvalBlock(app, r, w, now) {
  if (!w.requireApproval && !w.rejected) return null;
  const lines = [];
  const required = Math.max(w.approvalsRequired || 1, 1);
  const approvals = w.approvals || [];
  const waiting = w.status === 'waiting_approval' && !w.approved;
  if (waiting) {
    let line = `Waits for approval: ${approvals.length} of ${required} given`;
    if (w.approvalExpiresAt) {
      const left = (Date.parse(w.approvalExpiresAt) - now) / 1000;
      line += left > 0 ? ` · expires in ${roughDuration(left)}` : ' · expired';
    }
    lines.push(h('p', { class: 'approval' }, line));
    lines.push(h('p', { class: 'who-approves' }, whoMayApprove(r, w)));
  } else if (w.approved) {
    lines.push(h('p', { class: 'approval' }, `Approved (${approvals.length} of ${required})`));
  } else if (w.requireApproval && !w.rejected) {
    lines.push(h('p', { class: 'approval' }, `Needs ${required} approval${required > 1 ? 's' : ''}`));
  }
  if (approvals.length) {
    lines.push(h('ul', { class: 'decisions' }, approvals.map((a) => h('li', {}, 'approved by ' + decided(a)))));
  }
  if (w.rejected) {
    const d = w.rejected;
    const expired = !d.byActor && d.by === 'system';
    lines.push(h('p', { class: 'rejected' }, expired ? `Approval expired at ${formatInstant(new Date(d.at))}` : 'Rejected by ' + decided(d),
      w.status === 'failed' && r.status === 'paused' ? ' · resume asks for its approval again' : ''));
  }
  if (waiting && app.can(OPERATE) && allowed('approve', r)) lines.push(approvalForm(app, r, w));
  // The answer stays when the form goes (the approval released the wave).
  lines.push(alertText(app.ui.msg['approval-' + w.index], 'approval-' + w.index));
  return h('div', { class: 'approvals' }, lines);
}

function approvalForm(app, r, w) {
  const key = 'approval-' + w.index;
  const busy = Boolean(app.ui.busy);
  const own = app.me && creators(r).find((c) => c.actor === app.me.actor);
  const id = `reason-${w.index}`;
  return h('form', { class: 'approval-form', 'data-action': 'approve', 'data-key': key, 'data-wave': w.index },
    own ? h('p', { class: 'hint' }, `You ${own.why === 'created it' ? 'created this rollout' : 'applied the revision that created this rollout'}: another operator must approve it.`) : null,
    h('label', { for: id }, `Reason for wave ${w.index}`),
    h('textarea', { id, name: 'reason', rows: 2, maxlength: 500 }),
    (r.policy.freezes || []).length && !r.freezeOverride
      ? h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'freezeOverride' }), ' also bypass every freeze') : null,
    h('div', { class: 'bar' },
      h('button', { type: 'submit', 'data-action': 'approve', disabled: busy }, `Approve wave ${w.index}`),
      h('button', { type: 'submit', 'data-action': 'reject', class: 'danger', disabled: busy }, `Reject wave ${w.index}`)));
}

// --- stages ------------------------------------------------------------------

// PASS_AGENTS_SHOWN is how many agents a pass names on its stage's card;
// the API lists at most 100, and the targets of the stage are one click
// away.
const PASS_AGENTS_SHOWN = 10;

function stageSection(app, r, targets, now) {
  const fts = Math.max((r.policy.health && r.policy.health.failuresToStop) || 1, 1);
  const hints = idHints(targets, agentName, (t) => t.agentId);
  const names = new Map(targets.map((t) => [t.agentId, agentName(t) + (hints.has(t.agentId) ? ' ' + hints.get(t.agentId) : '')]));
  const staged = new Set(targets.map((t) => t.stage).filter(Boolean));
  return h('section', { 'aria-labelledby': 'stages-title' },
    h('h2', { id: 'stages-title' }, 'Stages', r.progress ? ` ${r.progress} passed` : ''),
    h('ol', { class: 'cards' }, r.stages.map((st) => stageCard(app, r, st, fts, now, names, staged.has(st.name)))));
}

// passLine is a pass with its targets and batches, the regions and zones
// it covers where its name does not say them (a pass that is not split
// reports its agents'), and its first agents.
function passLine(p, names) {
  const parts = [`${p.name}: ${plural(p.targets, 'target')}, batches ${p.batchesDone ?? '?'}/${p.batches} (${p.batchSize} at a time)`];
  if (!p.region && (p.regions || []).length) parts.push(`regions ${p.regions.join(', ')}`);
  if (!p.zone && (p.zones || []).length) parts.push(`zones ${p.zones.join(', ')}`);
  const agents = (p.agents || []).slice(0, PASS_AGENTS_SHOWN).map((id) => names.get(id) || id);
  let list = null;
  if (agents.length) {
    const more = Math.max(p.targets, (p.agents || []).length) - agents.length;
    list = h('span', { class: 'agents' }, 'agents: ' + agents.join(', ') + (more > 0 ? `, … and ${more} more` : ''));
  }
  return h('li', {}, parts.join(' · '), list ? [' · ', list] : null);
}

function stageCard(app, r, st, fts, now, names, hasTargets) {
  let done = 0;
  let total = 0;
  for (const p of st.passes) {
    total += p.batches;
    done += p.batchesDone || 0;
  }
  const lines = [];
  if (st.status === 'baking' && st.bakeUntil) {
    const left = Math.ceil((Date.parse(st.bakeUntil) - now) / 1000);
    lines.push(h('p', { class: 'bake' }, left > 0 ? `Bake ends in ${shortDuration(left)}` : 'Bake over, finishing…'));
  }
  if (st.status === 'frozen' && st.held) lines.push(h('p', { class: 'held' }, 'Held: ' + st.held));
  if (st.status === 'frozen' && !r.freezeOverride && app.can(OPERATE) && allowed('freezeOverride', r)) {
    lines.push(overrideForm(app, Boolean(app.ui.busy)));
  }
  if (st.status === 'frozen') lines.push(alertText(app.ui.msg.override, 'override'));
  if ((st.status === 'baking' || st.status === 'failed') && st.gate) lines.push(...gateLines('Gate', st.gate, fts, st.status === 'baking', now));
  if (st.lastRed && !(st.gate && st.gate.lastRed && (st.status === 'baking' || st.status === 'failed'))) {
    lines.push(h('p', { class: 'red' }, 'Last red: ' + st.lastRed));
  }
  if (st.status === 'running') {
    for (const p of st.passes) {
      if (p.gate && (p.cleared || 0) <= p.gate.batch) lines.push(...gateLines(`Batch gate ${p.name}#${p.gate.batch}`, p.gate, fts, true, now));
    }
  }
  const shown = app.ui.stage === st.name;
  return h('li', { class: 'card stage s-' + st.status, 'data-key': 'stage-' + st.name },
    h('h3', {}, st.name, ' ', badge(st.status)),
    h('p', {}, `wave ${st.wave} · batches ${done}/${total}`),
    h('ul', { class: 'passes' }, st.passes.map((p) => passLine(p, names))),
    lines,
    hasTargets ? h('div', { class: 'bar' }, h('button', { type: 'button', 'data-action': 'stage', 'data-stage': st.name,
      'aria-pressed': shown ? 'true' : 'false' }, 'Targets of this stage')) : null);
}

// gateLines describe a gate as myrctl watch does: its readings, the red
// ones in a row of those that stop the stage, the next reading, the last
// red result, and the red dry-run results, which never stop it.
function gateLines(label, g, failuresToStop, live, now) {
  let head = `${label}: no reading yet`;
  if (g.readings > 0 && g.consecutiveRed > 0) {
    head = `${label}: ${plural(g.readings, 'reading')}, ${g.consecutiveRed} red in a row (stops at ${failuresToStop})`;
  } else if (g.readings > 0) {
    head = `${label}: ${plural(g.readings, 'reading')}, last green`;
  }
  if (live && g.nextAt) {
    const left = (Date.parse(g.nextAt) - now) / 1000;
    head += left > 0 ? ` · next reading in ${roughDuration(left)}` : ' · next reading due';
  }
  const out = [h('p', { class: 'gate' }, head)];
  if (g.lastRed) out.push(h('p', { class: 'red' }, 'Last red: ' + g.lastRed));
  const last = (g.recent || [])[g.recent ? g.recent.length - 1 : 0];
  const dry = ((last && last.results) || []).filter((x) => x.red && x.dryRun).map(resultText);
  for (const d of dry.slice(0, 2)) out.push(h('p', { class: 'dry' }, 'Also red: ' + d));
  if (dry.length > 2) out.push(h('p', { class: 'dry' }, `… and ${dry.length - 2} more dry-run results red`));
  return out;
}

// resultText is "<kind> <name> (<scope>): <detail or error: …>", with
// " [dry run]".
function resultText(x) {
  let s = `${x.kind} ${x.name}`;
  if (x.scope) s += ` (${x.scope})`;
  s += ': ' + (x.error ? 'error: ' + x.error : x.detail);
  return x.dryRun ? s + ' [dry run]' : s;
}

function plural(n, noun) {
  return n === 1 ? `1 ${noun}` : `${n} ${noun}s`;
}

// --- targets -----------------------------------------------------------------

// targetSection lists the targets, or those of the stage the operator
// chose on its card (app.ui.stage); in a rollout in stages each with its
// stage and batch.
function targetSection(app, r, all, waits, now) {
  const wave = Boolean(app.ui.byWave);
  const staged = (r.stages || []).length > 0;
  const stage = staged && app.ui.stage ? app.ui.stage : null;
  const targets = stage ? all.filter((t) => t.stage === stage) : all;
  const groups = wave ? byWave(targets, r.waves) : byRunningWork(targets);
  const version = r.kind === 'version';
  const cols = 5 + (version ? 1 : 0) + (staged ? 1 : 0);
  const hints = idHints(all, agentName, (t) => t.agentId);
  let empty = 'This rollout has no targets.';
  if (stage) empty = 'This stage has no targets.';
  return h('section', { 'aria-labelledby': 'targets-title' },
    h('div', { class: 'section-head' },
      h('h2', { id: 'targets-title' }, stage ? `Targets of stage ${stage} (${targets.length} of ${all.length})` : `Targets (${all.length})`),
      stage ? h('button', { type: 'button', 'data-action': 'stage', 'data-stage': '' }, 'All targets') : null,
      h('button', { type: 'button', 'data-action': 'order', 'aria-pressed': wave ? 'true' : 'false' }, 'Wave order')),
    targets.length === 0 ? h('p', {}, empty) : h('table', { class: 'targets' },
      h('caption', { class: 'visually-hidden' }, (wave ? 'Targets in wave order' : 'Targets, running work first') + (stage ? `, of stage ${stage}` : '')),
      h('thead', {}, h('tr', {},
        h('th', { scope: 'col' }, 'Agent'), h('th', { scope: 'col' }, 'Wave'), h('th', { scope: 'col' }, 'Stage'),
        staged ? h('th', { scope: 'col' }, 'Batch') : null,
        h('th', { scope: 'col' }, 'Status'), h('th', { scope: 'col' }, 'Detail'), version ? h('th', { scope: 'col' }, 'Progress') : null)),
      groups.map((g) => h('tbody', { 'data-key': g.key },
        h('tr', { class: 'group' }, h('th', { scope: 'colgroup', colspan: cols }, `${g.title} (${g.targets.length})`)),
        g.targets.map((t) => targetRow(r, t, waits, now, version, staged, hints.get(t.agentId)))))));
}

// agentName is the name a target's agent is known by.
function agentName(t) {
  return t.displayName || t.agentId;
}

// stageOf is where a target sits: its stage in a rollout in stages, else
// its wave's name, since a wave that is not split by region or zone is one
// stage (the canary of a rollout in stages is a stage of that name).
function stageOf(r, t) {
  if (t.stage) return t.stage;
  const w = (r.waves || []).find((x) => x.index === t.wave);
  return w ? w.name : '';
}

// batchName names a target's batch as logs do: <pass>#<batch>.
function batchName(t) {
  return t.batch === undefined || t.batch === null ? '' : `${t.pass}#${t.batch}`;
}

function targetRow(r, t, waits, now, version, staged, hint) {
  const wait = waits.get(t.agentId);
  const parts = [];
  if (t.status === 'verifying' && wait) {
    parts.push(h('span', { class: 'countdown', 'data-agent': t.agentId }, countdownText(wait.seconds)));
  }
  if (t.status === 'in_progress' && t.startedAt) {
    const for_ = Math.floor((now - Date.parse(t.startedAt)) / 1000);
    if (for_ > 0) parts.push(h('span', {}, 'for ' + shortDuration(for_)));
  }
  if (t.reason) parts.push(h('span', { class: 'reason' }, t.reason + (t.reasonCode ? ` (${t.reasonCode})` : '')));
  if (t.progress && t.progress.error && t.progress.error !== t.reason) parts.push(h('span', { class: 'reason' }, t.progress.error));
  if (t.attempt > 1) parts.push(h('span', {}, `attempt ${t.attempt}`));
  return h('tr', { 'data-key': 't-' + t.agentId, 'data-agent': t.agentId },
    h('th', { scope: 'row', title: t.agentId }, nameWithHint(agentName(t), hint)),
    h('td', {}, String(t.wave)),
    h('td', { class: 'stage' }, stageOf(r, t)),
    staged ? h('td', {}, batchName(t)) : null,
    h('td', {}, badge(t.status)),
    h('td', { class: 'detail' }, interleave(parts, ' · ')),
    version ? h('td', {}, t.progress ? steps(t.progress, wait) : null) : null);
}

const STEP_MARK = { done: '✓', running: '▸', failed: '✗', skipped: '–', pending: '·' };

// steps are the version progress of a target: each step with its state,
// the download percent while downloading, the health wait's countdown.
function steps(p, wait) {
  return h('ol', { class: 'steps', 'aria-label': `progress: ${p.phase.replaceAll('_', ' ')}` }, (p.steps || []).map((s) => {
    let text = s.name.replaceAll('_', ' ');
    if (s.name === 'downloading' && p.downloadPercent > 0 && s.status !== 'pending') text += ` ${p.downloadPercent}%`;
    if (s.name === 'health_wait' && s.status === 'running' && wait) text += ` · ${countdownText(wait.seconds)}`;
    return h('li', { class: 'step st-' + s.status, title: s.detail || s.status },
      h('span', { 'aria-hidden': 'true' }, STEP_MARK[s.status] || '·'), ' ', text,
      h('span', { class: 'visually-hidden' }, ` (${s.status})`));
  }));
}

function interleave(parts, sep) {
  const out = [];
  parts.forEach((p, i) => {
    if (i > 0) out.push(sep);
    out.push(p);
  });
  return out;
}

// --- what the actions send -----------------------------------------------------

function reasonOf(data) {
  return String(data.get('reason') || '').trim();
}

function simple(action, done) {
  return async (app) => {
    const r = await app.api.post(`rollouts/${seg(app.route.id)}/actions/${action}`, {});
    return { text: `${done}: the rollout is ${r.status.replaceAll('_', ' ')}.` };
  };
}

async function decide(app, form, data, action) {
  const wave = Number(form.dataset.wave);
  const body = { wave };
  const reason = reasonOf(data);
  if (reason) body.reason = reason;
  if (action === 'approve' && data.get('freezeOverride')) body.freezeOverride = true;
  const r = await app.api.post(`rollouts/${seg(app.route.id)}/actions/${action}`, body);
  const w = r.waves[wave];
  if (action === 'reject') return { text: `Wave ${wave} rejected: the rollout is ${r.status.replaceAll('_', ' ')}.` };
  if (w.approved) return { text: `Wave ${wave} "${w.name}" is approved; it starts when the engine evaluates the rollout.` };
  return { text: `Your approval of wave ${wave} is recorded (${(w.approvals || []).length} of ${Math.max(w.approvalsRequired || 1, 1)}).` };
}

const actions = {
  pause: simple('pause', 'Paused'),
  abort: simple('abort', 'Aborted'),
  rollback: simple('rollback', 'Rollback requested'),
  'retry-failed': simple('retry-failed', 'Failed targets retried'),
  async resume(app, { data }) {
    const body = data.get('freezeOverride') ? { freezeOverride: true } : {};
    const r = await app.api.post(`rollouts/${seg(app.route.id)}/actions/resume`, body);
    return { text: `Resumed: the rollout is ${r.status.replaceAll('_', ' ')}.` };
  },
  async override(app, { data }) {
    const body = { freezeOverride: true };
    const reason = reasonOf(data);
    if (reason) body.reason = reason;
    await app.api.post(`rollouts/${seg(app.route.id)}/actions/resume`, body);
    return { text: 'Every freeze is bypassed for the rest of the rollout.' };
  },
  approve: (app, { form, data }) => decide(app, form, data, 'approve'),
  reject: (app, { form, data }) => decide(app, form, data, 'reject'),
  order(app) {
    app.ui.byWave = !app.ui.byWave;
    return { local: true, keep: true };
  },
  // stage shows the targets of the stage the button names, or all of them
  // again (a second press, or the button without a stage).
  stage(app, { set }) {
    app.ui.stage = set.stage && app.ui.stage !== set.stage ? set.stage : null;
    return { local: true, keep: true };
  },
};

export default { title, load, view, announce, actions, ticks: true };
