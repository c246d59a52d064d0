// What the Evals page shows of a stored `sea eval` run (GET /v1/evals/<id>) and of a
// comparison (GET /v1/evals/<id>/compare): pass rates as text, each check with what it
// expected (from the run's case_specs) and what came (from the attempt's observation), the
// cases as rows to filter. Pure, for `node --test`.

/** A rate (0..1) as a percentage with one decimal, or an em dash. */
export function percent(rate) {
  if (rate === null || rate === undefined || Number.isNaN(rate)) return '—';
  return `${(rate * 100).toFixed(1).replace(/\.0$/, '')}%`;
}

/** Seconds, to the millisecond. */
export function secondsText(value) {
  return `${(value || 0).toFixed(3)} s`;
}

/** The expectation a check judged, from the case's `expect` (`reply.contains` →
 * `expect.reply.contains`; `route` → `route` or `route_any`); undefined if unknown. */
export function expectedOf(expect, name) {
  if (!expect) return undefined;
  if (name.startsWith('reply.')) return expect.reply ? expect.reply[name.slice(6)] : undefined;
  if (name === 'route') return expect.route ?? expect.route_any;
  return expect[name];
}

const GOT = {
  route: (seen) => seen.route ?? '(no route)',
  status: (seen) => seen.status,
  nodes_ran: (seen) => seen.nodes,
  nodes_not_ran: (seen) => seen.nodes,
  tool_calls: (seen) => seen.tools,
  tools_not_called: (seen) => seen.tools,
  plan: (seen) => (seen.plan_proposed ? 'a plan was proposed' : 'no plan'),
};

/** What the attempt showed that the check `name` looked at (the reply for `reply.*` and
 * `rubric`); undefined when the run did not keep it (memos: see the check's detail). */
export function gotOf(observed, name) {
  if (!observed) return undefined;
  if (name.startsWith('reply.') || name === 'rubric') return observed.reply;
  const pick = GOT[name];
  return pick ? pick(observed) : undefined;
}

/** A check's outcome as a word: pass, fail or not judged. */
export function verdict(passed) {
  if (passed === true) return 'pass';
  if (passed === false) return 'fail';
  return 'not judged';
}

/** Each case of each model of a run, as rows sorted by model then case: {model, key,
 * runs, passed, rate, failed, latency, tokensIn, tokensOut, cost, failures, attempts,
 * spec}. A case failed unless every repeat passed. */
export function caseRows(run) {
  const rows = [];
  const specs = run.case_specs || {};
  for (const [model, summary] of Object.entries(run.models || {})) {
    for (const [key, entry] of Object.entries(summary.cases || {})) {
      rows.push({
        model, key, runs: entry.runs, passed: entry.passed, rate: entry.pass_rate,
        failed: entry.passed < entry.runs, latency: entry.latency_s?.mean ?? 0,
        tokensIn: entry.tokens_in, tokensOut: entry.tokens_out, cost: entry.cost,
        failures: entry.failures || [], attempts: entry.attempts || [], spec: specs[key] || null,
      });
    }
  }
  return rows.sort((a, b) => (a.model === b.model ? a.key.localeCompare(b.key) : a.model.localeCompare(b.model)));
}

/** The rows to show: failed ones only if asked, and those whose case or model holds the
 * text (case-insensitive). */
export function filterRows(rows, { failedOnly = false, text = '' } = {}) {
  const needle = text.trim().toLowerCase();
  return rows.filter((row) => (!failedOnly || row.failed)
    && (!needle || row.key.toLowerCase().includes(needle) || row.model.toLowerCase().includes(needle)));
}

/** A comparison's cases as one list, regressed first, then improved, then unchanged:
 * {model, case, before, after, change}. */
export function comparedRows(comparison) {
  const rows = [];
  for (const change of ['regressed', 'improved', 'unchanged']) {
    for (const item of comparison[change] || []) rows.push({ ...item, change });
  }
  return rows;
}

/** The run listed just before `id` (the next older one, the natural baseline), or null. */
export function previousRun(items, id) {
  const runs = items.filter((item) => !item.error);
  const at = runs.findIndex((item) => item.id === id);
  return at >= 0 && at + 1 < runs.length ? runs[at + 1].id : null;
}
