// Regression: `#/regression` — the recorded traces of the server's --traces directory,
// replayed one after the other against the playbooks as they are now; each row says
// matched, or diverged at step N with what was expected and what came instead.

import { html, useState } from '../vendor/htm-preact-standalone.mjs';
import { href } from '../route.js';
import { ErrorLine, Fold, Loaded, Status, Time, useLoad } from '../ui.js';

function Outcome({ result }) {
  if (!result) return html`<td class="muted">not replayed</td>`;
  if (result.running) return html`<td role="status">replaying…</td>`;
  if (result.error) return html`<td class="diverged"><${ErrorLine} error=${result.error} /></td>`;
  if (result.matched) return html`<td class="matched">matched <span class="muted">(${result.nodes} nodes, ${result.llm_calls} model calls)</span></td>`;
  const divergence = result.divergence || {};
  return html`<td class="diverged">
    diverged at step ${result.step}${divergence.playbook ? ` (${[divergence.playbook, divergence.node].filter(Boolean).join('.')})` : ''}: <code>${divergence.field}</code>
    <dl class="facts"><dt>Expected</dt><dd><${Fold} value=${divergence.expected} label="expected" /></dd>
      <dt>Actual</dt><dd><${Fold} value=${divergence.actual} label="actual" /></dd></dl>
    ${result.changed_playbooks?.length ? html`<p class="muted">Changed since the recording: ${result.changed_playbooks.join(', ')}</p>` : null}</td>`;
}

export default function Regression({ api, setTitle }) {
  setTitle('Regression');
  const traces = useLoad(() => api.get('/v1/regression'), []);
  const [results, setResults] = useState({});
  const [running, setRunning] = useState(false);
  const replay = async (names) => {
    setRunning(true);
    for (const name of names) {
      setResults((old) => ({ ...old, [name]: { running: true } }));
      let result;
      try { result = await api.post('/v1/regression/replay', { name }); } catch (error) { result = { error }; }
      setResults((old) => ({ ...old, [name]: result }));
    }
    setRunning(false);
  };
  const done = Object.values(results).filter((r) => !r.running);
  return html`
    <h1>Regression</h1>
    <p class="muted">Recorded traces replayed against the playbooks as they are now (models and tools answered from each trace).</p>
    <${Loaded} state=${traces}>${(data) => {
      const good = data.items.filter((item) => !item.error);
      return html`
        <div class="toolbar">
          <button type="button" disabled=${running || !good.length} onClick=${() => replay(good.map((item) => item.name))}>Replay all (${good.length})</button>
          <span role="status">${done.length ? `${done.filter((r) => r.matched).length} matched, ${done.filter((r) => r.matched === false || r.error).length} diverged or failed of ${done.length} replayed` : ''}</span>
        </div>
        ${data.items.length ? html`
          <table class="regression"><caption>Traces</caption>
            <thead><tr><th scope="col">Trace</th><th scope="col">Pulse</th><th scope="col">Recorded</th><th scope="col">Outcome</th><th scope="col"><span class="sr-only">Replay</span></th></tr></thead>
            <tbody>${data.items.map((item) => html`
              <tr data-trace=${item.name}>
                <th scope="row">${item.name}${item.error ? '' : html`<br /><span class="muted">${item.persona} · ${item.playbook} · <${Status} value=${item.status} /></span>`}</th>
                <td>${item.pulse_id ? html`<a href=${href('pulses', item.pulse_id)}>${item.pulse_id.slice(0, 8)}</a>` : ''}</td>
                <td>${item.recorded_at ? html`<${Time} value=${item.recorded_at} />` : ''}</td>
                ${item.error ? html`<td class="diverged">not a trace: ${item.error.message}</td>` : html`<${Outcome} result=${results[item.name]} />`}
                <td>${item.error ? '' : html`<button type="button" class="secondary" disabled=${running} aria-label=${`Replay ${item.name}`} onClick=${() => replay([item.name])}>Replay</button>`}</td>
              </tr>`)}</tbody></table>` : html`<p class="empty">The trace directory holds no trace (*.json).</p>`}`;
    }}<//>`;
}
