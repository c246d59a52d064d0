// Evals: `#/evals` — the runs `sea eval` stored (newest first: when, sets, each model's pass
// rate, cases passed and failed); `#/evals/<id>` — one run: per model its pass rate and the
// spread over the repeats, latency, tokens, cost, and every case with each expectation
// passed or failed, what it expected and what came (failed only, or all); and
// `#/evals/<id>/compare?baseline=<id>` — the run against a baseline run, as
// `sea eval --baseline` compares them: regressed in red, improved in green, unchanged.

import { html, useState } from '../vendor/htm-preact-standalone.mjs';
import { caseRows, comparedRows, expectedOf, filterRows, gotOf, percent, previousRun, secondsText, verdict } from '../evals.js';
import { href } from '../route.js';
import { ErrorLine, Fold, Loaded, Time, useLoad } from '../ui.js';

function Models({ models }) {
  return html`${models.map((model) => html`<span class="eval-model"><span class=${`rate ${model.failed ? 'rate-some' : 'rate-all'}`}>${percent(model.pass_rate)}</span> ${model.label}</span>`)}`;
}

function Runs({ api, navigate }) {
  const runs = useLoad(() => api.get('/v1/evals'), []);
  return html`
    <h1>Evals</h1>
    <p class="muted">The runs <code>sea eval</code> stored, newest first. A case passed when every repeat passed.</p>
    <${Loaded} state=${runs}>${(data) => html`
      ${data.note ? html`<p class="empty" role="note">${data.note}</p>` : null}
      ${data.items.length ? html`
        <div class="scroll"><table class="evals"><caption>Runs</caption>
          <thead><tr><th scope="col">Run</th><th scope="col">When</th><th scope="col">Sets</th><th scope="col">Pass rate · model</th>
            <th scope="col">Repeat</th><th scope="col">Cases</th><th scope="col"><span class="sr-only">Compare</span></th></tr></thead>
          <tbody>${data.items.map((item) => item.error ? html`
            <tr data-run=${item.id}><th scope="row">${item.id}</th><td colspan="6" class="eval-error">not a run: ${item.error.message} <code>${item.error.code}</code></td></tr>` : html`
            <tr data-run=${item.id}>
              <th scope="row"><a href=${href('evals', item.id)}>${item.id}</a></th>
              <td><${Time} value=${item.created} /></td>
              <td>${item.sets.join(', ')}</td>
              <td><${Models} models=${item.models} /></td>
              <td>${item.repeat}</td>
              <td><span class="eval-passed">${item.counts.passed} passed</span>${item.counts.failed ? html`, <span class="eval-failed">${item.counts.failed} failed</span>` : ''}</td>
              <td>${previousRun(data.items, item.id) ? html`<a href=${href('evals', item.id, 'compare', { baseline: previousRun(data.items, item.id) })} aria-label=${`Compare ${item.id} with the run before it`}>vs previous</a>` : ''}</td>
            </tr>`)}</tbody></table></div>` : null}`}<//>`;
}

function Check({ check, expect, observed }) {
  const expected = expectedOf(expect, check.name);
  const got = gotOf(observed, check.name);
  return html`<tr class=${`check check-${verdict(check.passed).replace(' ', '-')}`}>
    <th scope="row"><code>${check.name}</code></th>
    <td><span class=${`badge verdict-${verdict(check.passed).replace(' ', '-')}`}>${verdict(check.passed)}</span></td>
    <td>${expected === undefined ? html`<span class="muted">—</span>` : html`<${Fold} value=${expected} label="expected" />`}</td>
    <td>${got === undefined ? html`<span class="muted">—</span>` : html`<${Fold} value=${got} label="got" />`}</td>
    <td>${check.detail}</td></tr>`;
}

