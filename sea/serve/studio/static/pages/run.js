// The run console (`#/run/<persona>?pulse=<id>`): a chat with a persona. The reply streams
// in; the running playbook's graph marks each node running, done or failed, its callees
// opened beside it; the events scroll in a side panel; the usage is counted; Stop cancels;
// an approval request is answered in place. The pulse's id is kept in the address, so a
// reload re-joins the run and follows its events from the start.

import { html, useEffect, useMemo, useRef, useState } from '../vendor/htm-preact-standalone.mjs';
import { GraphView } from '../graphview.js';
import { modelFromGraph, prefixModel } from '../graph.js';
import { href } from '../route.js';
import { dataOf, follow, parser } from '../sse.js';
import { KINDS, initial, reduce, settled, visible } from '../runstate.js';
import { ErrorLine, Fold, Status } from '../ui.js';

function useGraph(api, name, prefix) {
  const [model, setModel] = useState(null);
  useEffect(() => {
    if (!name) return undefined;
    let live = true;
    api.get(`/v1/playbooks/${encodeURIComponent(name)}/graph`).then((graph) => {
      if (!live) return;
      const drawn = modelFromGraph(graph);
      setModel(prefix ? prefixModel(drawn, name) : drawn);
    }).catch(() => live && setModel(null));
    return () => { live = false; };
  }, [name]);
  return model;
}

function Callee({ api, name, states }) {
  const model = useGraph(api, name, true);
  return html`<figure class="callee" data-callee=${name}><figcaption>${name}</figcaption>
    <${GraphView} model=${model} states=${states} label=${`Graph of ${name} (called)`} /></figure>`;
}

function LlmCall({ record }) {
  const parts = record.context || [];
  return html`
    <dl class="llm">
      <dt>Model</dt><dd>${record.model}${record.model_kind ? ` (${record.model_kind})` : ''}</dd>
      <dt>Tokens</dt><dd>${record.tokens_in} in, ${record.tokens_out} out</dd>
      <dt>Cost</dt><dd>${(record.cost || 0).toFixed(4)}</dd>
      <dt>Time</dt><dd>${(record.latency_s || 0).toFixed(2)} s</dd>
      ${record.pattern ? html`<dt>Pattern</dt><dd>${record.pattern}</dd>` : null}
    </dl>
    ${parts.length ? html`<table class="compact"><caption>Prompt parts</caption>
      <thead><tr><th scope="col">Part</th><th scope="col">Tokens</th></tr></thead>
      <tbody>${parts.map((part, index) => html`<tr key=${index}><td>${part.part || part.name || index}${part.detail ? html` <span class="muted">${part.detail}</span>` : null}</td><td>${part.tokens ?? ''}</td></tr>`)}</tbody></table>` : null}
    <${Fold} value=${record.messages} label="messages" />
    <${Fold} value=${record.response} label="answer" />`;
}

function Events({ events }) {
  const [filter, setFilter] = useState('');
  const shown = visible(events, filter);
  const list = useRef(null);
  useEffect(() => { if (list.current) list.current.scrollTop = list.current.scrollHeight; }, [events.length, filter]);
  return html`
    <section class="card events" aria-labelledby="events-title">
      <h2 id="events-title">Events</h2>
      <label>Kind <select value=${filter} onChange=${(event) => setFilter(event.target.value)}>
        <option value="">all</option>${KINDS.filter((kind) => kind !== 'token').map((kind) => html`<option key=${kind} value=${kind}>${kind}</option>`)}
      </select></label>
      <ol class="event-list" ref=${list} aria-label="Events of the pulse">
        ${shown.map((event) => html`<li key=${event.id} data-kind=${event.kind}>
          ${event.kind === 'llm_call' ? html`<details><summary><code>${event.kind}</code> ${event.summary}</summary><${LlmCall} record=${event.data.record || {}} /></details>`
            : html`<code>${event.kind}</code> ${event.summary}`}
        </li>`)}
      </ol>
    </section>`;
}

function Approval({ approval, onAnswer, busy }) {
  const request = approval.request || {};
  return html`
    <section class="card approval" role="region" aria-label="Approval request">
      <h2>Waiting for your approval</h2>
      <p>${request.message || request.question || `The pulse asks to run ${request.tool || request.kind || 'a step'}${approval.node ? ` at ${approval.node}` : ''}.`}</p>
      <${Fold} value=${request} label="request" />
      <p><button type="button" disabled=${busy} onClick=${() => onAnswer(true)}>Approve</button>
         <button type="button" class="danger" disabled=${busy} onClick=${() => onAnswer(false)}>Deny</button></p>
    </section>`;
}

