// The approvals inbox: everything waiting that this key may answer, kept live by
// /v1/approvals/stream; a card per request kind; Approve / Deny with a reason; the decision
// the server recorded (approver, time, selection) and how the pulse ended, shown after.

import { html, useEffect, useState } from '../vendor/htm-preact-standalone.mjs';
import { follow, dataOf } from '../sse.js';
import { href } from '../route.js';
import { ErrorLine, Fold, Status, Time } from '../ui.js';

const KIND_TITLE = { tool: 'Gated tool', actions: 'Actions plan', exec: 'Run a playbook', plan: 'Plan' };

function Request({ item }) {
  const request = item.request || {};
  if (item.kind === 'tool') {
    return html`<dl class="facts">
      <dt>Tool</dt><dd><code>${request.tool}</code></dd>
      <dt>Arguments</dt><dd><${Fold} value=${request.args || {}} label="arguments" /></dd></dl>`;
  }
  if (item.kind === 'actions') {
    const planned = Array.isArray(request.plan) ? request.plan : request.plan?.actions || [];
    return html`${request.plan?.reason ? html`<p>${request.plan.reason}</p>` : null}
      <p>Asks before: ${(request.tools || []).map((tool) => html`<code>${tool}</code> `)}</p>
      <ol class="planned" aria-label="Planned actions">${planned.map((step) => html`
      <li><code>${step.tool || step.name}</code> <${Fold} value=${step.parameters || step.args || {}} label="parameters" /></li>`)}</ol>`;
  }
  if (item.kind === 'exec') {
    return html`<dl class="facts"><dt>Playbook</dt><dd><code>${request.playbook_name}</code></dd></dl>`;
  }
  const plan = request.plan_id;
  return html`
    <p>${request.title || plan} — ${(request.specs || []).length} spec(s)${request.preview?.risk_score !== undefined ? `, risk ${request.preview.risk_score}` : ''}</p>
    <ul class="compact-list">${(request.specs || []).map((spec) => html`
      <li>${spec.id}: ${spec.kind || spec.op} <code>${spec.path}</code> <span class=${`risk risk-${spec.risk}`}>${spec.risk}</span></li>`)}</ul>
    ${plan ? html`<p><a href=${href('plans', item.persona, plan)}>Review the plan ${plan}</a> (approve all, some or none there)</p>` : null}`;
}

function Card({ api, item, onDecided }) {
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const id = `req-${item.interrupt_id}`;
  const answer = async (approved) => {
    setBusy(true); setError(null);
    try {
      await api.post(`/v1/pulses/${encodeURIComponent(item.pulse_id)}/resume`, { answer: approved, reason });
      onDecided(item, approved);
    } catch (failure) { setError(failure); setBusy(false); }
  };
  return html`
    <li class="card approval" data-pulse=${item.pulse_id} aria-labelledby=${id}>
      <h2 id=${id}>${KIND_TITLE[item.kind] || item.kind}: ${item.playbook}.${item.node}</h2>
      <p class="muted">Persona <strong>${item.persona}</strong> · pulse <a href=${href('pulses', item.pulse_id)}>${item.pulse_id.slice(0, 8)}</a> · waiting since <${Time} value=${item.waiting_since} /></p>
      <${Request} item=${item} />
      <label>Reason (optional) <textarea rows="2" value=${reason} onInput=${(event) => setReason(event.target.value)}></textarea></label>
      <${ErrorLine} error=${error} />
      <div class="actions">
        <button type="button" disabled=${busy} onClick=${() => answer(true)}>Approve</button>
        <button type="button" class="danger" disabled=${busy} onClick=${() => answer(false)}>Deny</button>
      </div>
    </li>`;
}

function selectionOf(answer) {
  if (!answer || typeof answer !== 'object') return String(answer);
  if (Array.isArray(answer.ids)) return `specs ${answer.ids.join(', ')}`;
  if (answer.up_to) return `up to ${answer.up_to} risk`;
  return answer.approved ? 'all' : 'none';
}