function Attempt({ attempt, spec, repeats }) {
  return html`
    <table class="compact checks"><caption>${repeats > 1 ? `Repeat ${attempt.repeat + 1} of ${repeats}` : 'The attempt'} ${attempt.passed ? 'passed' : 'failed'}
      <span class="muted"> · ${secondsText(attempt.latency_s)} · ${attempt.tokens_in} tokens in, ${attempt.tokens_out} out · the pulse ended ${attempt.observed?.status}</span></caption>
      <thead><tr><th scope="col">Expectation</th><th scope="col">Result</th><th scope="col">Expected</th><th scope="col">Got</th><th scope="col">Detail</th></tr></thead>
      <tbody>${attempt.checks.map((check) => html`<${Check} check=${check} expect=${spec?.expect} observed=${attempt.observed} />`)}</tbody></table>
    ${attempt.error ? html`<p class="error">The attempt could not run: ${attempt.error}</p>` : null}`;
}

function Case({ row }) {
  return html`
    <li class=${`card eval-case ${row.failed ? 'case-failed' : 'case-passed'}`} data-case=${row.key} data-model=${row.model}>
      <details open=${row.failed}>
        <summary><strong>${row.key}</strong> <span class=${row.failed ? 'eval-failed' : 'eval-passed'}>${row.passed}/${row.runs} passed</span>
          <span class="muted"> · ${row.model} · ${secondsText(row.latency)} mean · ${Math.round(row.tokensIn)} tokens in, ${Math.round(row.tokensOut)} out</span></summary>
        ${row.spec ? html`<dl class="facts"><dt>Input</dt><dd>${row.spec.turns.map((turn) => html`<${Fold} value=${turn} label="input" /> `)}</dd>
          <dt>Playbook</dt><dd>${row.spec.playbook}</dd>${row.spec.tags.length ? html`<dt>Tags</dt><dd>${row.spec.tags.join(', ')}</dd>` : null}</dl>` : null}
        ${row.attempts.map((attempt) => html`<${Attempt} attempt=${attempt} spec=${row.spec} repeats=${row.runs} />`)}
      </details>
    </li>`;
}

function ModelSummary({ label, model }) {
  const spread = model.spread || {};
  return html`
    <section class="card eval-summary" aria-label=${`Model ${label}`}>
      <h2>${label}</h2>
      <p class="totals"><span>pass rate <strong>${percent(model.pass_rate)}</strong></span>
        ${model.repeat > 1 ? html`<span>repeats <strong>${(spread.repeats || []).map(percent).join(' · ')}</strong> (min ${percent(spread.min)}, max ${percent(spread.max)}, stdev ${percent(spread.stdev)})</span>` : null}
        <span>latency <strong>${secondsText(model.latency_s?.median)}</strong> median, ${secondsText(model.latency_s?.max)} max</span>
        <span><strong>${model.tokens_in}</strong> tokens in, <strong>${model.tokens_out}</strong> out</span><span>cost <strong>${model.cost ?? 0}</strong></span></p>
      ${Object.keys(model.expectations || {}).length ? html`<p class="eval-kinds" aria-label="Pass rate per expectation">${Object.entries(model.expectations).map(([name, kind]) => html`<span class="tag">${name} ${percent(kind.pass_rate)}</span>`)}</p>` : null}
    </section>`;
}