/** Read a stream's response (the POST that started the pulse) until it ends: the last id. */
async function readStream(response, onEvent) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const events = parser();
  let last = null;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return { last, ended: false };
    for (const message of events.feed(decoder.decode(value, { stream: true }))) {
      if (message.id !== null) last = message.id;
      onEvent(message);
      if (message.event === 'end') return { last, ended: true };
    }
  }
}

/** " / N" after a figure whose bound the budget sets (nothing where there is none). */
function of(limits, name) {
  const bound = limits ? limits[name] : null;
  return bound === null || bound === undefined ? '' : html`<span class="bound" title=${`budget: ${name}`}> / ${bound}</span>`;
}

function Run({ api, route, setTitle }) {
  const persona = route.parts[0] || '';
  const [pulseId, setPulseId] = useState(route.query.pulse || null);
  const [state, setState] = useState(() => initial());
  const [turns, setTurns] = useState([]); // the finished turns of this page: {input, replies}
  const [input, setInput] = useState('');
  const [playbook, setPlaybook] = useState(route.query.playbook || '');
  const [books, setBooks] = useState([]);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const [limits, setLimits] = useState(null); // the pulse's budget and step bound
  const abort = useRef(null);
  const onEvent = (message) => setState((old) => reduce(old, { ...message, data: dataOf(message) }));

  useEffect(() => { setTitle(`Run ${persona}`); }, [persona]);
  useEffect(() => {
    api.get('/v1/playbooks').then((data) => setBooks(data.items.map((item) => item.name))).catch(() => {});
    return () => abort.current && abort.current.abort();
  }, []);

  const keep = (id) => {
    const fragment = href('run', persona, { pulse: id, playbook: playbook || undefined });
    history.replaceState(null, '', `${window.location.pathname}${window.location.search}${fragment}`);
  };
  const rejoin = async (id, start = null) => {
    abort.current && abort.current.abort();
    const controller = new AbortController();
    abort.current = controller;
    try {
      await follow(api, `/v1/pulses/${encodeURIComponent(id)}/events`, { onEvent, signal: controller.signal, start });
    } catch (failure) { if (!controller.signal.aborted) setError(failure); }
  };
  useEffect(() => {
    if (!pulseId || limits) return;
    api.get(`/v1/pulses/${encodeURIComponent(pulseId)}`)
      .then((pulse) => setLimits({ ...(pulse.budget || {}), max_steps: pulse.max_steps ?? null }))
      .catch(() => {});
  }, [pulseId]);
  // A pulse named in the address (a reload, a link): follow its events from the start.
  useEffect(() => { if (route.query.pulse) rejoin(route.query.pulse); }, []);

  const send = async (event) => {
    event.preventDefault();
    const text = input.trim();
    if (!text) return;
    if (state.pulseId && settled(state)) setTurns((old) => [...old, { input: state.input, replies: state.spoken }]);
    setError(null); setInput('');
    setState({ ...initial(), input: text, status: 'starting' });
    abort.current && abort.current.abort();
    const controller = new AbortController();
    abort.current = controller;
    let id = null;
    let lastSeen = null;
    try {
      const body = { input: text, ...(playbook ? { playbook } : {}) };
      const response = await api.raw(`/v1/personas/${encodeURIComponent(persona)}/pulses`, {
        method: 'POST', signal: controller.signal,
        headers: { accept: 'text/event-stream', 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (!response.ok) {
        const { errorOf } = await import('../api.js');
        const raw = await response.text();
        let parsed = raw; try { parsed = JSON.parse(raw); } catch { /* text */ }
        throw errorOf(response.status, parsed);
      }
      const seen = (message) => {
        if (message.id !== null) lastSeen = message.id;
        onEvent(message);
        const data = dataOf(message);
        if (!id && data && data.pulse_id) { id = data.pulse_id; setPulseId(id); keep(id); }
      };
      const { last, ended } = await readStream(response, seen);
      if (!ended && id && !controller.signal.aborted) await rejoin(id, last); // the stream dropped
    } catch (failure) {
      if (controller.signal.aborted) return;
      if (id) await rejoin(id, lastSeen); else { setError(failure); setState((old) => ({ ...old, status: 'idle' })); }
    }
  };
  const stop = async () => {
    if (!state.pulseId) return;
    try { await api.post(`/v1/pulses/${encodeURIComponent(state.pulseId)}/cancel`); } catch (failure) { setError(failure); }
  };
  const answer = async (approved) => {
    setBusy(true);
    try {
      await api.post(`/v1/pulses/${encodeURIComponent(state.pulseId)}/resume`, { answer: approved });
      setState((old) => ({ ...old, approval: null, status: 'running' }));
      setBusy(false);
      await rejoin(state.pulseId);
    } catch (failure) { setError(failure); setBusy(false); }
  };

  const main = useGraph(api, state.root, false);
  const running = !settled(state) && state.status !== 'idle';
  const usage = state.usage;
  const transcript = useMemo(() => turns, [turns]);
  return html`
    <h1>Run <span class="muted">${persona}</span></h1>
    <div class="run">
      <section class="card chat" aria-labelledby="chat-title">
        <h2 id="chat-title">Conversation</h2>
        <ol class="turns" aria-label="Messages" aria-live="polite">
          ${transcript.map((turn, index) => html`<li key=${index} class="turn">
            <p class="user">${turn.input}</p>${turn.replies.map((reply) => html`<p class="assistant">${reply}</p>`)}</li>`)}
          ${state.input || state.pulseId ? html`<li class="turn current">
            ${state.input ? html`<p class="user">${state.input}</p>` : null}
            ${state.spoken.map((reply, index) => html`<p key=${index} class="assistant" data-reply="spoken">${reply}</p>`)}
            ${state.streaming ? html`<p class="assistant streaming" data-reply="streaming">${state.streaming}</p>` : null}
          </li>` : null}
        </ol>
        ${state.approval && state.status === 'waiting' ? html`<${Approval} approval=${state.approval} onAnswer=${answer} busy=${busy} />` : null}
        <form class="ask" onSubmit=${send} aria-label="Message">
          <label>Playbook <select value=${playbook} onChange=${(event) => setPlaybook(event.target.value)}>
            <option value="">(the server's default)</option>
            ${books.map((name) => html`<option key=${name} value=${name}>${name}</option>`)}
          </select></label>
          <label>Message <textarea rows="2" value=${input} onInput=${(event) => setInput(event.target.value)}
            onKeyDown=${(event) => { if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) send(event); }}></textarea></label>
          <button type="submit" disabled=${running}>Send</button>
          <button type="button" class="danger" onClick=${stop} disabled=${!running || !state.pulseId}>Stop</button>
        </form>
        <${ErrorLine} error=${error} />
        ${state.error ? html`<${ErrorLine} error=${state.error} />` : null}
      </section>
      <section class="card run-graph" aria-labelledby="run-graph-title">
        <h2 id="run-graph-title">${state.root || 'Playbook'} <${Status} value=${state.status} />
          ${pulseId ? html` <span class="muted small">pulse <code>${pulseId.slice(0, 8)}</code></span>` : null}</h2>
        <p class="usage" aria-label="Usage">
          <span>Model calls <strong>${usage.calls}</strong>${of(limits, 'max_calls')}</span>
          <span>Tokens <strong>${usage.tokensIn}</strong>${of(limits, 'max_tokens_in')} in / <strong>${usage.tokensOut}</strong>${of(limits, 'max_tokens_out')} out</span>
          <span>Cost <strong>${usage.cost.toFixed(4)}</strong>${of(limits, 'max_cost')}</span>
          <span>Nodes run <strong>${usage.nodes}</strong>${of(limits, 'max_steps')}</span>
          <span>Tool calls <strong>${usage.tools}</strong></span>
          ${usage.seconds ? html`<span>Time <strong>${usage.seconds.toFixed(2)} s</strong></span>` : null}
        </p>
        <div class="graphs">
          ${main ? html`<${GraphView} model=${main} states=${state.states} label=${`Graph of ${state.root}`} />` : html`<p class="muted">The graph appears when a pulse starts.</p>`}
          ${state.callees.map((name) => html`<${Callee} key=${name} api=${api} name=${name} states=${state.states} />`)}
        </div>
      </section>
      <${Events} events=${state.events} />
    </div>`;
}

/** The page: one console per persona (another persona's address starts afresh). */
export default function RunPage(props) {
  return html`<${Run} key=${props.route.parts[0] || ''} ...${props} />`;
}