function Decided({ api, decided }) {
  const [state, setState] = useState({ pulse: null, ended: null, error: null });
  useEffect(() => {
    const stop = new AbortController();
    let ended = null;
    follow(api, `/v1/pulses/${encodeURIComponent(decided.pulse_id)}/events`, {
      signal: stop.signal,
      onEvent: (message) => { if (message.event === 'end') ended = dataOf(message); },
    }).then(() => api.get(`/v1/pulses/${encodeURIComponent(decided.pulse_id)}`))
      .then((pulse) => setState({ pulse, ended, error: null }))
      .catch((error) => { if (!stop.signal.aborted) setState({ pulse: null, ended, error }); });
    return () => stop.abort();
  }, [decided.pulse_id]);
  const decision = state.pulse ? state.pulse.decisions[state.pulse.decisions.length - 1] : null;
  const answer = decision?.answer;
  return html`
    <li class="card decided" data-pulse=${decided.pulse_id}>
      <h3>${decided.approved ? 'Approved' : 'Denied'}: ${decided.playbook}.${decided.node}</h3>
      <${ErrorLine} error=${state.error} />
      ${decision ? html`<dl class="facts">
        <dt>Approver</dt><dd>${answer?.approver}</dd>
        <dt>When</dt><dd><${Time} value=${decision.at} /></dd>
        <dt>Selection</dt><dd>${selectionOf(answer)}</dd>
        ${answer?.reason ? html`<dt>Reason</dt><dd>${answer.reason}</dd>` : null}
        <dt>Pulse</dt><dd><a href=${href('pulses', decided.pulse_id)}>${decided.pulse_id.slice(0, 8)}</a> ended <${Status} value=${state.ended?.status || state.pulse.pulse_status} /></dd>
      </dl>` : html`<p role="status" class="loading">Waiting for the pulse to go on…</p>`}
    </li>`;
}

export default function Approvals({ api, setTitle, route }) {
  setTitle('Approvals');
  const [items, setItems] = useState(null);
  const [link, setLink] = useState('connecting');
  const [error, setError] = useState(null);
  const [decided, setDecided] = useState([]);
  const persona = route.query.persona || '';
  useEffect(() => {
    const stop = new AbortController();
    const query = persona ? `?persona=${encodeURIComponent(persona)}` : '';
    api.get(`/v1/approvals${query}`).then((data) => setItems((old) => old || data.items)).catch(setError);
    follow(api, `/v1/approvals/stream${query}`, {
      signal: stop.signal, isEnd: () => false, onState: setLink,
      onEvent: (message) => { if (message.event === 'inbox') setItems(dataOf(message).items); },
    }).catch((failure) => { if (!stop.signal.aborted) setError(failure); });
    return () => stop.abort();
  }, [persona]);
  const onDecided = (item, approved) => {
    setItems((old) => (old || []).filter((other) => other.interrupt_id !== item.interrupt_id));
    setDecided((old) => [{ ...item, approved }, ...old.filter((other) => other.pulse_id !== item.pulse_id)]);
  };
  return html`
    <h1>Approvals</h1>
    <p class="muted">Everything waiting for an answer this key may give, newest first.
      <span class=${`live live-${link}`} role="status">${link === 'open' ? 'Live' : link}</span></p>
    <${ErrorLine} error=${error} />
    ${items === null ? html`<p role="status" class="loading">Loading…</p>`
      : items.length ? html`<ul class="cards" aria-label="Waiting requests">${items.map((item) => html`
          <${Card} key=${item.interrupt_id} api=${api} item=${item} onDecided=${onDecided} />`)}</ul>`
        : html`<p class="empty">Nothing is waiting.</p>`}
    ${decided.length ? html`<section aria-labelledby="decided-title"><h2 id="decided-title">Decided here</h2>
      <ul class="cards" aria-label="Decisions">${decided.map((item) => html`<${Decided} key=${item.pulse_id + item.interrupt_id} api=${api} decided=${item} />`)}</ul></section>` : null}`;
}
