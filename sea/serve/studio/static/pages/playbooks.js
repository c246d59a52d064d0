// Playbooks: the server's library (its --playbooks directories, then the bundled ones) with
// each playbook's check, and the chosen one drawn left to right with its diagnostics on
// its nodes. `#/playbooks/<name>` opens the editor.

import { html, useEffect } from '../vendor/htm-preact-standalone.mjs';
import { href } from '../route.js';
import { GraphView } from '../graphview.js';
import { modelFromGraph } from '../graph.js';
import { diagnosticBadges, diagnosticMarks, withMissing } from '../editing.js';
import { Loaded, useLoad } from '../ui.js';
import Editor from './editor.js';

function Counts({ errors, warnings }) {
  return html`
    ${errors ? html`<span class="badge diag-error">${errors} error${errors > 1 ? 's' : ''}</span>` : null}
    ${warnings ? html`<span class="badge diag-warning">${warnings} warning${warnings > 1 ? 's' : ''}</span>` : null}
    ${!errors && !warnings ? html`<span class="badge diag-ok">valid</span>` : null}`;
}

export function Diagnostics({ items, onPick, label = 'Diagnostics' }) {
  if (!items.length) return html`<p class="muted" role="status">No diagnostics.</p>`;
  return html`
    <ul class="diagnostics" aria-label=${label}>
      ${items.map((d, index) => html`
        <li key=${index} class=${`diagnostic ${d.severity}`} data-code=${d.code}>
          ${onPick ? html`<button type="button" class="link" onClick=${() => onPick(d)}
              aria-label=${d.line ? `Go to line ${d.line}:${d.column || 1}` : `Go to node ${d.node_id || ''}`}>
              ${d.line ? `${d.line}:${d.column || 1}` : '—'}</button>` : html`<span>${d.line ? `${d.line}:${d.column || 1}` : ''}</span>`}
          ${' '}<code>${d.code}</code> <span class="sev">${d.severity}</span>
          ${d.node_id ? html` <span class="muted">node ${d.node_id}</span>` : null}
          <div class="message">${d.message}</div>
          ${d.hint ? html`<div class="hint">${d.hint}</div>` : null}
        </li>`)}
    </ul>`;
}

function Drawing({ api, name }) {
  const graph = useLoad(() => api.get(`/v1/playbooks/${encodeURIComponent(name)}/graph`), [name]);
  return html`
    <section class="card drawing" aria-labelledby="drawing-title">
      <h2 id="drawing-title">${name} <a class="small" href=${href('playbooks', name)}>Edit</a></h2>
      <${Loaded} state=${graph}>${(data) => html`
          ${data.description ? html`<p>${data.description}</p>` : null}
          <${GraphView} model=${withMissing(modelFromGraph(data))} marks=${diagnosticMarks(data.diagnostics)}
            badges=${diagnosticBadges(data.diagnostics)} label=${`Graph of ${name}`} />
          <${Diagnostics} items=${data.diagnostics} />`}<//>
    </section>`;
}

function Library({ api, route, navigate, setTitle }) {
  useEffect(() => setTitle('Playbooks'), []);
  const list = useLoad(() => api.get('/v1/playbooks'), []);
  const shown = route.query.show || null;
  return html`
    <h1>Playbooks</h1>
    <div class="library">
      <${Loaded} state=${list}>${(data) => html`
        <table class="compact playbooks">
          <caption>The server's playbooks (its directories first, then the bundled ones)</caption>
          <thead><tr><th scope="col">Playbook</th><th scope="col">Source</th><th scope="col">Check</th><th scope="col">Router</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
          <tbody>${data.items.map((item) => html`
            <tr key=${item.name} data-playbook=${item.name} class=${item.name === shown ? 'chosen' : ''}>
              <th scope="row"><button type="button" class="link" aria-pressed=${item.name === shown ? 'true' : 'false'}
                  onClick=${() => navigate(href('playbooks', { show: item.name }))}>${item.name}</button>
                ${item.description ? html`<div class="muted small">${item.description}</div>` : null}</th>
              <td><span class=${`badge source-${item.source}`}>${item.source === 'bundled' ? 'bundled' : 'server'}</span></td>
              <td><${Counts} errors=${item.errors} warnings=${item.warnings} /></td>
              <td>${item.router_callable ? html`<span class="badge router" title="the router may choose it">router-callable</span>` : html`<span class="muted">—</span>`}</td>
              <td><a href=${href('playbooks', item.name)} aria-label=${`Edit ${item.name}`}>Edit</a></td>
            </tr>`)}</tbody>
        </table>`}<//>
      ${shown ? html`<${Drawing} api=${api} name=${shown} />` : html`<p class="muted">Choose a playbook to draw it.</p>`}
    </div>`;
}

export default function Playbooks(props) {
  const name = props.route.parts[0];
  if (name) return html`<${Editor} key=${name} ...${props} name=${name} />`;
  return html`<${Library} ...${props} />`;
}
