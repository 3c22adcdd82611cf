// The order in which the rollout page lists targets (docs/rollouts.md,
// "Live progress of a version target"): running work first, as myrctl watch does.

export const STATUS_ORDER = [
  'in_progress', 'verifying', 'waiting_window', 'failed', 'rolled_back', 'pending', 'succeeded', 'skipped', 'cancelled',
];

export const STATUS_TITLE = {
  in_progress: 'In progress',
  verifying: 'Verifying (health wait)',
  waiting_window: 'Waiting for a maintenance window',
  failed: 'Failed',
  rolled_back: 'Rolled back',
  pending: 'Pending',
  succeeded: 'Succeeded',
  skipped: 'Skipped',
  cancelled: 'Cancelled',
};

// byRunningWork groups the targets by status in the page's order; within
// a group they keep the API's order (wave, then agent id). Empty groups
// are left out; an unknown status comes last.
export function byRunningWork(targets) {
  const groups = new Map(STATUS_ORDER.map((s) => [s, []]));
  for (const t of targets) {
    if (!groups.has(t.status)) groups.set(t.status, []);
    groups.get(t.status).push(t);
  }
  return [...groups].filter(([, ts]) => ts.length > 0)
    .map(([status, ts]) => ({ key: 's-' + status, title: STATUS_TITLE[status] || status, targets: ts }));
}

// byWave groups the targets by wave, in wave order.
export function byWave(targets, waves) {
  const groups = new Map();
  for (const t of [...targets].sort((a, b) => a.wave - b.wave)) {
    if (!groups.has(t.wave)) groups.set(t.wave, []);
    groups.get(t.wave).push(t);
  }
  return [...groups].map(([wave, ts]) => {
    const w = (waves || []).find((x) => x.index === wave);
    return { key: 'w-' + wave, title: `Wave ${wave}` + (w ? ` · ${w.name}` : ''), targets: ts };
  });
}

// countsLine lists the non-zero counts in the page's order:
// "verifying 1 · pending 2 · succeeded 1".
export function countsLine(counts) {
  const parts = STATUS_ORDER.filter((s) => counts && counts[s] > 0).map((s) => `${s.replaceAll('_', ' ')} ${counts[s]}`);
  return parts.length ? parts.join(' · ') : 'no targets';
}