function Run({ api, route, navigate }) {
  const id = route.parts[0];
  const run = useLoad(() => api.get(`/v1/evals/${encodeURIComponent(id)}`), [id]);
  const runs = useLoad(() => api.get('/v1/evals'), []);
  const failedOnly = route.query.failed === '1';
  const [text, setText] = useState('');
  return html`
    <p><a href=${href('evals')}>← Evals</a></p>
    <${Loaded} state=${run}>${(data) => {
      const rows = caseRows(data);
      const shown = filterRows(rows, { failedOnly, text });
      const others = (runs.data?.items || []).filter((item) => !item.error && item.id !== id);
      return html`
        <h1>Run ${id}</h1>
        <dl class="facts"><dt>When</dt><dd><${Time} value=${data.created} /></dd><dt>Sets</dt><dd>${data.summary.sets.join(', ')}</dd>
          <dt>Repeat</dt><dd>${data.repeat}</dd>${data.judge ? html`<dt>Judge</dt><dd>${data.judge}</dd>` : null}</dl>
        ${Object.entries(data.models).map(([label, model]) => html`<${ModelSummary} label=${label} model=${model} />`)}
        <form class="toolbar" aria-label="Which cases" onSubmit=${(event) => event.preventDefault()}>
          <label class="check-label"><input type="checkbox" checked=${failedOnly} onChange=${(event) => navigate(href('evals', id, { failed: event.target.checked ? '1' : '' }))} /> Failed only</label>
          <label>Case or model <input value=${text} onInput=${(event) => setText(event.target.value)} /></label>
          ${others.length ? html`<label>Compare with <select onChange=${(event) => event.target.value && navigate(href('evals', id, 'compare', { baseline: event.target.value }))}>
            <option value="">a baseline run…</option>${others.map((item) => html`<option value=${item.id}>${item.id}</option>`)}</select></label>` : null}
          <span role="status">${shown.length} of ${rows.length} cases shown · ${rows.filter((row) => row.failed).length} failed</span>
        </form>
        ${shown.length ? html`<ul class="cards" aria-label="Cases">${shown.map((row) => html`<${Case} row=${row} />`)}</ul>` : html`<p class="empty">No case to show.</p>`}`;
    }}<//>`;
}

function Compare({ api, route, navigate }) {
  const id = route.parts[0];
  const baseline = route.query.baseline || '';
  const runs = useLoad(() => api.get('/v1/evals'), []);
  const found = useLoad(() => (baseline ? api.get(`/v1/evals/${encodeURIComponent(id)}/compare?baseline=${encodeURIComponent(baseline)}`) : null), [id, baseline]);
  const others = (runs.data?.items || []).filter((item) => !item.error && item.id !== id);
  return html`
    <p><a href=${href('evals')}>← Evals</a> · <a href=${href('evals', id)}>Run ${id}</a></p>
    <h1>Run ${id} against a baseline</h1>
    <form class="toolbar" aria-label="Baseline" onSubmit=${(event) => event.preventDefault()}>
      <label>Baseline run <select value=${baseline} onChange=${(event) => navigate(href('evals', id, 'compare', { baseline: event.target.value }))}>
        <option value="">pick a run…</option>${others.map((item) => html`<option value=${item.id}>${item.id}</option>`)}</select></label>
    </form>
    ${!baseline ? html`<p class="empty">Pick the run to compare with.</p>` : html`<${Loaded} state=${found}>${(data) => data && html`
      <p class="totals" aria-label="Counts"><span class="eval-regressed"><strong>${data.counts.regressed}</strong> regressed</span>
        <span class="eval-improved"><strong>${data.counts.improved}</strong> improved</span>
        <span><strong>${data.counts.unchanged}</strong> unchanged</span></p>
      <div class="scroll"><table class="compare"><caption>Cases, <a href=${href('evals', baseline)}>${baseline}</a> → ${id}</caption>
        <thead><tr><th scope="col">Case</th><th scope="col">Model</th><th scope="col">Baseline</th><th scope="col">This run</th><th scope="col">Change</th></tr></thead>
        <tbody>${comparedRows(data).map((row) => html`<tr class=${`change-${row.change}`} data-case=${row.case}>
          <th scope="row">${row.case}</th><td>${row.model}</td><td>${percent(row.before)}</td><td>${percent(row.after)}</td><td>${row.change}</td></tr>`)}</tbody></table></div>
      ${data.notes.length ? html`<h2>Notes</h2><ul class="compact-list">${data.notes.map((note) => html`<li>${note}</li>`)}</ul>` : null}`}<//>`}`;
}

export default function Evals({ api, route, navigate, setTitle }) {
  const [id, view] = route.parts;
  setTitle(id ? `Run ${id}` : 'Evals');
  if (!id) return html`<${Runs} api=${api} navigate=${navigate} />`;
  if (view === 'compare') return html`<${Compare} api=${api} route=${route} navigate=${navigate} />`;
  if (view) return html`<${ErrorLine} error=${{ message: `No view “${view}” of a run.` }} />`;
  return html`<${Run} api=${api} route=${route} navigate=${navigate} />`;
}
