// Stats: `#/stats` — calls, tokens, cost and time per node, model and tool (GET /v1/stats,
// `sea stats --json`), as bar charts of our own, each with its numbers as a table for
// screen readers (and for anyone who wants the figures).

import { html, useState } from '../vendor/htm-preact-standalone.mjs';
import { bars, shortNumber } from '../chart.js';
import { Loaded, useLoad } from '../ui.js';

const MEASURES = [
  { id: 'calls', title: 'Calls', value: (row) => row.calls },
  { id: 'tokens', title: 'Tokens (in + out)', value: (row) => (row.tokens_in || 0) + (row.tokens_out || 0) },
  { id: 'cost', title: 'Cost', value: (row) => row.cost },
  { id: 'latency', title: 'Time per call, median (s)', value: (row) => row.latency_p50_s },
];
const LABEL = 150;
const SPAN = 300;
const ROW = 22;

function Chart({ title, rows, measure, id }) {
  const drawn = bars(rows, measure.value, { span: SPAN, rowHeight: ROW });
  const height = Math.max(ROW, drawn.length * ROW);
  return html`
    <figure class="chart" aria-labelledby=${`${id}-title`}>
      <figcaption id=${`${id}-title`}><strong>${title}</strong>: ${measure.title.toLowerCase()}</figcaption>
      ${drawn.length ? html`
        <svg viewBox=${`0 0 ${LABEL + SPAN + 70} ${height}`} role="img" aria-label=${`${title}, ${measure.title}: bar chart; the figures are in the table below`}>
          ${drawn.map((bar) => html`<g data-key=${bar.key}>
            <text x=${LABEL - 6} y=${bar.y + 15} text-anchor="end">${bar.key.length > 28 ? `${bar.key.slice(0, 27)}…` : bar.key}</text>
            <rect class="bar" x=${LABEL} y=${bar.y + 4} width=${Math.max(bar.width, bar.value > 0 ? 1 : 0)} height=${ROW - 8} />
            <text class="value" x=${LABEL + bar.width + 6} y=${bar.y + 15}>${shortNumber(bar.value)}</text></g>`)}
        </svg>` : html`<p class="empty">No call yet.</p>`}
      <details><summary>Figures of ${title.toLowerCase()}</summary>
        <div class="scroll"><table class="compact"><caption>${title}</caption>
          <thead><tr><th scope="col">Key</th><th scope="col">Calls</th><th scope="col">Failures</th><th scope="col">Tokens in</th>
            <th scope="col">Tokens out</th><th scope="col">Cost</th><th scope="col">Median s</th><th scope="col">p95 s</th></tr></thead>
          <tbody>${rows.map((row) => html`<tr><th scope="row">${row.key}</th><td>${row.calls}</td><td>${row.failures}</td>
            <td>${row.tokens_in}</td><td>${row.tokens_out}</td><td>${shortNumber(row.cost)}</td>
            <td>${shortNumber(row.latency_p50_s)}</td><td>${shortNumber(row.latency_p95_s)}</td></tr>`)}</tbody></table></div>
      </details>
    </figure>`;
}

export default function Stats({ api, setTitle }) {
  setTitle('Stats');
  const [form, setForm] = useState({ persona: '', since: '', measure: 'calls' });
  const [query, setQuery] = useState({ persona: '', since: '' });
  const stats = useLoad(() => {
    const params = new URLSearchParams();
    if (query.persona) params.set('persona', query.persona);
    if (query.since) params.set('since', query.since);
    return api.get(`/v1/stats${params.toString() ? `?${params}` : ''}`);
  }, [query.persona, query.since]);
  const personas = useLoad(() => api.get('/v1/personas'), []);
  const measure = MEASURES.find((item) => item.id === form.measure);
  const submit = (event) => { event.preventDefault(); setQuery({ persona: form.persona, since: form.since }); };
  return html`
    <h1>Stats</h1>
    <form class="toolbar" onSubmit=${submit} aria-label="Which calls">
      <label>Persona <select value=${form.persona} onChange=${(event) => setForm({ ...form, persona: event.target.value })}>
        <option value="">every persona</option>
        ${(personas.data?.items || []).map((item) => html`<option value=${item.id}>${item.name} (${item.id})</option>`)}</select></label>
      <label>Since <input value=${form.since} placeholder="24h, 7d or an ISO time" onInput=${(event) => setForm({ ...form, since: event.target.value })} /></label>
      <button type="submit">Show</button>
      <span><label for="stats-measure">Chart</label> <select id="stats-measure" value=${form.measure} onChange=${(event) => setForm({ ...form, measure: event.target.value })}>
        ${MEASURES.map((item) => html`<option value=${item.id}>${item.title}</option>`)}</select></span>
    </form>
    <${Loaded} state=${stats}>${(data) => html`
      <p class="totals" aria-label="Totals">
        <span><strong>${data.calls}</strong> model calls</span><span><strong>${data.failures}</strong> failed</span>
        <span><strong>${data.retries}</strong> retries</span><span><strong>${data.tokens_in}</strong> tokens in</span>
        <span><strong>${data.tokens_out}</strong> tokens out</span><span>cost <strong>${shortNumber(data.cost)}</strong></span>
        <span>median <strong>${shortNumber(data.latency_p50_s)} s</strong></span></p>
      <div class="stat-grid">
        <${Chart} id="by-node" title="By node" rows=${data.by_node} measure=${measure} />
        <${Chart} id="by-model" title="By model" rows=${data.by_model} measure=${measure} />
        <${Chart} id="by-tool" title="By tool" rows=${data.tools} measure=${measure} />
        <${Chart} id="by-pattern" title="By prompt pattern" rows=${data.by_pattern} measure=${measure} />
      </div>`}<//>`;
}
