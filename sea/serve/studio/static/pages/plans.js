// Plan review: `#/plans/<persona>/<plan>` — the plan's header (title, status, risk), its
// specs (op, path, risk, summary) each with its unified diff line by line (from the plan's
// preview), a selection to approve (selected, all) or the plan sent back with a reason, and
// its audit trail (approvals, results, events). `#/plans/<persona>` lists the plans.

import { html, useState } from '../vendor/htm-preact-standalone.mjs';
import { KIND_LABEL, diffLines } from '../diff.js';
import { href } from '../route.js';
import { ErrorLine, Loaded, Status, Time, useLoad } from '../ui.js';

function Diff({ diff }) {
  if (!diff || !diff.diff) return html`<p class="muted">No change to a file.</p>`;
  const lines = diffLines(diff.diff);
  return html`
    <table class="diff" aria-label=${`Diff of ${diff.path}: ${diff.added} added, ${diff.removed} removed`}>
      <tbody>${lines.map((line) => html`
        <tr class=${`diff-${line.kind}`} data-kind=${line.kind}>
          <td class="ln" aria-hidden="true">${line.old ?? ''}</td><td class="ln" aria-hidden="true">${line.new ?? ''}</td>
          <td class="code"><span class="sr-only">${KIND_LABEL[line.kind]}: </span><code>${line.text}</code></td></tr>`)}
      </tbody></table>
    ${diff.truncated ? html`<p class="muted">The diff was cut.</p>` : null}`;
}

function selectionText(selection) {
  if (!selection) return '—';
  if (selection.all) return 'all';
  return `specs ${(selection.ids || []).join(', ')}`;
}

function Trail({ state }) {
  return html`
    <section aria-labelledby="trail-title" class="card">
      <h2 id="trail-title">Audit trail</h2>
      <table class="compact"><caption>Approvals</caption>
        <thead><tr><th scope="col">Approver</th><th scope="col">When</th><th scope="col">Selection</th><th scope="col">Actor</th></tr></thead>
        <tbody>${state.approvals.length ? state.approvals.map((approval) => html`
          <tr class="approval-row"><td>${approval.approver}</td><td><${Time} value=${approval.timestamp} /></td>
            <td data-selection=${JSON.stringify(approval.selection)}>${selectionText(approval.selection)}</td><td>${approval.actor}</td></tr>`)
          : html`<tr><td colspan="4" class="muted">None yet.</td></tr>`}</tbody></table>
      ${state.results.length ? html`<table class="compact"><caption>Results</caption>
        <thead><tr><th scope="col">Spec</th><th scope="col">Path</th><th scope="col">Outcome</th><th scope="col">Message</th></tr></thead>
        <tbody>${state.results.map((result) => html`<tr><td>${result.spec_id}</td><td><code>${result.path}</code></td>
          <td><${Status} value=${result.ok ? 'done' : 'failed'} /></td><td>${result.message}</td></tr>`)}</tbody></table>` : null}
      <table class="compact"><caption>Events</caption>
        <thead><tr><th scope="col">When</th><th scope="col">Event</th><th scope="col">Actor</th><th scope="col">Status</th><th scope="col">Reason</th></tr></thead>
        <tbody>${state.history.map((entry) => html`<tr><td><${Time} value=${entry.at} /></td><td>${entry.kind}</td>
          <td>${entry.actor}</td><td><${Status} value=${entry.status} /></td><td>${entry.reason}</td></tr>`)}</tbody></table>
    </section>`;
}

/** What a pulse waiting for this plan's approval is answered: the specs chosen (all, some
 * or none) as SEA's answer (`true`, `{"ids": [...]}`, `false`) with the reason. */
export function pulseAnswer(choice, ids, reason) {
  if (choice === 'none') return { answer: false, reason };
  if (choice === 'all') return { answer: true, reason };
  return { answer: { ids }, reason };
}

