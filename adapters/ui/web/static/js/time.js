// Time arithmetic of the page, pure: every function takes `now` (ms since
// the epoch) rather than reading the clock, as the engine does.

// DEFAULT_HEALTH_WAIT_SECONDS is the rule for a snapshot without a value,
// or 0 (docs/rollouts.md, "The health wait").
export const DEFAULT_HEALTH_WAIT_SECONDS = 60;

// evaluated reports whether the engine evaluates a rollout in this status,
// so that the health waits of its targets count down (also while paused:
// the engine does not stop). It does not for failed, rolling_back and the
// final statuses, and the page then shows no remaining time.
export function evaluated(status) {
  return ['pending', 'running', 'waiting_approval', 'paused', 'frozen'].includes(status);
}

// healthWaitSeconds is the snapshot's healthWaitSeconds, else its
// healthWait (a Go duration such as 5m0s), else 60.
export function healthWaitSeconds(policy) {
  if (policy && policy.healthWaitSeconds > 0) return policy.healthWaitSeconds;
  const d = policy ? parseGoDuration(policy.healthWait) : 0;
  return d > 0 ? d : DEFAULT_HEALTH_WAIT_SECONDS;
}

// healthWaitEnd is when a verifying target's health wait ends, in ms:
// verifiedAt + healthWait. With verifiedAt 10:01:30 and healthWait 5m it
// is 10:06:30. null for any other target, or one without verifiedAt.
export function healthWaitEnd(target, policy) {
  if (target.status !== 'verifying' || !target.verifiedAt) return null;
  const at = Date.parse(target.verifiedAt);
  if (Number.isNaN(at)) return null;
  return at + healthWaitSeconds(policy) * 1000;
}

// remainingSeconds is the time left until end, rounded up to whole
// seconds, so that 0 means over: 4.2 s left shows 5s, 0.3 s shows 1s,
// and only the end itself and after it show 0.
export function remainingSeconds(endMs, now) {
  return Math.max(0, Math.ceil((endMs - now) / 1000));
}

// countdownText is "4m12s left", or "finishing…" at 0: the wait is over
// and the page waits for the engine to evaluate the target.
export function countdownText(seconds) {
  return seconds > 0 ? shortDuration(seconds) + ' left' : 'finishing…';
}

// healthWaits counts down every verifying target of a rollout the engine
// evaluates: by agent id, { wave, end, seconds }. Empty otherwise.
export function healthWaits(rollout, targets, now) {
  const out = new Map();
  if (!rollout || !evaluated(rollout.status)) return out;
  for (const t of targets || []) {
    const end = healthWaitEnd(t, rollout.policy);
    if (end === null) continue;
    out.set(t.agentId, { wave: t.wave, end, seconds: remainingSeconds(end, now) });
  }
  return out;
}

// lastWait is the wait of a wave that ends last, or null.
export function lastWait(waits, wave) {
  let last = null;
  for (const w of waits.values()) {
    if (w.wave === wave && (last === null || w.end > last.end)) last = w;
  }
  return last;
}

// shortDuration writes whole seconds as Go writes a duration, without the
// zero tails: 45s, 5m, 4m12s, 2h, 1h30m, 1h0m5s.
export function shortDuration(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  const hours = Math.floor(s / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  const secs = s % 60;
  if (hours > 0) return `${hours}h` + (minutes || secs ? `${minutes}m` : '') + (secs ? `${secs}s` : '');
  if (minutes > 0) return `${minutes}m` + (secs ? `${secs}s` : '');
  return `${secs}s`;
}

// roughDuration counts hours in hours once there are 10 of them: 71h,
// 1h30m, 12m30s, 45s. It is truncated, never promising more than is left.
export function roughDuration(seconds) {
  let s = Math.max(0, Math.floor(seconds));
  if (s >= 36000) s -= s % 3600;
  else if (s >= 3600) s -= s % 60;
  return shortDuration(s);
}

// until is "in 12m" or "12m ago" from now to an instant in ms.
export function until(ms, now) {
  const d = Math.round((ms - now) / 1000);
  return d >= 0 ? 'in ' + roughDuration(d) : roughDuration(-d) + ' ago';
}

// parseGoDuration reads a Go duration string (5m0s, 1h30m, 1.5s, 300ms) in
// seconds; NaN when it is none.
export function parseGoDuration(s) {
  if (typeof s !== 'string' || s === '') return NaN;
  const units = { ns: 1e-9, us: 1e-6, 'µs': 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let pos = 0;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    total += parseFloat(m[1]) * units[m[2]];
    pos = re.lastIndex;
  }
  return pos === s.length && pos > 0 ? total : (s === '0' ? 0 : NaN);
}

// describeWhen is a moment of a prediction in words. A When is either
// {at: RFC 3339} or {afterApprovalOf: wave index, offsetSeconds: n}:
// "12m after wave 1 is approved", "when wave 1 is approved".
export function describeWhen(when, now, format) {
  if (!when) return '';
  if (when.at) {
    const ms = Date.parse(when.at);
    if (Number.isNaN(ms)) return when.at;
    return `${format(new Date(ms))} (${until(ms, now)})`;
  }
  if (Number.isInteger(when.afterApprovalOf)) {
    const off = when.offsetSeconds > 0 ? shortDuration(when.offsetSeconds) + ' after' : 'when';
    return `${off} wave ${when.afterApprovalOf} is approved`;
  }
  return '';
}