function Review({ api, persona, plan, preview, reload, waiting }) {
  const specs = plan.state.action_specs;
  const diffs = Object.fromEntries((preview?.diffs || []).map((diff) => [diff.spec_id, diff]));
  const [chosen, setChosen] = useState(() => new Set());
  const [reason, setReason] = useState('');
  const [outcome, setOutcome] = useState(null);
  const [error, setError] = useState(null);
  const base = `/v1/personas/${encodeURIComponent(persona)}/plans/${encodeURIComponent(plan.id)}`;
  const toggle = (id) => setChosen((old) => { const next = new Set(old); if (next.has(id)) next.delete(id); else next.add(id); return next; });
  const send = async (action, body, choice) => {
    setError(null);
    try {
      if (waiting) { // the pulse asked: answering it is what approves (the gate records it)
        await api.post(`/v1/pulses/${encodeURIComponent(waiting.pulse_id)}/resume`, pulseAnswer(choice, body.ids, reason));
        setOutcome({ action: 'resume', choice });
      } else {
        setOutcome({ action, ...(await api.post(`${base}/${action}`, body)) });
      }
      reload();
    } catch (failure) { setError(failure); }
  };
  const ids = specs.map((spec) => spec.id).filter((id) => chosen.has(id));
  const request = preview?.request_id || undefined;
  const open = ['pending_review', 'proposed'].includes(plan.state.status);
  return html`
    <header class="plan-head">
      <h1>${plan.title || plan.id}</h1>
      <p><${Status} value=${plan.state.status} /> · risk score <strong data-risk-score>${(preview?.risk_score ?? plan.state.previews?.risk_score ?? 0).toFixed(2)}</strong>
        · ${specs.length} spec(s) · persona <a href=${href('plans', persona)}>${persona}</a> · created <${Time} value=${plan.created_at} /></p>
      ${plan.content ? html`<p>${plan.content}</p>` : null}
    </header>
    ${waiting ? html`<p class="card banner" role="note">Pulse <a href=${href('pulses', waiting.pulse_id)}>${waiting.pulse_id.slice(0, 8)}</a> waits for this plan's approval at ${waiting.playbook}.${waiting.node}: deciding here answers it.</p>` : null}
    <table class="specs"><caption>Specs</caption>
      <thead><tr><th scope="col">Select</th><th scope="col">Spec</th><th scope="col">Op</th><th scope="col">Path</th><th scope="col">Risk</th><th scope="col">Summary</th></tr></thead>
      <tbody>${specs.map((spec) => html`
        <tr data-spec=${spec.id}>
          <td><input type="checkbox" id=${`pick-${spec.id}`} checked=${chosen.has(spec.id)} onChange=${() => toggle(spec.id)}
                     aria-label=${`Select spec ${spec.id} (${spec.base.kind} ${spec.base.path})`} /></td>
          <td>${spec.id}</td><td>${spec.base.kind}</td><td><code>${spec.base.path}</code></td>
          <td><span class=${`risk risk-${spec.risk}`}>${spec.risk}</span></td>
          <td>${spec.preflight?.diff_summary || spec.base.description || ''}</td></tr>`)}
      </tbody></table>
    <div class="card decide" role="group" aria-label="Decision">
      <label>Reason <textarea rows="2" value=${reason} onInput=${(event) => setReason(event.target.value)}></textarea></label>
      <div class="actions">
        <button type="button" disabled=${!open || !ids.length} onClick=${() => send('approve', { ids, request_id: request, reason }, 'some')}>Approve selected (${ids.length})</button>
        <button type="button" class="secondary" disabled=${!open} onClick=${() => send('approve', { request_id: request, reason }, 'all')}>Approve all</button>
        <button type="button" class="danger" disabled=${!open} onClick=${() => send('reject', { reason }, 'none')}>Approve none (send back)</button>
      </div>
      <${ErrorLine} error=${error} />
      ${outcome ? html`<p role="status" class="outcome">${outcome.action === 'approve'
        ? `Approved by ${outcome.approver}: ${selectionText(outcome.selection)}; the plan is ${outcome.status}.`
        : outcome.action === 'resume' ? `Answered the waiting pulse (${outcome.choice === 'some' ? `specs ${ids.join(', ')}` : outcome.choice}); it goes on.`
          : `Sent back; the plan is ${outcome.status}.`}</p>` : null}
    </div>
    <section aria-labelledby="diffs-title">
      <h2 id="diffs-title">Changes</h2>
      ${specs.map((spec) => html`
        <article class="card spec-diff" data-spec=${spec.id} aria-labelledby=${`diff-${spec.id}`}>
          <h3 id=${`diff-${spec.id}`}>Spec ${spec.id}: ${spec.base.kind} <code>${spec.base.path}</code> <span class=${`risk risk-${spec.risk}`}>${spec.risk}</span></h3>
          <${Diff} diff=${diffs[spec.id]} />
        </article>`)}
    </section>
    <${Trail} state=${plan.state} />`;
}

function PlanPage({ api, persona, planId }) {
  const base = `/v1/personas/${encodeURIComponent(persona)}/plans/${encodeURIComponent(planId)}`;
  const plan = useLoad(() => api.get(base), [persona, planId]);
  const preview = useLoad(() => api.post(`${base}/preview`, {}).catch((error) => ({ error })), [persona, planId]);
  const inbox = useLoad(() => api.get(`/v1/approvals?persona=${encodeURIComponent(persona)}`).catch(() => ({ items: [] })), [persona, planId, plan.data?.version]);
  const waiting = (inbox.data?.items || []).find((item) => item.kind === 'plan' && item.request?.plan_id === planId) || null;
  return html`<${Loaded} state=${plan}>${(data) => html`
    ${preview.data?.error ? html`<${ErrorLine} error=${preview.data.error} />` : null}
    ${preview.loading && !preview.data ? html`<p role="status" class="loading">Previewing…</p>` : null}
    <${Review} key=${data.id} api=${api} persona=${persona} plan=${data} preview=${preview.data?.error ? null : preview.data}
      waiting=${waiting} reload=${() => { plan.reload(); inbox.reload(); }} />`}<//>`;
}

function PlanList({ api, persona }) {
  const plans = useLoad(() => api.get(`/v1/personas/${encodeURIComponent(persona)}/plans`), [persona]);
  return html`<h1>Plans of ${persona}</h1>
    <${Loaded} state=${plans}>${(data) => data.items.length ? html`
      <table><caption>Plans, newest first</caption>
        <thead><tr><th scope="col">Plan</th><th scope="col">Status</th><th scope="col">Specs</th><th scope="col">Created</th></tr></thead>
        <tbody>${data.items.map((plan) => html`<tr><td><a href=${href('plans', persona, plan.id)}>${plan.title || plan.id}</a>${plan.current ? ' (current)' : ''}</td>
          <td><${Status} value=${plan.status} /></td><td>${plan.specs}</td><td><${Time} value=${plan.created_at} /></td></tr>`)}</tbody></table>`
      : html`<p class="empty">No plan yet.</p>`}<//>`;
}

export default function Plans({ api, route, setTitle }) {
  const [persona, planId] = route.parts;
  setTitle(planId ? 'Plan review' : 'Plans');
  if (!persona) return html`<h1>Plans</h1><p>Open a persona's plans from <a href="#/personas">Personas</a>.</p>`;
  if (!planId) return html`<${PlanList} api=${api} persona=${persona} />`;
  return html`<${PlanPage} api=${api} persona=${persona} planId=${planId} />`;
}
